"""Brokers on the time axis: one lane per broker (live / shutting down / dead), a lane of
who was the controller (`controller_timeline`), and the events marked on the axis (broker
failures, startups, controlled shutdowns from `broker_timeline`'s transitions; controller
elections from `controller_timeline`)."""

from __future__ import annotations

from itertools import groupby
from pathlib import Path
from typing import NamedTuple

import numpy as np

from jobs.report.tables import microseconds, open_table, read
from jobs.report.timeline import TimeRange

STATUSES: tuple[str, ...] = ("live", "shutting_down", "dead")
# A pixel covered by several statuses shows the worst: a one-second outage stays visible.
_SEVERITY = {"live": 1, "shutting_down": 2, "dead": 3}


class Interval(NamedTuple):
    cluster: str
    broker_id: int
    status: str
    seq_from: int
    seq_to: int | None  # None: still open at the end of the log
    ts_from: int
    ts_to: int | None


class Bar(NamedTuple):
    status: str
    start: int
    end: int


class Lane(NamedTuple):
    label: str
    bars: tuple[Bar, ...]


class AxisEvent(NamedTuple):
    ts: int
    kind: str  # broker_failure, broker_startup, controlled_shutdown, controller_failover
    label: str


def read_intervals(tables_dir: Path, run_id: str) -> list[Interval]:
    table = read(
        open_table(tables_dir, "broker_timeline"), run_id,
        ["cluster", "broker_id", "status", "seq_from", "seq_to", "ts_from", "ts_to"],
    )
    rows = zip(
        table.column("cluster").to_pylist(), table.column("broker_id").to_pylist(),
        table.column("status").to_pylist(), table.column("seq_from").to_pylist(),
        table.column("seq_to").to_pylist(), microseconds(table.column("ts_from")).to_pylist(),
        microseconds(table.column("ts_to")).to_pylist(), strict=True,
    )
    intervals = [Interval(str(c), int(b), str(s), int(q), q_to, int(f), t)
                 for c, b, s, q, q_to, f, t in rows]
    return sorted(intervals, key=lambda i: (i.cluster, i.broker_id, i.seq_from, i.ts_from))


def _label(cluster: str, broker_id: int, clusters: int) -> str:
    return f"broker {broker_id}" if clusters == 1 else f"{cluster} · broker {broker_id}"


def broker_events(intervals: list[Interval]) -> list[AxisEvent]:
    """A broker's change of status: to dead = failure, to shutting_down = controlled
    shutdown, to live after dead (or first seen after the log began) = startup."""
    clusters = len({i.cluster for i in intervals})
    first_seq = {c: min(i.seq_from for i in intervals if i.cluster == c)
                 for c in {i.cluster for i in intervals}}
    events: list[AxisEvent] = []
    for (cluster, broker), lane in groupby(intervals, key=lambda i: (i.cluster, i.broker_id)):
        name = _label(cluster, broker, clusters)
        previous: str | None = None
        for interval in lane:
            if interval.status == "dead" and previous in ("live", "shutting_down"):
                events.append(AxisEvent(interval.ts_from, "broker_failure", f"{name} failed"))
            elif interval.status == "shutting_down":
                events.append(AxisEvent(interval.ts_from, "controlled_shutdown",
                                        f"{name} controlled shutdown"))
            elif interval.status == "live" and (
                previous == "dead" or (previous is None and interval.seq_from > first_seq[cluster])
            ):
                events.append(AxisEvent(interval.ts_from, "broker_startup", f"{name} started"))
            previous = interval.status
    return sorted(events)


class Election(NamedTuple):
    cluster: str
    controller_id: int | None
    epoch: int | None
    seq: int
    ts: int


class ControllerBar(NamedTuple):
    """One controller's term, as drawn: from its election to the next (or the log's end)."""

    controller_id: int | None
    epoch: int | None
    start: int
    end: int


class ControllerLane(NamedTuple):
    label: str
    bars: tuple[ControllerBar, ...]


