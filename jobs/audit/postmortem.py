"""The post-mortem of a run: its `offline` windows (`partition_windows`), aggregated in
Spark, only the totals, the longest windows and the rollups collected.

The windows of a run are the ones it closed (they may have opened in an earlier run) and
the ones still open at its end. Each counts only its part inside the run's period, the one
`run_summary` records (`period_start`, `period_end`, jobs/engine/offline_rollup.py) and clipped by
the same expression (`in_period_us`): from the previous committed run's last event to this
run's, an open window up to that end. So the post-mortem's partition-seconds are the run
summary's, and the post-mortems of the nights add up to one replay of them. A run written
before `run_summary` kept its period counts whole windows, up to its last event.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.audit.extract import AuditInputs, RunBounds
from jobs.common.instants import instant, micros
from jobs.engine.offline_rollup import NO_BROKER, in_period_us
from jobs.store.tables import read_table_or_empty


class OfflineWindow(NamedTuple):
    topic: str
    partition: int
    start_ts: datetime | None
    end_ts: datetime | None  # None: still offline at the end of the run
    seconds: float
    cause_event: str | None
    cause_broker: int | None


class Rollup(NamedTuple):
    """Offline windows grouped by one key (a cause broker, a topic)."""

    key: str
    windows: int
    partitions: int
    seconds: float


class Period(NamedTuple):
    """The part of the log one run covers for one cluster, in microseconds."""

    start_us: int | None  # None: the log's start
    end_us: int


class ClusterPostMortem(NamedTuple):
    cluster: str
    partitions: int  # distinct partitions that were offline
    windows: int
    still_offline: int  # windows open at the end
    seconds: float  # partition-seconds offline inside the run's period
    period_start: datetime | None  # None: the log's start
    period_end: datetime
    longest: list[OfflineWindow]
    by_cause_broker: list[Rollup]
    by_topic: list[Rollup]


def run_periods(spark: SparkSession, tables_dir: str, run_id: str,
                bounds: dict[str, RunBounds]) -> dict[str, Period]:
    """Each cluster's period as the run's `run_summary` rows recorded it; without one (a
    run written before they did), the log's start to the run's last event."""
    recorded = {r["cluster"]: r for r in read_table_or_empty(spark, tables_dir, "run_summary")
                .where((F.col("run_id") == run_id) & F.col("period_end").isNotNull())
                .select("cluster", F.unix_micros("period_start").alias("start"),
                        F.unix_micros("period_end").alias("end")).collect()}
    periods = {c: Period(None, micros(b.last_ts)) for c, b in bounds.items()}
    periods.update({c: Period(r["start"], r["end"]) for c, r in recorded.items()})
    return periods


def offline_windows(spark: SparkSession, inputs: AuditInputs,
                    periods: dict[str, Period]) -> DataFrame:
    """The run's offline windows with `us`, their microseconds inside the run's period,
    and `duration`, the same in seconds."""
    frame = spark.createDataFrame(
        [(c, p.start_us, p.end_us) for c, p in sorted(periods.items())] or [("", None, 0)],
        "cluster string, period_start long, period_end long")
    windows = inputs.windows.where(F.col("kind") == "offline").join(
        F.broadcast(frame), "cluster", "left")
    us = F.coalesce(in_period_us(F.unix_micros("start_ts"), F.unix_micros("end_ts"),
                                 F.col("period_start"), F.col("period_end")), F.lit(0))
    return windows.withColumn("us", us).withColumn("duration", us / F.lit(1_000_000.0))


def _rollup(windows: DataFrame, key: str, top: int) -> dict[str, list[Rollup]]:
    rows = windows.groupBy("cluster", key).agg(
        F.count(F.lit(1)).alias("windows"),
        F.countDistinct("topic", "partition").alias("partitions"),
        F.sum("duration").alias("seconds"),
    ).orderBy(F.col("seconds").desc(), F.col(key)).collect()
    out: dict[str, list[Rollup]] = {}
    for r in rows:
        listed = out.setdefault(r["cluster"], [])
        if len(listed) < top:
            # As run_summary's offline_seconds_by_cause_broker names it.
            label = NO_BROKER if r[key] is None else str(r[key])
            listed.append(Rollup(label, r["windows"], r["partitions"], float(r["seconds"])))
    return out


def _utc(value: datetime | None) -> datetime | None:
    return value.astimezone(UTC) if value is not None else None


def _longest(windows: DataFrame, top: int) -> dict[str, list[OfflineWindow]]:
    out: dict[str, list[OfflineWindow]] = {}
    ranked = windows.orderBy(F.col("duration").desc(), "topic", "partition", "start_seq")
    for cluster in sorted({r["cluster"] for r in windows.select("cluster").distinct().collect()}):
        rows = ranked.where(F.col("cluster") == cluster).limit(top).collect()
        out[cluster] = [
            OfflineWindow(r["topic"], r["partition"], _utc(r["start_ts"]), _utc(r["end_ts"]),
                          float(r["duration"]), r["cause_event"], r["cause_broker"])
            for r in rows]
    return out


def post_mortem(spark: SparkSession, inputs: AuditInputs, periods: dict[str, Period],
                top: int) -> list[ClusterPostMortem]:
    """One post-mortem per cluster of the run (all zeros when nothing went offline)."""
    windows = offline_windows(spark, inputs, periods).cache()
    totals = {r["cluster"]: r for r in windows.groupBy("cluster").agg(
        F.countDistinct("topic", "partition").alias("partitions"),
        F.count(F.lit(1)).alias("windows"),
        F.sum(F.when(F.col("end_seq").isNull(), 1).otherwise(0)).alias("still_offline"),
        F.sum("us").alias("us"),
    ).collect()}
    longest = _longest(windows, top)
    by_broker = _rollup(windows, "cause_broker", top)
    by_topic = _rollup(windows, "topic", top)
    windows.unpersist()
    result = []
    for cluster in sorted(inputs.bounds):
        t = totals.get(cluster)
        period = periods[cluster]
        result.append(ClusterPostMortem(
            cluster, t["partitions"] if t else 0, t["windows"] if t else 0,
            t["still_offline"] if t else 0, round(t["us"] / 1e6, 6) if t else 0.0,
            None if period.start_us is None else instant(period.start_us),
            instant(period.end_us),
            longest.get(cluster, []), by_broker.get(cluster, []), by_topic.get(cluster, [])))
    return result


def time_text(value: datetime | None) -> str:
    """A table's instant as the post-mortem prints it (`?` when unknown)."""
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "?"


