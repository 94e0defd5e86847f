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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F

from jobs.store.filesystem import path_exists, read_text, write_text
from jobs.store.layout import join
from jobs.store.run_reads import run_batches

NO_BROKER = "none"  # cause of a window opened by a topic or partition event


@dataclass
class Rollup:
    """One cluster's offline partition-seconds in the run's period."""

    period_end_us: int | None = None
    seconds: float = 0.0
    by_topic: dict[str, float] = field(default_factory=dict)
    by_cause_broker: dict[str, float] = field(default_factory=dict)
    period_start_us: int | None = None  # None: the log's start


def period_starts(ledger_dir: str,
                  previous_end: dict[str, int]) -> dict[str, int]:
    """The run's period start per cluster: as its first attempt recorded it, else the end
    of the previous committed run (recorded now)."""
    path = join(ledger_dir, "period.json")
    if path_exists(path):
        return {c: int(v) for c, v in json.loads(read_text(path)).items()}
    write_text(path, json.dumps(dict(sorted(previous_end.items()))) + "\n")
    return dict(previous_end)


def offline_rollup(out_dir: str, run_id: str,
                   starts: dict[str, int], ends: dict[str, int]) -> dict[str, Rollup]:
    """Per cluster, from its period's start (absent: the log's start) to its end (the
    latest event time the run read; none: the period is empty, or absent without a start).
    The run's windows stream through pyarrow on the driver (no Spark job), one record batch
    at a time: the driver keeps one sum per topic and per cause broker, not the windows."""
    rollups = {c: Rollup(t if t >= 0 else starts[c], period_start_us=starts.get(c))
               for c, t in ends.items() if t >= 0 or c in starts}
    if not rollups:
        return {}
    for attr, cluster, key, us in arrow_sums(out_dir, run_id, starts, rollups):
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


def arrow_sums(out_dir: str, run_id: str, starts: dict[str, int],
               rollups: dict[str, Rollup]) -> list[tuple[str, str, str, int]]:
    """`window_sums` over the run's committed `partition_windows` files, computed batch by
    batch with pyarrow compute (no Python object per window). Keys come in the order of their
    first window, as `window_sums` gives them, so that the float sums over them agree."""
    clusters = [c for c, r in rollups.items() if r.period_end_us is not None]
    known = pa.array(clusters, pa.string())
    begins = pa.array([starts.get(c) for c in clusters], pa.int64())
    ends = pa.array([rollups[c].period_end_us for c in clusters], pa.int64())
    sums: dict[tuple[str, str, str], int] = {}
    for batch in run_batches(out_dir, "partition_windows", run_id, WINDOW_COLUMNS,
                             {"kind": ["offline"]}):
        at = pc.index_in(batch.column("cluster"), value_set=known)
        kept = pc.is_valid(at)  # a cluster without a period: the inner join drops it
        batch, at = batch.filter(kept), at.filter(kept)
        us = arrow_window_us(batch.column("start_ts"), batch.column("end_ts"),
                             begins.take(at), ends.take(at))
        broker = pc.fill_null(pc.cast(batch.column("cause_broker"), pa.string()), NO_BROKER)
        table = pa.table({"cluster": batch.column("cluster"), "topic": batch.column("topic"),
                          "broker": broker, "us": us, "row": np.arange(len(us))})
        for attr, column in (("by_topic", "topic"), ("by_cause_broker", "broker")):
            grouped = table.group_by(["cluster", column]).aggregate(
                [("us", "sum"), ("row", "min")]).sort_by("row_min")
            for cluster, key, total in zip(*(grouped.column(c).to_pylist()
                                             for c in ("cluster", column, "us_sum")),
                                           strict=True):
                sums[(attr, cluster, key)] = sums.get((attr, cluster, key), 0) + total
    return [(attr, cluster, key, us) for (attr, cluster, key), us in sums.items()]


WINDOW_COLUMNS = ("cluster", "topic", "cause_broker", "start_ts", "end_ts")


def arrow_window_us(start_us: pa.Array, end_us: pa.Array, period_start_us: pa.Array,
                    period_end_us: pa.Array) -> pa.Array:
    """`window_us` (and `in_period_us`) over Arrow arrays: `max_element_wise` and
    `min_element_wise` skip nulls as `greatest` and `least` do; a null difference counts 0."""
    hi = pc.min_element_wise(pc.coalesce(end_us, period_end_us), period_end_us)
    low = pc.max_element_wise(start_us, pc.coalesce(period_start_us, start_us))
    return pc.max_element_wise(pc.fill_null(pc.subtract(hi, low), 0), 0)


def window_us(w: Window, period_start: int | None, period_end: int) -> int:
    """The part of a window inside the period, as Spark's `in_period_us` computes it for
    the post-mortem (`greatest` and `least` skip nulls; a null difference counts 0)."""
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
