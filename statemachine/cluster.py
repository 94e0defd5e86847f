"""The cluster timeline: broker liveness and the controller, by `seq`.

Broker liveness is global while partitions are independent, so the cluster events of a log
are folded once, here, into a list of `ClusterStep`s. The replay of every partition reads
liveness from this timeline instead of receiving a copy of every broker event.

Rows that share a `seq` are one controller event. Within one `seq` the steps run in the
order Kafka's controller would take them: a failover first, then the `BrokerChange`
(new brokers start, bounced brokers fail and start again, dead brokers fail:
`KafkaController.processBrokerChange`), then
controlled shutdowns in ascending broker id.

The timeline also marks the `seq`s of deletion activity (`DELETION_ACTIVITY`): the events
whose handler calls `TopicDeletionManager.resumeDeletions`, which walks every topic queued
for deletion in the cluster, not only the event's own. A replay group holds only some of
the topics, so each group learns those `seq`s from here, as it learns broker liveness.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from schemas import event_types as ET
from statemachine.events import Event
from statemachine.frozen import rebuilt
from statemachine.profiles import KafkaProfile
from statemachine.rows import BrokerIntervalRow, ControllerRow, FindingRow, Ints

# Step kinds.
FAILOVER = "ControllerFailover"
BROKER_CHANGE = "BrokerChange"
SHUTDOWN = "ControlledShutdown"
DELETION = "DeletionActivity"

# Events whose handler walks every queued topic (`TopicDeletionManager.resumeDeletions`,
# Kafka 3.7.1): a deletion request (`processTopicDeletion` -> `enqueueTopicsForDeletion`,
# KafkaController.scala:1809, TopicDeletionManager.scala:121-126; /admin/delete_topics
# still lists every queued topic, so the walk happens whichever topic the event names) and
# a StopReplica response (`processTopicDeletionStopReplicaResponseReceived`,
# KafkaController.scala:1465-1469: `completeReplicaDeletion` walks unconditionally,
# `failReplicaDeletion` when the topic is queued; the controller queues the event only for
# topics whose deletion has started, `ControllerChannelManager.sendStopReplicaRequests`). The walks
# inside a broker change (`resumeDeletionForTopics` in `onBrokerStartup`,
# `failReplicaDeletion` in `onReplicasBecomeOffline`) and at a reassignment's completion
# depend on which topics are queued, which only the replay knows: they walk the topics
# at hand (docs/core.md, where the replay knowingly differs). A failover's
# `tryTopicDeletion` walks every topic already: its step reaches every group.
DELETION_ACTIVITY = frozenset({ET.TOPIC_DELETION_REQUESTED, ET.STOP_REPLICA_RESPONSE})
# Every event type the timeline takes.
TIMELINE_EVENTS = ET.CLUSTER_EVENTS | DELETION_ACTIVITY


@dataclass(frozen=True, slots=True)
class ClusterStep:
    """One cluster-level controller action and the cluster as it is around it."""

    seq: int
    ts: Any
    kind: str
    new: Ints = ()  # BrokerChange: brokers that registered (ascending)
    bounced: Ints = ()  # BrokerChange: brokers that re-registered while known
    dead: Ints = ()  # BrokerChange: brokers that disappeared
    broker: int = -1  # ControlledShutdown: the broker; failover: the new controller
    # DeletionActivity: the event type (the cause of the partition windows it changes)
    event_type: str = ""
    live_before: frozenset[int] = frozenset()  # live (not shutting down) before the step
    shutting_down_before: frozenset[int] = frozenset()  # shutting down before the step
    live_after: frozenset[int] = frozenset()
    shutting_down_after: frozenset[int] = frozenset()
    epoch: int = 0  # controller epoch in force during and after the step
    controller: int = -1
    # Failover: the topics queued for deletion the new controller read, when logged
    # (`fetchTopicDeletionsInProgress`); None: not known, the replay keeps its own.
    queued: frozenset[str] | None = None
    # Failover: the controller epoch went back (ZooKeeper's data is not what the last
    # controller left): the partitions known before belong to another history.
    reset: bool = False

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt(self)


@dataclass(frozen=True, slots=True)
class ClusterState:
    live: frozenset[int]
    shutting_down: frozenset[int]
    epoch: int
    controller: int

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt(self)


@dataclass(slots=True)
class ClusterTimeline:
    """Steps in processing order plus a bisectable index of the state after each step."""

    steps: tuple[ClusterStep, ...]
    initial: ClusterState
    findings: tuple[FindingRow, ...] = ()
    _seqs: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._seqs = [s.seq for s in self.steps]

    def state_at(self, seq: int) -> ClusterState:
        """The cluster after every step with a `seq` at or below `seq`."""
        i = bisect_right(self._seqs, seq) - 1
        if i < 0:
            return self.initial
        s = self.steps[i]
        return ClusterState(s.live_after, s.shutting_down_after, s.epoch, s.controller)

    def steps_after(self, seq: int) -> tuple[ClusterStep, ...]:
        """Steps with a `seq` strictly above `seq`, in order."""
        return self.steps[bisect_right(self._seqs, seq) :]

    @property
    def last_seq(self) -> int | None:
        return self._seqs[-1] if self._seqs else None

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Through __init__, like the frozen ones: a compiled class's pickled state and a
        # slotted dataclass's differ, and a driver and its workers may be one of each.
        return rebuilt(self)


def _finding(e: Event, kind: str, detail: str) -> FindingRow:
    return FindingRow(e.seq, e.ts, None, None, e.broker_id, kind, detail, e.source)


@dataclass(slots=True)
class _Folding:
    """The cluster while `build_timeline` folds the events, and what it has produced."""

    live: frozenset[int]
    shutting_down: frozenset[int]
    epoch: int
    controller: int
    steps: list[ClusterStep] = field(default_factory=list)
    findings: list[FindingRow] = field(default_factory=list)
    # Whether `epoch` rests on an epoch the log stated (else it is counted from the start).
    epoch_logged: bool = False

    def record(self, seq: int, ts: Any, kind: str, live: frozenset[int],
               shutting_down: frozenset[int], *, new: Ints = (), bounced: Ints = (),
               dead: Ints = (), broker: int = -1, event_type: str = "",
               queued: frozenset[str] | None = None, reset: bool = False) -> None:
        """Move the cluster to (`live`, `shutting_down`) by a step of `kind`."""
        self.steps.append(ClusterStep(
            seq, ts, kind, new=new, bounced=bounced, dead=dead, broker=broker,
            event_type=event_type,
            live_before=self.live, shutting_down_before=self.shutting_down,
            live_after=live, shutting_down_after=shutting_down,
            epoch=self.epoch, controller=self.controller, queued=queued, reset=reset,
        ))
        self.live, self.shutting_down = live, shutting_down


def build_timeline(
    cluster_events: Iterable[Event],
    initial_live: Iterable[int] = (),
    initial_epoch: int = 0,
    initial_controller: int = -1,
    profile: KafkaProfile | None = None,
) -> ClusterTimeline:
    """Fold the cluster-scope events (any order) into a timeline; deletion-activity events
    among them become `DELETION` steps, other event types are ignored.

    `profile` (default 3.7's) decides whether a re-registration of a known broker is a
    bounce (`KafkaProfile.broker_bounce`).

    Events Kafka's controller could not have seen (a failure of a broker that was never
    registered, a controlled shutdown of an unknown broker) are not applied and become
    findings, as the controller would have ignored or rejected them.
    """
    by_seq: dict[int, list[Event]] = {}
    for e in cluster_events:
        by_seq.setdefault(e.seq, []).append(e)
    fold = _Folding(frozenset(initial_live), frozenset(), initial_epoch, initial_controller)
    bounces = profile is None or profile.broker_bounce
    initial = ClusterState(fold.live, fold.shutting_down, fold.epoch, fold.controller)
    for seq in sorted(by_seq):
        group = by_seq[seq]
        for e in group:
            if e.event_type == ET.CONTROLLER_FAILOVER:
                _controller_failover(fold, e)
        _broker_change(fold, seq, group, bounces)
        _controlled_shutdowns(fold, seq, group)
        _deletion_activity(fold, seq, group)
    return ClusterTimeline(tuple(fold.steps), initial, tuple(fold.findings))


def _brokers_of(group: list[Event], event_type: str) -> list[int]:
    """The brokers of the events of `event_type` in one seq, ascending, once each."""
    return sorted({e.broker_id for e in group
                   if e.event_type == event_type and e.broker_id is not None})


def _controller_failover(fold: _Folding, e: Event) -> None:
    """A new controller (`KafkaController.onControllerFailover`): the registered brokers,
    and the topics queued for deletion when the log says, are read from ZooKeeper.
    `shuttingDownBrokerIds` is in-memory state of the old controller and is lost
    (`initializeControllerContext` clears it).

    The epoch is the one the controller logged it was elected in, else the last one plus
    one. ZooKeeper's `/controller_epoch` only ever goes up: the election increments it
    with a conditional write (`KafkaZkClient.registerControllerAndIncrementControllerEpoch`),
    and it starts at 1 only when the znode is missing. A logged epoch below the one in
    force (logged, or counted on from a logged one) therefore means ZooKeeper's data is
    not what the last controller left (wiped under the running cluster: the new
    controller finds no topics): a new history starts, which the step carries (`reset`)."""
    logged = e.controller_epoch
    reset = logged is not None and fold.epoch_logged and logged < fold.epoch
    if reset:
        fold.findings.append(_finding(
            e, "controller_epoch_reset",
            f"controller {e.broker_id} elected in epoch {logged} after epoch {fold.epoch}: "
            "ZooKeeper's data is not the last controller's (wiped?); the partitions known "
            "before are closed and a new history starts"))
    fold.epoch = logged if logged is not None else fold.epoch + 1
    fold.epoch_logged = fold.epoch_logged or logged is not None
    fold.controller = e.broker_id if e.broker_id is not None else -1
    queued = None if e.topics_to_be_deleted is None else frozenset(e.topics_to_be_deleted)
    fold.record(e.seq, e.ts, FAILOVER, frozenset(e.brokers or ()), frozenset(),
                broker=fold.controller, queued=queued, reset=reset)


def _broker_change(fold: _Folding, seq: int, group: list[Event], bounces: bool) -> None:
    """The broker startups and failures of one seq as one `BrokerChange`
    (`KafkaController.processBrokerChange`): new, bounced (re-registered while known) and
    dead brokers. A failure of an unregistered broker is ignored.

    Version note: before 2.2 (KIP-380, `bounces` false) the handler compared only the ids
    registered in ZK with the known ones: a known broker that registers again is neither
    new nor dead, and nothing happens (it keeps its place, shutting down or not)."""
    starting = _brokers_of(group, ET.BROKER_STARTUP)
    failing = _brokers_of(group, ET.BROKER_FAILURE)
    if not (starting or failing):
        return
    known = fold.live | fold.shutting_down
    new = tuple(b for b in starting if b not in known)
    bounced = tuple(b for b in starting if b in known) if bounces else ()
    dead = tuple(b for b in failing if b in known and b not in starting)
    for e in group:
        if e.event_type == ET.BROKER_FAILURE and e.broker_id not in known:
            fold.findings.append(_finding(
                e, "unknown_broker_failure",
                f"broker {e.broker_id} failed but was not registered; ignored"))
        elif e.event_type == ET.BROKER_FAILURE and e.broker_id in starting:
            fold.findings.append(_finding(
                e, "contradictory_broker_change",
                f"broker {e.broker_id} both started and failed in one event; "
                + ("treated as a bounce" if bounces else
                   "the ZooKeeper read finds it registered (before 2.2 a re-registration "
                   "of a known broker changes nothing)")))
    live = (fold.live | frozenset(new) | frozenset(bounced)) - frozenset(dead)
    # A bounced or dead broker is no longer shutting down (`onBrokerFailure` removes it
    # from shuttingDownBrokerIds first).
    shutting_down = fold.shutting_down - frozenset(dead) - frozenset(bounced)
    live = live - shutting_down
    fold.record(seq, group[0].ts, BROKER_CHANGE, live, shutting_down,
                new=new, bounced=bounced, dead=dead)


def _controlled_shutdowns(fold: _Folding, seq: int, group: list[Event]) -> None:
    """The `ControlledShutdown` requests of one seq, in ascending broker id. A request
    from an unregistered broker fails with BrokerNotAvailableException."""
    for b in _brokers_of(group, ET.CONTROLLED_SHUTDOWN):
        e = next(x for x in group if x.event_type == ET.CONTROLLED_SHUTDOWN
                 and x.broker_id == b)
        if b not in fold.live and b not in fold.shutting_down:
            fold.findings.append(_finding(
                e, "broker_not_available",
                f"controlled shutdown of broker {b}, which is not registered "
                "(BrokerNotAvailableException)"))
            continue
        fold.record(seq, e.ts, SHUTDOWN, fold.live - {b}, fold.shutting_down | {b},
                    broker=b)


def _deletion_activity(fold: _Folding, seq: int, group: list[Event]) -> None:
    """One `DELETION` step for a seq with deletion activity, after its other steps: the
    groups apply it after their own events of the seq (`statemachine.replay.Fold`)."""
    types = sorted({e.event_type for e in group if e.event_type in DELETION_ACTIVITY})
    if types:
        ts = min((e.ts for e in group if e.event_type in DELETION_ACTIVITY and e.ts is not None),
                 default=None)
        fold.record(seq, ts, DELETION, fold.live, fold.shutting_down, event_type=types[0])


class _OpenInterval(NamedTuple):
    """A broker's current status in `broker_intervals`, and since when."""

    status: str
    seq_from: int
    ts_from: Any


