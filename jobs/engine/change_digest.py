"""What changed in a run, as the controller saw it: the pure roll-up behind the `changes`
table (`jobs.engine.changes_table` reads its inputs and writes it).

Every change is counted whole, and its first rows by seq are listed. The sources:

* topics and partitions: the partition machine's applied NonExistentPartition ->
  NewPartition transitions (`state_changes`). Kafka numbers a topic's partitions from 0 and
  `kafka-topics --alter --partitions` only adds higher ones, so the event that creates
  partition 0 creates the topic (with every partition created at that seq); any later
  creation adds partitions. A deletion is counted when it completes (`topic_deleted`
  findings);
* reassignments: the `reassigning` windows (`partition_windows`) that opened, closed, or are
  open at the end of the run, over every run of the checkpoint (the earlier runs' windows
  still open, as `jobs.engine.rollup_carry` carries them);
* leaders: every election that moved a partition's leader from one broker to another
  (`partition_state_writes`, cause `election`, against the partition's previous write);
* the requests of the log that leave no other trace (`jobs.engine.requested`);
* brokers and controllers: the cluster timeline's steps after the committed runs' last seq.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from jobs.common.instants import micros
from jobs.engine.requested import FIRST, Listed, Requested
from statemachine.cluster import BROKER_CHANGE, FAILOVER, SHUTDOWN, ClusterTimeline

# The digest's changes, in the order a reader takes them in.
CHANGES = (
    "topic_created", "partitions_added", "topic_deletion_requested", "topic_deleted",
    "reassignment_started", "reassignment_completed", "reassignment_in_progress",
    "preferred_election", "leader_moved", "topic_config_changed",
    "controller_failover", "broker_started", "broker_shutdown", "broker_failed",
)


@dataclass(frozen=True)
class Change:
    change: str
    count: int
    first: tuple[Listed, ...]


def _listed(change: str, rows: Sequence[Listed]) -> Change:
    return Change(change, len(rows), tuple(sorted(rows, key=_order)[:FIRST]))


def _order(row: Listed) -> tuple[int, str, int, int]:
    seq, _, topic, partition, broker, _ = row
    return (seq, topic or "", -1 if partition is None else partition,
            -1 if broker is None else broker)


def created(rows: Iterable[tuple[int, int | None, str, int]]) -> list[Change]:
    """Topics created and partitions added, from the (seq, ts_us, topic, partition) of the
    run's applied partition creations."""
    by_topic: dict[str, list[tuple[int, int | None, int]]] = defaultdict(list)
    for seq, ts, topic, partition in rows:
        by_topic[topic].append((seq, ts, partition))
    topics: list[Listed] = []
    added: list[Listed] = []
    for topic, parts in by_topic.items():
        zero = [seq for seq, _, p in parts if p == 0]
        born = min(zero) if zero else None
        if born is not None:
            at_birth = [p for p in parts if p[0] == born]
            topics.append((born, at_birth[0][1], topic, None, None,
                           f"{len(at_birth)} partition{'' if len(at_birth) == 1 else 's'}"))
        added += [(seq, ts, topic, p, None, None) for seq, ts, p in parts if seq != born]
    return [_listed("topic_created", topics), _listed("partitions_added", added)]


def deleted(rows: Iterable[tuple[int, int | None, str]]) -> Change:
    """Topics whose deletion completed, from the run's `topic_deleted` findings."""
    return _listed("topic_deleted", [(s, ts, t, None, None, None) for s, ts, t in rows])


# (run_id, topic, partition, start_seq, start_ts, end_seq, end_ts) of a reassigning window.
Window = tuple[str, str, int, int, int | None, int | None, int | None]


def reassignments(windows: Iterable[Window], run_id: str) -> list[Change]:
    """Reassignments started, completed and still in progress in `run_id`, from the
    `reassigning` windows every run of the checkpoint wrote (a window is written open by
    the runs it spans and closed by the run that ends it)."""
    rows = list(windows)
    earlier = {(t, p, s) for r, t, p, s, *_ in rows if r != run_id}
    closed = {(t, p, s) for _, t, p, s, _, end, _ in rows if end is not None}
    started: list[Listed] = []
    completed: list[Listed] = []
    open_now: dict[tuple[str, int, int], Listed] = {}
    for run, topic, partition, start, start_ts, end, end_ts in rows:
        key = (topic, partition, start)
        if run == run_id and key not in earlier:
            started.append((start, start_ts, topic, partition, None, None))
        if run == run_id and end is not None:
            completed.append((end, end_ts, topic, partition, None, None))
        if key not in closed:
            open_now[key] = (start, start_ts, topic, partition, None, "open since this seq")
    return [_listed("reassignment_started", started),
            _listed("reassignment_completed", completed),
            _listed("reassignment_in_progress", list(open_now.values()))]


