"""Kafka 3.7.1 `ReplicaStateMachineTest` against the replica machine.

Fixture as in Kafka: controller 5, controller epoch 50, partition t-0, replica (t-0, 5).
Kafka's test verifies calls on a mocked batch; the core emits requests as sent, so the
recipients are made live where a test verifies a request.
"""

from __future__ import annotations

from statemachine import flows
from statemachine.replica_machine import handle_replica_changes
from tests.helpers.core import (
    EPOCH,
    R,
    add_part,
    kinds,
    lai,
    leadership,
    make_ctx,
    requests_count,
    sr,
    um,
)

T = "t"


def _invalid(from_state: R | None, to: R) -> None:
    """Kafka's `testInvalidTransition(from, to)`: the state is unchanged (a missing entry is
    created as NonExistentReplica first), nothing is sent; the core also records the
    attempt as an invalid state change and a finding."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, replica_states={5: from_state} if from_state is not None else None)
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], to)
    assert part.replica_states == {5: from_state or R.NonExistentReplica}
    assert requests_count(ctx.out) == 0
    (change,) = ctx.out.state_changes
    assert (change.broker_id, change.from_state, change.to_state, change.outcome) == (
        5, (from_state or R.NonExistentReplica).name, to.name, "rejected")
    assert kinds(ctx.out) == ["invalid_transition"]


# -- startup -----------------------------------------------------------------------------


def test_startup_online_partition() -> None:
    """`testStartupOnlinePartition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5])
    flows.on_controller_failover(ctx, ctx.topics[T])
    assert part.replica_states == {5: R.OnlineReplica}
    # The Online->Online step finds no leadership info and sends nothing to the replica.
    assert not [r for r in ctx.out.state_changes
                if r.machine == "replica" and r.outcome != "applied"]


def test_startup_offline_partition() -> None:
    """`testStartupOfflinePartition`."""
    ctx = make_ctx(live=[])
    part = add_part(ctx, T, 0, [5])
    flows.on_controller_failover(ctx, ctx.topics[T])
    assert part.replica_states == {5: R.OfflineReplica}
    # Initialisation gives Ineligible, then the Offline step (no leadership: the UM carries
    # no partition entry, to an empty live set).
    steps = [(r.from_state, r.to_state) for r in ctx.out.state_changes
             if r.machine == "replica"]
    assert steps == [("NonExistentReplica", "ReplicaDeletionIneligible"),
                     ("ReplicaDeletionIneligible", "OfflineReplica")]
    assert requests_count(ctx.out) == 0


def test_startup_with_replica_without_leader() -> None:
    """`testStartupWithReplicaWithoutLeader`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [100])
    flows.on_controller_failover(ctx, ctx.topics[T])
    assert part.replica_states == {100: R.OfflineReplica}


# -- from NonExistentReplica -------------------------------------------------------------


def test_nonexistent_replica_to_new_replica() -> None:
    """`testNonexistentReplicaToNewReplicaTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0)
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.NewReplica)
    assert part.replica_states == {5: R.NewReplica}
    assert requests_count(ctx.out) == 0  # no leadership info: nothing is sent


def test_invalid_nonexistent_replica_to_online_replica() -> None:
    """`testInvalidNonexistentReplicaToOnlineReplicaTransition`."""
    _invalid(None, R.OnlineReplica)


def test_invalid_nonexistent_replica_to_offline_replica() -> None:
    """`testInvalidNonexistentReplicaToOfflineReplicaTransition`."""
    _invalid(None, R.OfflineReplica)


def test_invalid_nonexistent_replica_to_replica_deletion_started() -> None:
    """`testInvalidNonexistentReplicaToReplicaDeletionStartedTransition`."""
    _invalid(None, R.ReplicaDeletionStarted)


def test_invalid_nonexistent_replica_to_replica_deletion_ineligible() -> None:
    """`testInvalidNonexistentReplicaToReplicaDeletionIneligibleTransition`."""
    _invalid(None, R.ReplicaDeletionIneligible)


