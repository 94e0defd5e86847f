"""The post-mortem figures of the run summary: partition-seconds offline in the run's
period, per topic and per cause broker, from the run's `partition_windows`.

A run's period ends at the latest event time among the rows it read and starts where the previous
committed run of the checkpoint ended (the whole log without a checkpoint); a cluster whose
rows carried no time has an empty period at that start. Each offline window counts the part
of it inside the period, an open one up to the period's end: a broker that never comes back
weighs what it cost so far, and the nightly runs of a week add up to one replay of the
week, however the windows straddle the nights. `run_summary` keeps the period
(`period_start`, `period_end`), and the audit's post-mortem clips the windows to it with
the same expression (`in_period_us`), so both give one figure per run.

The period's start is kept in `<checkpoint>/runs/<run_id>/period.json`, written by the
run's first attempt, so that a rerun of a killed run counts the same period.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from pyarrow import fs as pafs
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from jobs.store.filesystem import arrow_filesystem
from jobs.store.staging import file_schema
from jobs.store.tables import path_exists, read_table, read_text, table_path, write_text

NO_BROKER = "none"  # cause of a window opened by a topic or partition event


@dataclass
class Rollup:
    """One cluster's offline partition-seconds in the run's period."""

    period_end_us: int | None = None
    seconds: float = 0.0
    by_topic: dict[str, float] = field(default_factory=dict)
    by_cause_broker: dict[str, float] = field(default_factory=dict)
    period_start_us: int | None = None  # None: the log's start


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
    latest event time the run read; none: the period is empty, or absent without a start).
    The run's windows are read with pyarrow on the driver where it can open `out_dir` (no
    Spark job), else summed by Spark."""
    rollups = {c: Rollup(t if t >= 0 else starts[c], period_start_us=starts.get(c))
               for c, t in ends.items() if t >= 0 or c in starts}
    if not rollups:
        return {}
    windows = arrow_windows(out_dir, run_id)
    if windows is None:
        sums = spark_sums(spark, out_dir, run_id, starts, rollups)
    else:
        sums = window_sums(windows, starts, rollups)
    for attr, cluster, key, us in sums:
        getattr(rollups[cluster], attr)[key] = round(us / 1e6, 6)
    for rollup in rollups.values():
        rollup.seconds = round(sum(rollup.by_topic.values()), 6)
    return rollups


class Window(NamedTuple):
    """An offline window of the run, times as microseconds (None: open, or unknown)."""

    cluster: str
    topic: str
    cause_broker: int | None
    start_us: int | None
    end_us: int | None


def arrow_windows(out_dir: str, run_id: str) -> list[Window] | None:
    """The run's offline windows from its committed `partition_windows` files (hidden files
    skipped, as Spark skips them), or None when pyarrow cannot open `out_dir`."""
    opened = arrow_filesystem(f"{table_path(out_dir, 'partition_windows')}/run_id={run_id}")
    if opened is None:
        return None
    filesystem, partition = opened
    if filesystem.get_file_info(partition).type == pafs.FileType.NotFound:
        return []
    # INT96 timestamps (Spark's default) read as microseconds: nanoseconds overflow past 2262.
    fmt = ds.ParquetFileFormat(read_options={"coerce_int96_timestamp_unit": "us"})
    table = ds.dataset(partition, schema=file_schema("partition_windows"), format=fmt,
                       filesystem=filesystem).to_table(
        columns=list(Window._fields[:3]) + ["start_ts", "end_ts"],
        filter=pc.field("kind") == "offline")
    columns = [table.column(name).to_pylist() for name in Window._fields[:3]]
    columns += [pc.cast(table.column(name), pa.int64()).to_pylist()
                for name in ("start_ts", "end_ts")]
    return [Window(*row) for row in zip(*columns, strict=True)]


def window_us(w: Window, period_start: int | None, period_end: int) -> int:
    """The part of a window inside the period, as Spark's expression in `spark_sums`
    computes it (`greatest` and `least` skip nulls; a null difference counts 0)."""
    hi = min(period_end if w.end_us is None else w.end_us, period_end)
    low = [t for t in (w.start_us, w.start_us if period_start is None else period_start)
           if t is not None]
    return max(hi - max(low), 0) if low else 0


def window_sums(windows: list[Window], starts: dict[str, int],
                rollups: dict[str, Rollup]) -> list[tuple[str, str, str, int]]:
    """(attribute, cluster, key, microseconds) per topic and per cause broker."""
    sums: dict[tuple[str, str, str], int] = {}
    for w in windows:
        rollup = rollups.get(w.cluster)
        if rollup is None or rollup.period_end_us is None:
            continue  # a cluster without a period: the inner join drops it
        us = window_us(w, starts.get(w.cluster), rollup.period_end_us)
        broker = NO_BROKER if w.cause_broker is None else str(w.cause_broker)
        for key in (("by_topic", w.cluster, w.topic), ("by_cause_broker", w.cluster, broker)):
            sums[key] = sums.get(key, 0) + us
    return [(attr, cluster, key, us) for (attr, cluster, key), us in sums.items()]


def in_period_us(start_us: Column, end_us: Column, period_start_us: Column,
                 period_end_us: Column) -> Column:
    """`window_us` as a Spark expression (microsecond columns; a null period start: the
    log's start): the one clipping of the run summary and the audit's post-mortem."""
    return F.greatest(
        F.least(F.coalesce(end_us, period_end_us), period_end_us)
        - F.greatest(start_us, F.coalesce(period_start_us, start_us)),
        F.lit(0))


def spark_sums(spark: SparkSession, out_dir: str, run_id: str, starts: dict[str, int],
               rollups: dict[str, Rollup]) -> list[tuple[str, str, str, int]]:
    """`window_sums` with Spark, for an `out_dir` pyarrow cannot open."""
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
            in_period_us(_us("start_ts"), _us("end_ts"), F.col("period_start"),
                         F.col("period_end")).alias("us"),
        )
    )
    out = []
    for key, attr in (("topic", "by_topic"), ("broker", "by_cause_broker")):
        for r in windows.groupBy("cluster", key).agg(F.sum("us").alias("us")).collect():
            out.append((attr, r["cluster"], r[key], int(r["us"])))
    return out
