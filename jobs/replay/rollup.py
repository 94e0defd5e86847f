"""The post-mortem figures of the run summary: partition-seconds offline in the run's
period, per topic and per cause broker, from the run's `partition_windows`.

A run's period ends at the latest event time among the rows it read and starts where the previous
committed run of the checkpoint ended (the whole log without a checkpoint). Each offline
window counts the part of it inside the period, an open one up to the period's end: a
broker that never comes back weighs what it cost so far, and the nightly runs of a week add
up to one replay of the week, however the windows straddle the nights.

The period's start is kept in `<checkpoint>/runs/<run_id>/period.json`, written by the
run's first attempt, so that a rerun of a killed run counts the same period.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from jobs.common.tables import path_exists, read_table, read_text, write_text

NO_BROKER = "none"  # cause of a window opened by a topic or partition event


@dataclass
class Rollup:
    """One cluster's offline partition-seconds in the run's period."""

    period_end_us: int | None = None
    seconds: float = 0.0
    by_topic: dict[str, float] = field(default_factory=dict)
    by_cause_broker: dict[str, float] = field(default_factory=dict)


def period_starts(spark: SparkSession, ledger_dir: str,
                  previous_end: dict[str, int]) -> dict[str, int]:
    """The run's period start per cluster: as its first attempt recorded it, else the end
    of the previous committed run (recorded now)."""
    path = f"{ledger_dir}/period.json"
    if path_exists(spark, path):
        return {c: int(v) for c, v in json.loads(read_text(spark, path)).items()}
    write_text(spark, path, json.dumps(dict(sorted(previous_end.items()))) + "\n")
    return dict(previous_end)


def _us(column: str) -> Column:
    return F.unix_micros(F.col(column))


def offline_rollup(spark: SparkSession, out_dir: str, run_id: str,
                   starts: dict[str, int], ends: dict[str, int]) -> dict[str, Rollup]:
    """Per cluster, from its period's start (absent: the log's start) to its end (the
    latest event time the run read)."""
    rollups = {c: Rollup(t) for c, t in ends.items() if t >= 0}
    if not rollups:
        return {}
    ends_df = spark.createDataFrame(sorted((c, r.period_end_us) for c, r in rollups.items()),
                                    "cluster string, period_end long")
    start_df = spark.createDataFrame(sorted(starts.items()) or [("", 0)],
                                     "cluster string, period_start long")
    windows = (
        read_table(spark, out_dir, "partition_windows")
        .where((F.col("run_id") == run_id) & (F.col("kind") == "offline"))
        .join(F.broadcast(ends_df), "cluster", "inner")
        .join(F.broadcast(start_df), "cluster", "left")
        .select(
            "cluster", "topic",
            F.coalesce(F.col("cause_broker").cast("string"), F.lit(NO_BROKER)).alias("broker"),
            F.greatest(
                F.least(F.coalesce(_us("end_ts"), F.col("period_end")), F.col("period_end"))
                - F.greatest(_us("start_ts"), F.coalesce("period_start", _us("start_ts"))),
                F.lit(0)).alias("us"),
        )
    )
    for key, attr in (("topic", "by_topic"), ("broker", "by_cause_broker")):
        for r in windows.groupBy("cluster", key).agg(F.sum("us").alias("us")).collect():
            rollup = rollups.setdefault(r["cluster"], Rollup())
            getattr(rollup, attr)[r[key]] = round(int(r["us"]) / 1e6, 6)
    for rollup in rollups.values():
        rollup.seconds = round(sum(rollup.by_topic.values()), 6)
    return rollups
