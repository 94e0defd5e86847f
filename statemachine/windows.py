"""Windows of unavailability: from the event at which a partition starts to meet a condition
to the event at which it stops (`partition_windows` rows).

The conditions are those of the `kafka-topics --describe` filters
(`TopicCommand.PartitionDescription`, Kafka 3.7.1), evaluated on the controller's view after
each event and each cluster step:

* ``offline`` (`--unavailable-partitions`, `hasUnavailablePartitions`): no leader (no
  leadership info, or leader -1) or a leader that is not a registered broker (live or
  shutting down: a shutting-down broker still serves).
* ``under_replicated`` (`--under-replicated-partitions`, `isUnderReplicated`): ISR smaller
  than the replication factor, which during a reassignment is the assignment minus the
  adding replicas (`getReplicationFactor`).
* ``under_min_isr`` (`--under-min-isr-partitions`, `isUnderMinIsr`): no leader, or ISR
  smaller than the topic's min.insync.replicas (`ReplayConfig`). "No leader" is the
  ``offline`` condition: the metadata an admin client reads names no leader when the
  leader is not a registered broker.
* ``reassigning``: a reassignment in progress (adding or removing replicas), so that a
  stuck one shows.
* ``deleting``: the topic is queued for deletion, so that a stuck deletion shows.

Only a partition in the controller's assignment has windows: a partition not yet created,
or whose topic's deletion has completed (`removeTopic`), has none; the deletion closes its
windows. (The partition machine moves a deleted topic's partitions to NonExistentPartition
as soon as the deletion starts, long before its replicas are deleted, so that state cannot
be the test.) While the topic is queued for deletion, ``offline``, ``under_replicated``
and ``under_min_isr`` are closed and not opened: a deletion is intended, not an outage;
``reassigning`` stays, because a reassignment in progress is what keeps a deletion waiting.

The cause of a window is the controller event after which the condition first held:
the event's type, and for a cluster step its broker (the broker of a ControlledShutdown).
A ControllerFailover names the broker whose loss opened the window: the new controller's
`KafkaController.onControllerFailover` reads the live brokers from /brokers/ids, so a
broker registered before (live or shutting down) and absent from that list died unseen,
typically the old controller's own broker, whose BrokerChange nobody processed. The
partitions it led go offline or elect another leader
(`PartitionStateMachine.triggerOnlinePartitionStateChange`), and its replicas become
OfflineReplica and leave the ISR (`ReplicaStateMachine.startup`). The window's broker is
the partition's leader before the failover if that leader was lost, else the lowest id
among the lost brokers holding a replica of it; only when the partition lost none of its
brokers (nothing died, the window opened for another reason) is it the new controller.

One BrokerChange step may cover several brokers starting and failing in one event; the
window's broker is then the partition's leader before the step if that leader is one of
them, else the lowest id among them that holds a replica of the partition, else the lowest
id among them; its event is BrokerFailure if that broker failed, BrokerStartup if it
started (new or bounced).
`end_event` and `end_broker` follow the same rule.

The `offline` and `under_min_isr` windows opened at one seq are the windows of one incident
(`statemachine.incidents`): their `incident_id` is that seq (`incident_of`).

Only the partitions an event touched are evaluated (`ControllerContext.touched`), plus,
after a cluster step, every partition of a topic with a replica on the step's brokers, and
after a ControllerFailover every partition: liveness can make a leader unavailable without
touching its partition. Open windows are saved with the partition (`BucketState`), so a
window open at the end of one replay is closed by the replay that ends it: the rows of
consecutive replays are the rows of one replay of the same events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import Any, Protocol

from schemas import event_types as ET
from statemachine.cluster import BROKER_CHANGE, FAILOVER, SHUTDOWN, ClusterStep
from statemachine.model import (
    BITS,
    DELETING,
    INCIDENT_KINDS,
    KINDS,
    OFFLINE,
    REASSIGNING,
    UNDER_MIN_ISR,
    UNDER_REPLICATED,
    OpenWindow,
    Part,
    Topic,
    incident_of,
    open_window_rows,
    window_mask,
)
from statemachine.rows import PartitionWindowRow

__all__ = ["DELETING", "KINDS", "OFFLINE", "REASSIGNING", "UNDER_MIN_ISR", "UNDER_REPLICATED",
           "INCIDENT_KINDS", "OpenWindow", "window_mask", "incident_of"]

_DELETING, _OFFLINE, _REASSIGNING, _UNDER_MIN_ISR, _UNDER_REPLICATED = (
    BITS[DELETING], BITS[OFFLINE], BITS[REASSIGNING], BITS[UNDER_MIN_ISR], BITS[UNDER_REPLICATED])
_ROW_ORDER = itemgetter(0, 1, 2)  # (topic, partition, kind)
# NamedTuples built at C speed (a NamedTuple's own __new__ is a Python function).
_new = tuple.__new__

Cause = tuple[str | None, int | None]  # (event type, broker)


class _Rows(Protocol):
    @property
    def partition_windows(self) -> list[PartitionWindowRow]: ...


class WindowView(Protocol):
    """What the windows read of the replay's context (`statemachine.context` provides
    it): the current event, the brokers available, the settings and the touched partitions.
    A protocol, so that this module sits below the context and uses only the model."""

    @property
    def seq(self) -> int: ...
    @property
    def ts(self) -> object: ...
    @property
    def out(self) -> _Rows: ...
    @property
    def topics(self) -> dict[str, Topic]: ...
    @property
    def touched(self) -> list[Part]: ...
    @property
    def live_or_shutting_down(self) -> frozenset[int]: ...
    @property
    def min_isr(self) -> dict[str, int]: ...
    @property
    def default_min_isr(self) -> int: ...

    def mark(self, part: Part) -> None: ...
    def topics_on(self, brokers: Iterable[int]) -> list[Topic]: ...


def conditions(part: Part, queued: bool, available: frozenset[int], min_isr: int) -> int:
    """The bits of the kinds whose condition `part` meets. `available`: the live and
    shutting-down brokers; `queued`: the topic is queued for deletion."""
    replicas = part.replicas
    if not replicas:
        return 0
    moving = part.adding or part.removing
    if queued:
        return _DELETING | _REASSIGNING if moving else _DELETING
    mask = _REASSIGNING if moving else 0
    if part.has_leadership:
        leader, isr = part.leader, len(part.isr)
    else:
        leader, isr = -1, 0
    if leader < 0 or leader not in available:
        mask |= _OFFLINE | _UNDER_MIN_ISR
    elif isr < min_isr:
        mask |= _UNDER_MIN_ISR
    if isr < (len(replicas) - len(part.adding) if moving else len(replicas)):
        mask |= _UNDER_REPLICATED
    return mask


def _seconds(start_ts: Any, end_ts: Any) -> float | None:
    """(end - start) / 1e6 for microsecond timestamps; None when either is unknown."""
    if start_ts is None or end_ts is None:
        return None
    delta = end_ts - start_ts
    total = getattr(delta, "total_seconds", None)  # datetimes, in case a caller uses them
    return float(total()) if total is not None else float(delta) / 1e6


def _change(ctx: WindowView, part: Part, mask: int, cause: Cause, seq: int) -> None:
    """Close the windows whose condition ended, open those whose condition began, at
    `seq` (the event's, unless the partition's own record of it is elsewhere)."""
    old = part.window_mask
    windows = part.windows
    if windows is None:
        windows = part.windows = {}
    ts, rows = ctx.ts, ctx.out.partition_windows
    event = None if seq == ctx.seq else ctx.seq
    for bit, kind in KINDS:
        if old & bit and not mask & bit:
            w = windows.pop(kind)
            rows.append(_new(PartitionWindowRow, (
                part.topic, part.partition, kind, w[0], w[1], seq, ts, _seconds(w[1], ts),
                w[2], w[3], cause[0], cause[1],
                incident_of(kind, w[0] if len(w) < 5 or w[4] is None else w[4]))))
        elif mask & bit and not old & bit:
            windows[kind] = _new(OpenWindow, (seq, ts, *cause, event))
    part.window_mask = mask
    if not windows:
        part.windows = None


def settle(ctx: WindowView, cause: Cause | Callable[[Part], Cause],
           at: Callable[[Part], int] | None = None) -> None:
    """Evaluate the partitions touched since the last settle, open and close their windows
    (`cause`: of the current event, or per partition for a cluster step), and forget them.
    `at`: where a partition's windows open and close, when not at the event's seq (a KRaft
    partition's own record in its broker operation's batch); they belong to the event
    (`incident_id`) all the same. Closed windows of one event come out sorted by (topic,
    partition, kind)."""
    touched = ctx.touched
    topics, available, min_isr = ctx.topics, ctx.live_or_shutting_down, ctx.min_isr
    default = ctx.default_min_isr
    if len(touched) == 1:
        # The hot path (an ISR change): one partition, and usually nothing to do.
        part = touched.pop()
        part.marked = False
        name = part.topic
        topic = topics.get(name)
        mask = conditions(part, topic is not None and topic.queued_for_deletion, available,
                          min_isr.get(name, default) if min_isr else default)
        if mask != part.window_mask:
            _change(ctx, part, mask, cause if isinstance(cause, tuple) else cause(part),
                    ctx.seq if at is None else at(part))
        return
    changed: list[tuple[Part, int]] = []
    for part in touched:
        part.marked = False
        name = part.topic
        topic = topics.get(name)
        mask = conditions(part, topic is not None and topic.queued_for_deletion, available,
                          min_isr.get(name, default) if min_isr else default)
        if mask != part.window_mask:
            changed.append((part, mask))
    touched.clear()
    rows = ctx.out.partition_windows
    first = len(rows)
    for part, mask in changed:
        _change(ctx, part, mask, cause if isinstance(cause, tuple) else cause(part),
                ctx.seq if at is None else at(part))
    if len(rows) - first > 1:
        rows[first:] = sorted(rows[first:], key=_ROW_ORDER)


def mark_topics(ctx: WindowView, topics: Iterable[Topic]) -> None:
    """Have every partition of `topics` evaluated at the next settle."""
    for topic in topics:
        for part in topic.parts.values():
            ctx.mark(part)


# -- cluster steps -------------------------------------------------------------------------


def step_brokers(step: ClusterStep) -> tuple[int, ...]:
    """The brokers whose liveness the step changes, ascending (all for a failover: the
    caller evaluates every partition then)."""
    if step.kind == BROKER_CHANGE:
        return tuple(sorted({*step.new, *step.bounced, *step.dead}))
    if step.kind == SHUTDOWN:
        return (step.broker,)
    return ()


def lost_at_failover(step: ClusterStep) -> frozenset[int]:
    """The brokers a failover finds gone: registered before it (live or shutting down) and
    absent from the live brokers the new controller read."""
    if step.kind != FAILOVER:
        return frozenset()
    return (step.live_before | step.shutting_down_before) - step.live_after


def leaders_before(ctx: WindowView, step: ClusterStep) -> dict[Part, int]:
    """Before a BrokerChange of several brokers: the leader of every partition it can
    touch, for the cause rule (the broker a partition lost). Empty when
    the step has one broker: the cause is then that broker. Before a failover that lost
    brokers: the partitions they led, with that leader (the failover may elect another)."""
    if step.kind == FAILOVER:
        lost = lost_at_failover(step)
        return {p: p.leader for topic in ctx.topics_on(sorted(lost))
                for p in topic.parts.values() if p.has_leadership and p.leader in lost}
    if step.kind != BROKER_CHANGE or len(step_brokers(step)) < 2:
        return {}
    brokers = (*step_brokers(step), *sorted(step.shutting_down_before))
    return {p: p.leader if p.has_leadership else -1
            for topic in ctx.topics_on(brokers) for p in topic.parts.values()}


def step_cause(step: ClusterStep, leaders: dict[Part, int]) -> Cause | Callable[[Part], Cause]:
    """The cause of the windows a step opens or closes (the rule in the module docstring)."""
    if step.kind == FAILOVER:
        return failover_cause(step, leaders)
    if step.kind == SHUTDOWN:
        return ET.CONTROLLED_SHUTDOWN, step.broker
    brokers = step_brokers(step)
    dead = frozenset(step.dead)
    if len(brokers) == 1:
        return _broker_cause(brokers[0], dead)

    def per_part(part: Part) -> Cause:
        leader = leaders.get(part, -1)
        if leader in brokers:
            return _broker_cause(leader, dead)
        hosted = [b for b in brokers if b in part.replicas]
        return _broker_cause(hosted[0] if hosted else brokers[0], dead)

    return per_part


def _broker_cause(b: int, dead: frozenset[int]) -> Cause:
    # Module level, not nested in `step_cause`: compiled, a closure that another closure
    # calls is kept in their shared environment, a reference cycle the paused collector
    # would leave behind.
    return (ET.BROKER_FAILURE if b in dead else ET.BROKER_STARTUP), b


def failover_cause(step: ClusterStep,
                   leaders: dict[Part, int]) -> Cause | Callable[[Part], Cause]:
    """A failover's cause: per partition, the lost broker that led it, else the lowest
    lost broker hosting a replica of it, else the new controller."""
    controller: Cause = ET.CONTROLLER_FAILOVER, step.broker if step.broker >= 0 else None
    lost = sorted(lost_at_failover(step))
    if not lost:
        return controller

    def per_part(part: Part) -> Cause:
        leader = leaders.get(part)
        if leader is not None:
            return ET.CONTROLLER_FAILOVER, leader
        hosted = [b for b in lost if b in part.replicas]
        return (ET.CONTROLLER_FAILOVER, hosted[0]) if hosted else controller

    return per_part


def settle_step(ctx: WindowView, step: ClusterStep, leaders: dict[Part, int]) -> None:
    """After a cluster step: the touched partitions, every partition of the topics on the
    step's brokers, and after a failover every partition."""
    if step.kind == FAILOVER:
        mark_topics(ctx, ctx.topics.values())
    else:
        mark_topics(ctx, ctx.topics_on(step_brokers(step)))
    settle(ctx, step_cause(step, leaders))


def open_rows(topic: str, part: Part) -> list[PartitionWindowRow]:
    """The windows `part` still has open, as rows without an end, sorted by kind."""
    return [_new(PartitionWindowRow, w) for w in open_window_rows(topic, part)]