def read_elections(tables_dir: Path, run_id: str) -> list[Election]:
    """controller_timeline's rows (one per election), per cluster in event order."""
    table = read(
        open_table(tables_dir, "controller_timeline"), run_id,
        ["cluster", "controller_id", "controller_epoch", "seq", "ts"],
    )
    rows = zip(
        table.column("cluster").to_pylist(), table.column("controller_id").to_pylist(),
        table.column("controller_epoch").to_pylist(), table.column("seq").to_pylist(),
        microseconds(table.column("ts")).to_pylist(), strict=True,
    )
    return sorted((Election(str(c), cid, epoch, int(seq), int(ts))
                   for c, cid, epoch, seq, ts in rows),
                  key=lambda e: (e.cluster, e.seq, e.ts))


def controller_events(elections: list[Election]) -> list[AxisEvent]:
    return sorted(
        AxisEvent(e.ts, "controller_failover",
                  f"no leader (epoch {e.epoch})"  # a dump's LEADER_CHANGE prints none
                  if e.controller_id is not None and e.controller_id < 0
                  else f"controller {e.controller_id} (epoch {e.epoch})")
        for e in elections
    )


def controller_lanes(elections: list[Election], span: TimeRange,
                     width: int) -> list[ControllerLane]:
    """One lane per cluster: which broker was the controller when. The span is cut into
    `width` slices; each shows the controller in office at its end (one elected inside a
    slice wins it), so a lane has at most `width` bars however many elections."""
    clusters = sorted({e.cluster for e in elections})
    length = max(span.end - span.start, 1)
    ends = span.start + (np.arange(1, width + 1, dtype=np.int64) * length) // width
    lanes = []
    for cluster in clusters:
        terms = [e for e in elections if e.cluster == cluster]
        # Event order is the truth; a clock that steps back counts at its latest time so far.
        times = np.maximum.accumulate(np.array([e.ts for e in terms], dtype=np.int64))
        in_office = np.searchsorted(times, ends, side="right") - 1
        bars = []
        for first, last in _runs(in_office):
            if in_office[first] < 0:
                continue
            term = terms[int(in_office[first])]
            start = span.start if first == 0 else int(ends[first - 1])
            bars.append(ControllerBar(term.controller_id, term.epoch, start, int(ends[last])))
        label = "controller" if len(clusters) == 1 else f"{cluster} · controller"
        lanes.append(ControllerLane(label, tuple(bars)))
    return lanes


def _runs(values: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) index of each run of equal values."""
    cuts = np.flatnonzero(np.diff(values)) + 1
    starts = np.concatenate([[0], cuts]).astype(int)
    ends = np.concatenate([cuts - 1, [len(values) - 1]]).astype(int)
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def _pixels(lane: list[Interval], span: TimeRange, width: int) -> np.ndarray:
    """The worst status over each of `width` equal slices of the span (0 = not known)."""
    worst = np.zeros(width, dtype=np.int8)
    length = max(span.end - span.start, 1)
    for interval in lane:
        end = span.end if interval.ts_to is None else interval.ts_to
        first = int((interval.ts_from - span.start) * width // length)
        last = int(-((span.start - end) * width // length))  # ceiling division
        first = min(max(first, 0), width - 1)
        last = min(max(last, first + 1), width)
        np.maximum(worst[first:last], _SEVERITY[interval.status], out=worst[first:last])
    return worst


def _bars(worst: np.ndarray, span: TimeRange) -> tuple[Bar, ...]:
    width = len(worst)
    names = {v: k for k, v in _SEVERITY.items()}
    cuts = np.flatnonzero(np.diff(worst)) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [width]])
    length = span.end - span.start
    return tuple(
        Bar(names[int(worst[s])], span.start + s * length // width,
            span.start + e * length // width)
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True)
        if worst[s]
    )


def broker_lanes(intervals: list[Interval], span: TimeRange, width: int) -> list[Lane]:
    """One lane per broker; intervals shorter than one of `width` slices of the span merge
    into it (its worst status), so a lane has at most `width` bars however long the log."""
    clusters = len({i.cluster for i in intervals})
    lanes = []
    for (cluster, broker), lane in groupby(intervals, key=lambda i: (i.cluster, i.broker_id)):
        worst = _pixels(list(lane), span, width)
        lanes.append(Lane(_label(cluster, broker, clusters), _bars(worst, span)))
    return lanes