def broker_intervals(timeline: ClusterTimeline) -> list[BrokerIntervalRow]:
    """Status intervals per broker (live, shutting_down, dead), for `broker_timeline`."""
    open_intervals: dict[int, _OpenInterval] = {}
    rows: list[BrokerIntervalRow] = []

    def status_of(b: int, live: frozenset[int], shutting_down: frozenset[int]) -> str:
        return "live" if b in live else "shutting_down" if b in shutting_down else "dead"

    for b in sorted(timeline.initial.live):
        open_intervals[b] = _OpenInterval("live", -1, None)
    for s in timeline.steps:
        brokers = (s.live_after | s.shutting_down_after | s.live_before
                   | s.shutting_down_before | set(open_intervals))
        for b in sorted(brokers):
            now = status_of(b, s.live_after, s.shutting_down_after)
            prev = open_intervals.get(b)
            # A bounce is a failure and a start in one event: close and reopen the interval.
            if prev is not None and (prev.status != now or b in s.bounced):
                rows.append(BrokerIntervalRow(b, prev.status, prev.seq_from, s.seq,
                                              prev.ts_from, s.ts))
            if prev is None or prev.status != now or b in s.bounced:
                open_intervals[b] = _OpenInterval(now, s.seq, s.ts)
    for b in sorted(open_intervals):
        status, seq_from, ts_from = open_intervals[b]
        rows.append(BrokerIntervalRow(b, status, seq_from, None, ts_from, None))
    return rows


def controller_rows(timeline: ClusterTimeline) -> list[ControllerRow]:
    return [
        ControllerRow(s.controller, s.epoch, s.seq, s.ts, tuple(sorted(s.live_after)))
        for s in timeline.steps
        if s.kind == FAILOVER
    ]
