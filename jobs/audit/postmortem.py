"""The post-mortem of a run: its `offline` windows (`partition_windows`), aggregated in
Spark, only the totals, the longest windows and the rollups collected.

The windows of a run are the ones it closed (they may have opened in an earlier run) and
the ones still open at its end; an open window counts up to the run's last event.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.audit.extract import AuditInputs, bounds_frame, seconds_between


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


class ClusterPostMortem(NamedTuple):
    cluster: str
    partitions: int  # distinct partitions that were offline
    windows: int
    still_offline: int  # windows open at the end
    seconds: float  # partition-seconds offline
    last_ts: datetime
    longest: list[OfflineWindow]
    by_cause_broker: list[Rollup]
    by_topic: list[Rollup]


def offline_windows(spark: SparkSession, inputs: AuditInputs) -> DataFrame:
    """The run's offline windows with `duration` (open ones: up to the run's last event)."""
    windows = inputs.windows.where(F.col("kind") == "offline") \
        .join(bounds_frame(spark, inputs), "cluster")
    open_seconds = seconds_between(F.col("start_ts"), F.col("last_ts"))
    return windows.withColumn("duration", F.coalesce(F.col("seconds"), open_seconds,
                                                     F.lit(0.0)))


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
            label = "unknown" if r[key] is None else str(r[key])
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


def post_mortem(spark: SparkSession, inputs: AuditInputs, top: int) -> list[ClusterPostMortem]:
    """One post-mortem per cluster of the run (all zeros when nothing went offline)."""
    windows = offline_windows(spark, inputs).cache()
    totals = {r["cluster"]: r for r in windows.groupBy("cluster").agg(
        F.countDistinct("topic", "partition").alias("partitions"),
        F.count(F.lit(1)).alias("windows"),
        F.sum(F.when(F.col("end_seq").isNull(), 1).otherwise(0)).alias("still_offline"),
        F.sum("duration").alias("seconds"),
    ).collect()}
    longest = _longest(windows, top)
    by_broker = _rollup(windows, "cause_broker", top)
    by_topic = _rollup(windows, "topic", top)
    windows.unpersist()
    result = []
    for cluster, bounds in sorted(inputs.bounds.items()):
        t = totals.get(cluster)
        result.append(ClusterPostMortem(
            cluster, t["partitions"] if t else 0, t["windows"] if t else 0,
            t["still_offline"] if t else 0, float(t["seconds"]) if t else 0.0,
            bounds.last_ts, longest.get(cluster, []), by_broker.get(cluster, []),
            by_topic.get(cluster, [])))
    return result


def _time(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "?"


def _cause(window: OfflineWindow) -> str:
    event = window.cause_event or "unknown cause"
    return event if window.cause_broker is None else f"{event} of broker {window.cause_broker}"


def _rollup_lines(title: str, rollups: list[Rollup], prefix: str) -> list[str]:
    lines = [f"  by {title}:"]
    lines += [f"    {prefix + r.key:<24} {r.windows:>5} window(s) {r.partitions:>5} partition(s)"
              f" {r.seconds:>12.1f} s" for r in rollups]
    return lines


def format_post_mortem(run_id: str, reports: list[ClusterPostMortem]) -> str:
    lines = [f"== audit post-mortem: run {run_id} =="]
    if not reports:
        lines.append("no events in the run")
    for pm in reports:
        lines.append(
            f"cluster {pm.cluster}: {pm.partitions} partition(s) went offline in {pm.windows} "
            f"window(s), {pm.seconds:.1f} partition-seconds offline, {pm.still_offline} "
            f"still offline at the run's last event ({_time(pm.last_ts)} UTC)")
        if not pm.windows:
            continue
        lines.append(f"  longest offline windows (top {len(pm.longest)}):")
        for w in pm.longest:
            end = _time(w.end_ts) if w.end_ts is not None else "still offline"
            name = f"{w.topic}-{w.partition}"
            lines.append(f"    {name:<24} {_time(w.start_ts)} -> {end:<19} "
                         f"{w.seconds:>10.1f} s  {_cause(w)}")
        lines += _rollup_lines("cause broker", pm.by_cause_broker, "broker ")
        lines += _rollup_lines("topic", pm.by_topic, "")
    return "\n".join(lines)