def _cause(window: OfflineWindow) -> str:
    event = window.cause_event or "unknown cause"
    return event if window.cause_broker is None else f"{event} of broker {window.cause_broker}"


def _label(prefix: str, key: str) -> str:
    """"broker 3"; a window a topic or partition event opened has no cause broker."""
    return "no broker (topic event)" if prefix and key == NO_BROKER else prefix + key


def _rollup_lines(title: str, rollups: list[Rollup], prefix: str) -> list[str]:
    lines = [f"  by {title} (seconds in this run):"]
    lines += [f"    {_label(prefix, r.key):<24} {r.windows:>5} window(s) {r.partitions:>5} "
              f"partition(s) {r.seconds:>12.1f} s" for r in rollups]
    return lines


def format_post_mortem(run_id: str, reports: list[ClusterPostMortem],
                       incidents: dict[str, list[str]] | None = None,
                       changes: dict[str, list[str]] | None = None,
                       losses: dict[str, list[str]] | None = None) -> str:
    """Per cluster: the totals, the run's incidents first (`jobs.audit.incidents`), what
    its unclean elections lost (`data_loss`, `jobs.engine.data_loss_lines`), then the longest
    windows, the roll-ups, and what changed in the run (`jobs.audit.changes`)."""
    lines = [f"== audit post-mortem: run {run_id} =="]
    if not reports:
        lines.append("no events in the run")
    for pm in reports:
        since = ("the log's start" if pm.period_start is None
                 else f"{time_text(pm.period_start)} UTC")
        lines.append(
            f"cluster {pm.cluster}: {pm.partitions} partition(s) went offline in {pm.windows} "
            f"window(s), {pm.seconds:.1f} partition-seconds offline in this run (from {since} "
            f"to {time_text(pm.period_end)} UTC), {pm.still_offline} still offline at its end")
        found = (incidents or {}).get(pm.cluster, [])
        if found:
            lines.append("  incidents (the event that took partitions offline or under min "
                         "ISR):")
            lines += [f"    {line}" for line in found]
        lost = (losses or {}).get(pm.cluster, [])
        if lost:
            lines.append("  data loss of the unclean elections (from the brokers' logs):")
            lines += [f"    {line}" for line in lost]
        if pm.windows:
            lines += _window_lines(pm)
        changed = (changes or {}).get(pm.cluster, [])
        if changed:
            lines.append("  what changed in this run:")
            lines += [f"    {line}" for line in changed]
    return "\n".join(lines)


def _window_lines(pm: ClusterPostMortem) -> list[str]:
    lines = [f"  longest offline windows in this run (top {len(pm.longest)}):"]
    for w in pm.longest:
        end = time_text(w.end_ts) if w.end_ts is not None else "still offline"
        name = f"{w.topic}-{w.partition}"
        lines.append(f"    {name:<24} {time_text(w.start_ts)} -> {end:<19} "
                     f"{w.seconds:>10.1f} s in this run  {_cause(w)}")
    lines += _rollup_lines("cause broker", pm.by_cause_broker, "broker ")
    lines += _rollup_lines("topic", pm.by_topic, "")
    return lines
