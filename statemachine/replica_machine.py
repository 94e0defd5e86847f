"""`ZkReplicaStateMachine.handleStateChanges` for replicas of one topic (Kafka 3.7.1,
`ReplicaStateMachine.scala`).

One call is one request batch. Replicas are grouped by broker (`replicas.groupBy(_.replica)`)
and the groups run in the order the Scala library iterates that map
(`statemachine.scala_order`, for `ReplayConfig.scala_binary`): when several brokers leave
one ISR in one call, which member survives as the last one follows that order, and so does
the content of the batch's LeaderAndIsr requests.
"""

from __future__ import annotations

from collections.abc import Sequence

from statemachine.context import ControllerContext
from statemachine.model import NO_LEADER, Part, Topic
from statemachine.requests import RequestBatch
from statemachine.rows import Ints
from statemachine.scala_order import group_by_order
from statemachine.states import (
    REPLICA_NAMES,
    REPLICA_VALID_PREVIOUS,
    REPLICA_VALID_PREVIOUS_BEFORE_2_3,
    ReplicaState,
)

R = ReplicaState
MACHINE = "replica"
NAMES = REPLICA_NAMES

Replica = tuple[Part, int]  # (partition, broker id)


def handle_replica_changes(ctx: ControllerContext, topic: Topic, replicas: Sequence[Replica],
                           target: ReplicaState, call_brokers: Ints = ()) -> None:
    """`call_brokers`: the brokers of Kafka's whole call when it spans more topics than
    this one (a broker change's failed brokers); the groupBy's order depends on every key
    of the map, not only on this topic's. Empty: the call is `replicas` alone."""
    if not replicas:
        return
    batch = RequestBatch(ctx, topic)
    by_broker: dict[int, list[Part]] = {}
    for part, b in replicas:
        by_broker.setdefault(b, []).append(part)
    # Version note: the valid previous states of Ineligible before 2.3 (states.py).
    table = (REPLICA_VALID_PREVIOUS if ctx.config.profile.ineligible_from_offline
             else REPLICA_VALID_PREVIOUS_BEFORE_2_3)
    valid_previous = table[target]
    for b in _broker_order(ctx, tuple(by_broker), call_brokers):
        valid: list[Part] = []
        for part in by_broker[b]:
            current = part.replica_states.get(b)
            if current is None:
                # Kafka inserts the missing entry before checking, even if the
                # transition then turns out to be invalid.
                current = part.replica_states[b] = R.NonExistentReplica
            if current in valid_previous:
                valid.append(part)
            else:
                _invalid(ctx, topic, part, b, current, target, valid_previous)
        if valid:
            _TRANSITIONS[target](ctx, topic, batch, valid, b)
    batch.send()


def _broker_order(ctx: ControllerContext, keys: Ints, call_brokers: Ints) -> Ints:
    """This call's brokers in the order Kafka's groupBy visits them."""
    if not call_brokers:
        return group_by_order(keys, ctx.config.scala_binary)
    order = group_by_order(tuple(dict.fromkeys((*call_brokers, *keys))), ctx.config.scala_binary)
    return tuple(b for b in order if b in keys)


def _invalid(ctx: ControllerContext, topic: Topic, part: Part, b: int, current: int,
             target: ReplicaState, valid_previous: frozenset[ReplicaState]) -> None:
    reason = (f"Replica {b} for partition {topic.name}-{part.partition} should be in the "
              f"{', '.join(s.name for s in sorted(valid_previous))} states "
              f"before moving to {target.name} state. Instead it is in "
              f"{REPLICA_NAMES[current]} state")
    ctx.change(topic.name, part, b, MACHINE, REPLICA_NAMES[current], NAMES[target], False, reason)
    ctx.finding(topic.name, part.partition, b, "invalid_transition", reason)


def _set(ctx: ControllerContext, topic: Topic, part: Part, b: int, target: ReplicaState,
         reason: str | None = None) -> None:
    current = part.replica_states.get(b, R.NonExistentReplica)
    part.replica_states[b] = target
    if current == R.ReplicaDeletionStarted:
        topic.deletion_started_count -= 1
    if target == R.ReplicaDeletionStarted:
        topic.deletion_started_count += 1
    ctx.change(topic.name, part, b, MACHINE, REPLICA_NAMES[current], NAMES[target], True,
               reason)