def test_invalid_nonexistent_replica_to_replica_deletion_successful() -> None:
    """`testInvalidNonexistentReplicaToReplicaDeletionSuccessfulTransition`."""
    _invalid(None, R.ReplicaDeletionSuccessful)


# -- from NewReplica ---------------------------------------------------------------------


def test_invalid_new_replica_to_nonexistent_replica() -> None:
    """`testInvalidNewReplicaToNonexistentReplicaTransition`."""
    _invalid(R.NewReplica, R.NonExistentReplica)


def test_new_replica_to_online_replica() -> None:
    """`testNewReplicaToOnlineReplicaTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], replica_states={5: R.NewReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OnlineReplica)
    assert part.replica_states == {5: R.OnlineReplica}
    assert part.replicas == (5,)
    assert requests_count(ctx.out) == 0


def test_new_replica_not_in_assignment_is_appended() -> None:
    """Next to `testNewReplicaToOnlineReplicaTransition`: New->Online appends a replica
    missing from the assignment (error logged)."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [6], replica_states={5: R.NewReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OnlineReplica)
    assert part.replica_states == {5: R.OnlineReplica}
    assert part.replicas == (6, 5)
    assert kinds(ctx.out) == ["replica_not_in_assignment"]


def test_new_replica_to_offline_replica() -> None:
    """`testNewReplicaToOfflineReplicaTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, replica_states={5: R.NewReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OfflineReplica)
    assert part.replica_states == {5: R.OfflineReplica}
    # SR([5], t-0, delete=false), epoch -1 (no leadership). The UM([5], {t-0}) carries no
    # partition state (no leadership info), so it yields no UM row.
    assert sr(ctx.out) == [(5, T, 0, False, -1)]
    assert ctx.out.stop_replica[0].controller_epoch == EPOCH
    assert um(ctx.out) == []
    assert lai(ctx.out) == []


def test_invalid_new_replica_to_replica_deletion_started() -> None:
    """`testInvalidNewReplicaToReplicaDeletionStartedTransition`."""
    _invalid(R.NewReplica, R.ReplicaDeletionStarted)


def test_invalid_new_replica_to_replica_deletion_ineligible() -> None:
    """`testInvalidNewReplicaToReplicaDeletionIneligibleTransition`."""
    _invalid(R.NewReplica, R.ReplicaDeletionIneligible)


def test_invalid_new_replica_to_replica_deletion_successful() -> None:
    """`testInvalidNewReplicaToReplicaDeletionSuccessfulTransition`."""
    _invalid(R.NewReplica, R.ReplicaDeletionSuccessful)


# -- from OnlineReplica ------------------------------------------------------------------


def test_invalid_online_replica_to_nonexistent_replica() -> None:
    """`testInvalidOnlineReplicaToNonexistentReplicaTransition`."""
    _invalid(R.OnlineReplica, R.NonExistentReplica)


def test_invalid_online_replica_to_new_replica() -> None:
    """`testInvalidOnlineReplicaToNewReplicaTransition`."""
    _invalid(R.OnlineReplica, R.NewReplica)


def test_invalid_online_replica_to_replica_deletion_started() -> None:
    """`testInvalidOnlineReplicaToReplicaDeletionStartedTransition`."""
    _invalid(R.OnlineReplica, R.ReplicaDeletionStarted)


def test_invalid_online_replica_to_replica_deletion_ineligible() -> None:
    """`testInvalidOnlineReplicaToReplicaDeletionIneligibleTransition`."""
    _invalid(R.OnlineReplica, R.ReplicaDeletionIneligible)


def test_invalid_online_replica_to_replica_deletion_successful() -> None:
    """`testInvalidOnlineReplicaToReplicaDeletionSuccessfulTransition`."""
    _invalid(R.OnlineReplica, R.ReplicaDeletionSuccessful)


def _online_with_cached_state(from_state: R) -> None:
    """`testOnlineReplicaToOnlineReplicaTransition`,
    `testOfflineReplicaToOnlineReplicaTransition` and
    `testReplicaDeletionIneligibleToOnlineReplicaTransition`: -> Online with leadership
    S = (5, [5], e0, v0, c50) sends
    LAI([5], t-0, S, [5], isNew=false), implying an UM for t-0 to all; no write."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], leader=5, isr=[5], replica_states={5: from_state})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OnlineReplica)
    assert part.replica_states == {5: R.OnlineReplica}
    assert leadership(part) == (5, (5,), 0, 0, EPOCH)
    assert lai(ctx.out) == [(5, T, 0, 5, (5,), 0, 0, EPOCH, (5,), False)]
    assert ctx.out.leader_and_isr[0].controller_epoch == EPOCH
    assert um(ctx.out) == [(T, 0, 5, (5,), 0, 0, EPOCH, (5,), (), None)]
    assert sr(ctx.out) == []