# (run_id, seq, write, ts_us, topic, partition, leader, cause) of a partition state write.
Write = tuple[str, int, int, int | None, str, int, int, str]


def leaders_moved(writes: Iterable[Write], run_id: str) -> Change:
    """Elections of `run_id` that moved a leader from one broker to another: each
    `election` write against the same partition's write before it, in any run (any cause
    but `isr_change`, which never changes the leader). The definition on Python rows: a run
    computes it on Arrow columns (`jobs.engine.leader_moves`), tested equal to this."""
    by_partition: dict[tuple[str, int], list[Write]] = defaultdict(list)
    for w in writes:
        by_partition[(w[4], w[5])].append(w)
    moved: list[Listed] = []
    for rows in by_partition.values():
        rows.sort(key=lambda w: (w[1], w[2]))
        for before, w in zip(rows, rows[1:], strict=False):
            run, seq, _, ts, topic, partition, leader, cause = w
            was = before[6]
            if (run == run_id and cause == "election" and was >= 0 and leader >= 0
                    and leader != was):
                moved.append((seq, ts, topic, partition, None, f"{was} -> {leader}"))
    return _listed("leader_moved", moved)


def from_requests(found: Iterable[Requested]) -> list[Change]:
    return [Change(change, count, tuple(first)) for change, count, first in found]


def cluster_changes(timeline: ClusterTimeline, after_seq: int | None) -> list[Change]:
    """Controller failovers and broker starts, controlled shutdowns and failures among the
    timeline's steps after `after_seq` (None: every step). A failover's live brokers are
    news only against a controller before it: a broker it found is a start, a broker
    missing from them a failure (the dead controller's own, typically)."""
    out: dict[str, list[Listed]] = defaultdict(list)
    steps = timeline.steps if after_seq is None else timeline.steps_after(after_seq)
    first_ever = timeline.steps[0].seq if timeline.steps else None
    for s in steps:
        ts = _timeline_us(s.ts)
        if s.kind == FAILOVER:
            out["controller_failover"].append(
                (s.seq, ts, None, None, s.controller, f"the new controller, epoch {s.epoch}"))
            if s.seq == first_ever and not timeline.initial.live:
                continue
            known = s.live_before | s.shutting_down_before
            after = s.live_after | s.shutting_down_after
            out["broker_started"] += [(s.seq, ts, None, None, b, "found by the new controller")
                                      for b in sorted(after - known)]
            out["broker_failed"] += [(s.seq, ts, None, None, b, "missing at controller failover")
                                     for b in sorted(known - after)]
        elif s.kind == BROKER_CHANGE:
            out["broker_started"] += [(s.seq, ts, None, None, b, None) for b in s.new]
            out["broker_started"] += [(s.seq, ts, None, None, b, "bounced (re-registered)")
                                      for b in s.bounced]
            out["broker_failed"] += [(s.seq, ts, None, None, b, None) for b in s.dead
                                     if b not in s.shutting_down_before]
        elif s.kind == SHUTDOWN:
            out["broker_shutdown"].append((s.seq, ts, None, None, s.broker, None))
    return [_listed(c, out[c]) for c in ("controller_failover", "broker_started",
                                         "broker_shutdown", "broker_failed")]


def _timeline_us(ts: Any) -> int | None:
    """A timeline time as UTC microseconds: a datetime (naive: local time, as Spark hands
    timestamps to Python and as `datetime.timestamp` reads them), or microseconds already."""
    if ts is None or isinstance(ts, int):
        return ts
    return micros(ts)


def in_order(changes: Iterable[Change]) -> list[Change]:
    """The changes with at least one row, in `CHANGES` order."""
    found = {c.change: c for c in changes if c.count}
    return [found[name] for name in CHANGES if name in found]


def named(row: dict[str, Any]) -> str:
    """What one listed row of `changes` names, as the audit and the report print it:
    `t-0`, `t`, `broker 3`, `t-0 broker 3`."""
    parts = []
    if row["topic"] is not None:
        parts.append(row["topic"] if row["partition"] is None
                     else f"{row['topic']}-{row['partition']}")
    if row["broker_id"] is not None:
        parts.append(f"broker {row['broker_id']}")
    return " ".join(parts)
