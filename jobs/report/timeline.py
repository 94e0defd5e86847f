"""The time axis: the log's time range, partitions in a window over time, broker lanes and
the events marked on the axis. Times are int64 microseconds since the epoch (UTC)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from jobs.report.tables import batches, microseconds, open_table, read, scanner

Micros = npt.NDArray[np.int64]

# (table, its timestamp columns): every time an output table records. An event that changed
# nothing leaves no row, so the range is that of the events that did something.
TIME_COLUMNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("state_changes", ("ts",)),
    ("leader_and_isr_requests", ("ts",)),
    ("update_metadata_requests", ("ts",)),
    ("stop_replica_requests", ("ts",)),
    ("findings", ("ts",)),
    ("partition_windows", ("start_ts", "end_ts")),
    ("broker_timeline", ("ts_from", "ts_to")),
    ("controller_timeline", ("ts",)),
)

# The window kinds plotted over time, drawn in this order.
PLOTTED_KINDS: tuple[str, ...] = ("offline", "under_min_isr", "under_replicated")


class TimeRange(NamedTuple):
    start: int
    end: int


class StepSeries(NamedTuple):
    """A step function: `counts[i]` holds from `times[i]` until `times[i + 1]`."""

    kind: str
    times: Micros
    counts: Micros
    peak: int
    peak_time: int | None


def log_time_range(tables_dir: Path, run_id: str) -> TimeRange:
    """The first and last time any table of the run records (one column at a time)."""
    low: int | None = None
    high: int | None = None
    for name, columns in TIME_COLUMNS:
        dataset = open_table(tables_dir, name)
        for column in columns:
            for batch in batches(scanner(dataset, run_id, [column])):
                bounds = pc.min_max(microseconds(batch.column(column))).as_py()
                if bounds["min"] is None:
                    continue
                low = bounds["min"] if low is None else min(low, bounds["min"])
                high = bounds["max"] if high is None else max(high, bounds["max"])
    if low is None or high is None:
        return TimeRange(0, 0)
    return TimeRange(int(low), int(high))


def _changes(windows: pa.Table, seq: str, ts: str, sign: int) -> pa.Table:
    present = windows.filter(pc.is_valid(windows.column(seq)))
    grouped = present.group_by(["cluster", seq]).aggregate([(ts, "min"), ([], "count_all")])
    return pa.table({
        "cluster": grouped.column("cluster"),
        "seq": grouped.column(seq),
        "ts": microseconds(grouped.column(f"{ts}_min")),
        "delta": pc.multiply(grouped.column("count_all"), sign),
    })


def _cluster_steps(changes: pa.Table) -> tuple[Micros, Micros]:
    """One cluster's change points in event order: (times, counts after each event)."""
    by_seq = changes.group_by(["seq"]).aggregate([("ts", "min"), ("delta", "sum")])
    by_seq = by_seq.sort_by([("seq", "ascending")])
    # A window opens after its start event and closes after its end event: the count after
    # each event is the running sum of the deltas in event (seq) order.
    counts = np.cumsum(by_seq.column("delta_sum").to_numpy()).astype(np.int64)
    # Event order is the truth; a clock that steps back is drawn at its latest time so far.
    times = np.maximum.accumulate(by_seq.column("ts_min").to_numpy()).astype(np.int64)
    return times, counts


def _combine(steps: list[tuple[Micros, Micros]]) -> tuple[Micros, Micros]:
    """The sum of several clusters' step functions, on the union of their change times."""
    if len(steps) == 1:
        return steps[0]
    times = np.unique(np.concatenate([t for t, _ in steps]))
    total = np.zeros(len(times), dtype=np.int64)
    for cluster_times, cluster_counts in steps:
        at = np.searchsorted(cluster_times, times, side="right") - 1
        total += np.where(at >= 0, cluster_counts[np.maximum(at, 0)], 0)
    return times, total


def window_series(windows: pa.Table, kind: str) -> StepSeries:
    """Partitions in an open window of `kind` at each instant, from partition_windows rows
    (columns cluster, kind, start_seq, start_ts, end_seq, end_ts)."""
    of_kind = windows.filter(pc.equal(windows.column("kind"), kind))
    empty = np.zeros(0, dtype=np.int64)
    if of_kind.num_rows == 0:
        return StepSeries(kind, empty, empty, 0, None)
    changes = pa.concat_tables([
        _changes(of_kind, "start_seq", "start_ts", 1),
        _changes(of_kind, "end_seq", "end_ts", -1),
    ])
    clusters = sorted(set(changes.column("cluster").to_pylist()), key=str)
    steps = [
        _cluster_steps(changes.filter(pc.equal(changes.column("cluster"), c))) for c in clusters
    ]
    times, counts = _combine(steps)
    top = int(np.argmax(counts))
    return StepSeries(kind, times, counts, int(counts[top]), int(times[top]))


def read_windows(tables_dir: Path, run_id: str) -> pa.Table:
    """The plotted kinds' windows, only the columns the step series need."""
    dataset = open_table(tables_dir, "partition_windows")
    return read(
        dataset, run_id,
        ["cluster", "kind", "start_seq", "start_ts", "end_seq", "end_ts"],
        pc.field("kind").isin(list(PLOTTED_KINDS)),
    )


def resample(series: StepSeries, span: TimeRange, max_points: int) -> StepSeries:
    """At most `max_points` steps: the span cut into equal bins, each bin drawn at the most
    partitions in a window at any instant inside it (a peak is never smoothed away)."""
    if len(series.times) <= max_points or span.end <= span.start:
        return series
    edges = span.start + (np.arange(max_points, dtype=np.float64) * (span.end - span.start)
                          / max_points).astype(np.int64)
    # The count in force when each bin begins, then the highest count reached inside it.
    before = np.searchsorted(series.times, edges, side="right") - 1
    carried = np.where(before >= 0, series.counts[np.maximum(before, 0)], 0)
    bins = np.clip(np.searchsorted(edges, series.times, side="right") - 1, 0, max_points - 1)
    inside = np.zeros(max_points, dtype=np.int64)
    np.maximum.at(inside, bins, series.counts)
    return series._replace(times=edges, counts=np.maximum(carried, inside))