def test_online_replica_to_online_replica() -> None:
    """`testOnlineReplicaToOnlineReplicaTransition`."""
    _online_with_cached_state(R.OnlineReplica)


def test_online_replica_to_offline_replica() -> None:
    """`testOnlineReplicaToOfflineReplicaTransition`."""
    ctx = make_ctx(live=[5, 6])
    part = add_part(ctx, T, 0, [5, 6], leader=5, isr=[5, 6], replica_states={5: R.OnlineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OfflineReplica)
    assert part.replica_states == {5: R.OfflineReplica}
    # Cached leadership == (leader -1, ISR [6], leaderEpoch 1, zkVersion 1, ctrlEpoch 50);
    # the replica machine elects no leader.
    assert leadership(part) == (-1, (6,), 1, 1, EPOCH)
    assert sr(ctx.out) == [(5, T, 0, False, 0)]  # epoch taken before the ISR removal
    assert lai(ctx.out) == [(6, T, 0, -1, (6,), 1, 1, EPOCH, (5, 6), False)]
    assert [u[:7] for u in um(ctx.out)] == [(T, 0, -1, (6,), 1, 1, EPOCH)]


# -- from OfflineReplica -----------------------------------------------------------------


def test_invalid_offline_replica_to_nonexistent_replica() -> None:
    """`testInvalidOfflineReplicaToNonexistentReplicaTransition`."""
    _invalid(R.OfflineReplica, R.NonExistentReplica)


def test_invalid_offline_replica_to_new_replica() -> None:
    """`testInvalidOfflineReplicaToNewReplicaTransition`."""
    _invalid(R.OfflineReplica, R.NewReplica)


def test_invalid_offline_replica_to_replica_deletion_successful() -> None:
    """`testInvalidOfflineReplicaToReplicaDeletionSuccessfulTransition`."""
    _invalid(R.OfflineReplica, R.ReplicaDeletionSuccessful)


def test_offline_replica_to_online_replica() -> None:
    """`testOfflineReplicaToOnlineReplicaTransition`."""
    _online_with_cached_state(R.OfflineReplica)


def test_offline_replica_to_replica_deletion_started() -> None:
    """`testOfflineReplicaToReplicaDeletionStartedTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, replica_states={5: R.OfflineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.ReplicaDeletionStarted)
    assert part.replica_states == {5: R.ReplicaDeletionStarted}
    assert sr(ctx.out) == [(5, T, 0, True, -1)]
    assert lai(ctx.out) == [] and um(ctx.out) == []


def test_offline_replica_to_replica_deletion_ineligible() -> None:
    """`testOfflineReplicaToReplicaDeletionIneligibleTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, replica_states={5: R.OfflineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.ReplicaDeletionIneligible)
    assert part.replica_states == {5: R.ReplicaDeletionIneligible}
    assert requests_count(ctx.out) == 0


# -- from ReplicaDeletionStarted ---------------------------------------------------------


def test_invalid_replica_deletion_started_to_nonexistent_replica() -> None:
    """`testInvalidReplicaDeletionStartedToNonexistentReplicaTransition`."""
    _invalid(R.ReplicaDeletionStarted, R.NonExistentReplica)


def test_invalid_replica_deletion_started_to_new_replica() -> None:
    """`testInvalidReplicaDeletionStartedToNewReplicaTransition`."""
    _invalid(R.ReplicaDeletionStarted, R.NewReplica)


def test_invalid_replica_deletion_started_to_online_replica() -> None:
    """`testInvalidReplicaDeletionStartedToOnlineReplicaTransition`."""
    _invalid(R.ReplicaDeletionStarted, R.OnlineReplica)


def test_invalid_replica_deletion_started_to_offline_replica() -> None:
    """`testInvalidReplicaDeletionStartedToOfflineReplicaTransition`."""
    _invalid(R.ReplicaDeletionStarted, R.OfflineReplica)


def test_replica_deletion_started_to_replica_deletion_ineligible() -> None:
    """`testReplicaDeletionStartedToReplicaDeletionIneligibleTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, replica_states={5: R.ReplicaDeletionStarted})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.ReplicaDeletionIneligible)
    assert part.replica_states == {5: R.ReplicaDeletionIneligible}
    assert requests_count(ctx.out) == 0