def _failed(ctx: ControllerContext, topic: Topic, part: Part, b: int, target: ReplicaState,
            detail: str) -> None:
    current = part.replica_states.get(b, R.NonExistentReplica)
    ctx.change(topic.name, part, b, MACHINE, REPLICA_NAMES[current], NAMES[target], True,
               f"failed: {detail}")
    ctx.finding(topic.name, part.partition, b, "state_change_failed", detail)


def _to_new(ctx: ControllerContext, topic: Topic, batch: RequestBatch, parts: list[Part],
            b: int) -> None:
    for part in parts:
        if part.has_leadership:
            if part.leader == b:
                # Kafka's message names OfflineReplica here; the quirk is Kafka's own.
                _failed(ctx, topic, part, b, R.NewReplica,
                        f"Replica {b} for partition {topic.name}-{part.partition} cannot be "
                        "moved to NewReplica state as it is being requested to become leader")
                continue
            batch.add_leader_and_isr((b,), part, is_new=True)
        _set(ctx, topic, part, b, R.NewReplica)


def _to_online(ctx: ControllerContext, topic: Topic, batch: RequestBatch, parts: list[Part],
               b: int) -> None:
    for part in parts:
        if part.replica_states[b] == R.NewReplica:
            if b not in part.replicas:
                ctx.finding(topic.name, part.partition, b, "replica_not_in_assignment",
                            f"replica {b} added to the assignment of "
                            f"{topic.name}-{part.partition} on NewReplica->OnlineReplica")
                ctx.set_assignment(topic, part, (*part.replicas, b), part.adding, part.removing)
        elif part.has_leadership:
            batch.add_leader_and_isr((b,), part, is_new=False)
        _set(ctx, topic, part, b, R.OnlineReplica)


def _to_offline(ctx: ControllerContext, topic: Topic, batch: RequestBatch, parts: list[Part],
                b: int) -> None:
    for part in parts:
        # Epoch taken now, before the ISR removal below.
        batch.add_stop_replica((b,), part, delete=False)
    for part in parts:
        if part.has_leadership:
            # removeReplicasFromIsr: the ZK read is our cached state (the fold is the only
            # writer of it); a write happens only if the replica is in the ISR.
            if b in part.isr:
                if part.leader == b:
                    part.leader = NO_LEADER
                if len(part.isr) > 1:  # the last ISR member is never removed
                    part.isr = tuple(r for r in part.isr if r != b)
                part.leader_epoch += 1
                part.zk_version += 1
                part.written(ctx.epoch)
            else:
                # No write, but the cache is re-stamped with the current controller epoch.
                part.controller_epoch = ctx.epoch
            if not topic.queued_for_deletion:
                batch.add_leader_and_isr(tuple(r for r in part.replicas if r != b), part,
                                         is_new=False)
        else:
            # Refreshes the broker list only, so no row comes of it. Version note: sent
            # from 2.3 on (before, the state alone changed): no table differs.
            batch.add_update_metadata(None)
        _set(ctx, topic, part, b, R.OfflineReplica)


def _to_deletion_started(ctx: ControllerContext, topic: Topic, batch: RequestBatch,
                         parts: list[Part], b: int) -> None:
    for part in parts:
        _set(ctx, topic, part, b, R.ReplicaDeletionStarted)
        batch.add_stop_replica((b,), part, delete=True)


def _state_only(target: ReplicaState):  # type: ignore[no-untyped-def]
    def apply(ctx: ControllerContext, topic: Topic, batch: RequestBatch, parts: list[Part],
              b: int) -> None:
        for part in parts:
            _set(ctx, topic, part, b, target)
    return apply


def _to_non_existent(ctx: ControllerContext, topic: Topic, batch: RequestBatch, parts: list[Part],
                     b: int) -> None:
    for part in parts:
        ctx.set_assignment(
            topic, part,
            tuple(r for r in part.replicas if r != b),
            tuple(r for r in part.adding if r != b),
            tuple(r for r in part.removing if r != b),
        )
        _set(ctx, topic, part, b, R.NonExistentReplica)
        del part.replica_states[b]  # the entry is removed, not kept as NonExistentReplica


_TRANSITIONS = {
    R.NewReplica: _to_new,
    R.OnlineReplica: _to_online,
    R.OfflineReplica: _to_offline,
    R.ReplicaDeletionStarted: _to_deletion_started,
    R.ReplicaDeletionIneligible: _state_only(R.ReplicaDeletionIneligible),
    R.ReplicaDeletionSuccessful: _state_only(R.ReplicaDeletionSuccessful),
    R.NonExistentReplica: _to_non_existent,
}