def test_replica_deletion_started_to_replica_deletion_successful() -> None:
    """`testReplicaDeletionStartedToReplicaDeletionSuccessfulTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, replica_states={5: R.ReplicaDeletionStarted})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.ReplicaDeletionSuccessful)
    assert part.replica_states == {5: R.ReplicaDeletionSuccessful}
    assert requests_count(ctx.out) == 0


# -- from ReplicaDeletionSuccessful ------------------------------------------------------


def test_deletion_successful_to_nonexistent_replica() -> None:
    """`testReplicaDeletionSuccessfulToNonexistentReplicaTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], replica_states={5: R.ReplicaDeletionSuccessful})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.NonExistentReplica)
    assert part.replicas == ()  # 5 removed from the assignment
    assert part.replica_states == {}  # the entry is removed, not set to NonExistentReplica
    assert requests_count(ctx.out) == 0


def test_invalid_replica_deletion_successful_to_new_replica() -> None:
    """`testInvalidReplicaDeletionSuccessfulToNewReplicaTransition`."""
    _invalid(R.ReplicaDeletionSuccessful, R.NewReplica)


def test_invalid_replica_deletion_successful_to_online_replica() -> None:
    """`testInvalidReplicaDeletionSuccessfulToOnlineReplicaTransition`."""
    _invalid(R.ReplicaDeletionSuccessful, R.OnlineReplica)


def test_invalid_replica_deletion_successful_to_offline_replica() -> None:
    """`testInvalidReplicaDeletionSuccessfulToOfflineReplicaTransition`."""
    _invalid(R.ReplicaDeletionSuccessful, R.OfflineReplica)


def test_invalid_replica_deletion_successful_to_replica_deletion_started() -> None:
    """`testInvalidReplicaDeletionSuccessfulToReplicaDeletionStartedTransition`."""
    _invalid(R.ReplicaDeletionSuccessful, R.ReplicaDeletionStarted)


def test_invalid_replica_deletion_successful_to_replica_deletion_ineligible() -> None:
    """`testInvalidReplicaDeletionSuccessfulToReplicaDeletionIneligibleTransition`."""
    _invalid(R.ReplicaDeletionSuccessful, R.ReplicaDeletionIneligible)


# -- from ReplicaDeletionIneligible ------------------------------------------------------


def test_invalid_replica_deletion_ineligible_to_nonexistent_replica() -> None:
    """`testInvalidReplicaDeletionIneligibleToNonexistentReplicaTransition`."""
    _invalid(R.ReplicaDeletionIneligible, R.NonExistentReplica)


def test_invalid_replica_deletion_ineligible_to_new_replica() -> None:
    """`testInvalidReplicaDeletionIneligibleToNewReplicaTransition`."""
    _invalid(R.ReplicaDeletionIneligible, R.NewReplica)


def test_invalid_replica_deletion_ineligible_to_replica_deletion_started() -> None:
    """`testInvalidReplicaDeletionIneligibleToReplicaDeletionStartedTransition`."""
    _invalid(R.ReplicaDeletionIneligible, R.ReplicaDeletionStarted)


def test_invalid_replica_deletion_ineligible_to_replica_deletion_successful() -> None:
    """`testInvalidReplicaDeletionIneligibleToReplicaDeletionSuccessfulTransition`."""
    _invalid(R.ReplicaDeletionIneligible, R.ReplicaDeletionSuccessful)


def test_deletion_ineligible_to_online_replica() -> None:
    """`testReplicaDeletionIneligibleToOnlineReplicaTransition`."""
    _online_with_cached_state(R.ReplicaDeletionIneligible)


# -- transitions Kafka's test does not cover (expectations from ReplicaStateMachine.scala) --


def test_online_to_offline_sole_isr_member() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], leader=5, isr=[5], leader_epoch=3, zk_version=7,
                    replica_states={5: R.OnlineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OfflineReplica)
    # The last ISR member is kept; the leader goes; the epoch is bumped.
    assert leadership(part) == (-1, (5,), 4, 8, EPOCH)
    assert part.replica_states == {5: R.OfflineReplica}
    assert sr(ctx.out) == [(5, T, 0, False, 3)]
    assert lai(ctx.out) == []  # no other assigned replica


def test_offline_follower_not_in_isr() -> None:
    ctx = make_ctx(live=[5, 6])
    part = add_part(ctx, T, 0, [6, 5], leader=6, isr=[6], leader_epoch=2, zk_version=4,
                    controller_epoch=49, replica_states={5: R.OnlineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OfflineReplica)
    # No write: leader, ISR, epoch and zkVersion unchanged; the cache is re-stamped with
    # the current controller epoch; LAI with the current state to the other replicas.
    assert leadership(part) == (6, (6,), 2, 4, EPOCH)
    assert lai(ctx.out) == [(6, T, 0, 6, (6,), 2, 4, EPOCH, (6, 5), False)]
    assert sr(ctx.out) == [(5, T, 0, False, 2)]
    assert part.replica_states == {5: R.OfflineReplica}


def test_new_replica_refused_when_it_is_the_leader() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], leader=5, isr=[5])
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.NewReplica)
    assert part.replica_states == {5: R.NonExistentReplica}
    assert requests_count(ctx.out) == 0
    assert kinds(ctx.out) == ["state_change_failed"]
    # Kafka logs this failure with OfflineReplica as the target (3.7.1
    # ReplicaStateMachine.doHandleStateChanges); the replica stays where it was.
    (change,) = ctx.out.state_changes
    assert (change.broker_id, change.from_state, change.to_state, change.outcome) == (
        5, "NonExistentReplica", "OfflineReplica", "failed")


def test_new_replica_with_other_leader_gets_is_new_lai() -> None:
    ctx = make_ctx(live=[5, 6])
    part = add_part(ctx, T, 0, [6, 5], leader=6, isr=[6], leader_epoch=1, zk_version=1)
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.NewReplica)
    assert part.replica_states == {5: R.NewReplica}
    assert lai(ctx.out) == [(5, T, 0, 6, (6,), 1, 1, EPOCH, (6, 5), True)]
    assert [u[:3] for u in um(ctx.out)] == [(T, 0, 6)]
    assert leadership(part) == (6, (6,), 1, 1, EPOCH)


def test_empty_call_is_a_no_op() -> None:
    ctx = make_ctx(live=[5])
    add_part(ctx, T, 0, [5])
    handle_replica_changes(ctx, ctx.topics[T], [], R.OfflineReplica)
    assert ctx.out.state_changes == [] and requests_count(ctx.out) == 0
