"""Kafka 3.7.1 `ReplicaStateMachineTest` (scenarios.md R01-R45) against the replica machine.

Fixture as in Kafka: controller 5, controller epoch 50, partition t-0, replica (t-0, 5).
Kafka's test verifies calls on a mocked batch; the core emits requests as sent, so the
recipients are made live where a test verifies a request (scenarios.md section 9).
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
    assert (change.broker_id, change.from_state, change.to_state, change.valid) == (
        5, (from_state or R.NonExistentReplica).name, to.name, False)
    assert kinds(ctx.out) == ["invalid_transition"]


# -- startup -----------------------------------------------------------------------------


def test_R01_startup_online_partition() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5])
    flows.on_controller_failover(ctx, ctx.topics[T])
    assert part.replica_states == {5: R.OnlineReplica}
    # The Online->Online step finds no leadership info and sends nothing to the replica.
    assert not [r for r in ctx.out.state_changes
                if r.machine == "replica" and not r.valid]


def test_R02_startup_offline_partition() -> None:
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


def test_R03_startup_with_replica_without_leader() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [100])
    flows.on_controller_failover(ctx, ctx.topics[T])
    assert part.replica_states == {100: R.OfflineReplica}


# -- from NonExistentReplica -------------------------------------------------------------


def test_R04_nonexistent_replica_to_new_replica() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0)
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.NewReplica)
    assert part.replica_states == {5: R.NewReplica}
    assert requests_count(ctx.out) == 0  # no leadership info: nothing is sent


def test_R05_invalid_nonexistent_replica_to_online_replica() -> None:
    _invalid(None, R.OnlineReplica)


def test_R06_invalid_nonexistent_replica_to_offline_replica() -> None:
    _invalid(None, R.OfflineReplica)


def test_R07_invalid_nonexistent_replica_to_replica_deletion_started() -> None:
    _invalid(None, R.ReplicaDeletionStarted)


def test_R08_invalid_nonexistent_replica_to_replica_deletion_ineligible() -> None:
    _invalid(None, R.ReplicaDeletionIneligible)


def test_R09_invalid_nonexistent_replica_to_replica_deletion_successful() -> None:
    _invalid(None, R.ReplicaDeletionSuccessful)


# -- from NewReplica ---------------------------------------------------------------------


def test_R10_invalid_new_replica_to_nonexistent_replica() -> None:
    _invalid(R.NewReplica, R.NonExistentReplica)


def test_R11_new_replica_to_online_replica() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], replica_states={5: R.NewReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OnlineReplica)
    assert part.replica_states == {5: R.OnlineReplica}
    assert part.replicas == (5,)
    assert requests_count(ctx.out) == 0


def test_R11b_new_replica_not_in_assignment_is_appended() -> None:
    """§4.3: New->Online appends a replica missing from the assignment (error logged)."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [6], replica_states={5: R.NewReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OnlineReplica)
    assert part.replica_states == {5: R.OnlineReplica}
    assert part.replicas == (6, 5)
    assert kinds(ctx.out) == ["replica_not_in_assignment"]


def test_R12_new_replica_to_offline_replica() -> None:
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


def test_R13_invalid_new_replica_to_replica_deletion_started() -> None:
    _invalid(R.NewReplica, R.ReplicaDeletionStarted)


def test_R14_invalid_new_replica_to_replica_deletion_ineligible() -> None:
    _invalid(R.NewReplica, R.ReplicaDeletionIneligible)


def test_R15_invalid_new_replica_to_replica_deletion_successful() -> None:
    _invalid(R.NewReplica, R.ReplicaDeletionSuccessful)


# -- from OnlineReplica ------------------------------------------------------------------


def test_R16_invalid_online_replica_to_nonexistent_replica() -> None:
    _invalid(R.OnlineReplica, R.NonExistentReplica)


def test_R17_invalid_online_replica_to_new_replica() -> None:
    _invalid(R.OnlineReplica, R.NewReplica)


def test_R20_invalid_online_replica_to_replica_deletion_started() -> None:
    _invalid(R.OnlineReplica, R.ReplicaDeletionStarted)


def test_R21_invalid_online_replica_to_replica_deletion_ineligible() -> None:
    _invalid(R.OnlineReplica, R.ReplicaDeletionIneligible)


def test_R22_invalid_online_replica_to_replica_deletion_successful() -> None:
    _invalid(R.OnlineReplica, R.ReplicaDeletionSuccessful)


def _online_with_cached_state(from_state: R) -> None:
    """R18, R25, R43: -> Online with leadership S = (5, [5], e0, v0, c50) sends
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


def test_R18_online_replica_to_online_replica() -> None:
    _online_with_cached_state(R.OnlineReplica)


def test_R19_online_replica_to_offline_replica() -> None:
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


def test_R23_invalid_offline_replica_to_nonexistent_replica() -> None:
    _invalid(R.OfflineReplica, R.NonExistentReplica)


def test_R24_invalid_offline_replica_to_new_replica() -> None:
    _invalid(R.OfflineReplica, R.NewReplica)


def test_R28_invalid_offline_replica_to_replica_deletion_successful() -> None:
    _invalid(R.OfflineReplica, R.ReplicaDeletionSuccessful)


def test_R25_offline_replica_to_online_replica() -> None:
    _online_with_cached_state(R.OfflineReplica)


def test_R26_offline_replica_to_replica_deletion_started() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, replica_states={5: R.OfflineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.ReplicaDeletionStarted)
    assert part.replica_states == {5: R.ReplicaDeletionStarted}
    assert sr(ctx.out) == [(5, T, 0, True, -1)]
    assert lai(ctx.out) == [] and um(ctx.out) == []


def test_R27_offline_replica_to_replica_deletion_ineligible() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, replica_states={5: R.OfflineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.ReplicaDeletionIneligible)
    assert part.replica_states == {5: R.ReplicaDeletionIneligible}
    assert requests_count(ctx.out) == 0


# -- from ReplicaDeletionStarted ---------------------------------------------------------


def test_R29_invalid_replica_deletion_started_to_nonexistent_replica() -> None:
    _invalid(R.ReplicaDeletionStarted, R.NonExistentReplica)


def test_R30_invalid_replica_deletion_started_to_new_replica() -> None:
    _invalid(R.ReplicaDeletionStarted, R.NewReplica)


def test_R31_invalid_replica_deletion_started_to_online_replica() -> None:
    _invalid(R.ReplicaDeletionStarted, R.OnlineReplica)


def test_R32_invalid_replica_deletion_started_to_offline_replica() -> None:
    _invalid(R.ReplicaDeletionStarted, R.OfflineReplica)


def test_R33_replica_deletion_started_to_replica_deletion_ineligible() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, replica_states={5: R.ReplicaDeletionStarted})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.ReplicaDeletionIneligible)
    assert part.replica_states == {5: R.ReplicaDeletionIneligible}
    assert requests_count(ctx.out) == 0


def test_R34_replica_deletion_started_to_replica_deletion_successful() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, replica_states={5: R.ReplicaDeletionStarted})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.ReplicaDeletionSuccessful)
    assert part.replica_states == {5: R.ReplicaDeletionSuccessful}
    assert requests_count(ctx.out) == 0


# -- from ReplicaDeletionSuccessful ------------------------------------------------------


def test_R35_deletion_successful_to_nonexistent_replica() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], replica_states={5: R.ReplicaDeletionSuccessful})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.NonExistentReplica)
    assert part.replicas == ()  # 5 removed from the assignment
    assert part.replica_states == {}  # the entry is removed, not set to NonExistentReplica
    assert requests_count(ctx.out) == 0


def test_R36_invalid_replica_deletion_successful_to_new_replica() -> None:
    _invalid(R.ReplicaDeletionSuccessful, R.NewReplica)


def test_R37_invalid_replica_deletion_successful_to_online_replica() -> None:
    _invalid(R.ReplicaDeletionSuccessful, R.OnlineReplica)


def test_R38_invalid_replica_deletion_successful_to_offline_replica() -> None:
    _invalid(R.ReplicaDeletionSuccessful, R.OfflineReplica)


def test_R39_invalid_replica_deletion_successful_to_replica_deletion_started() -> None:
    _invalid(R.ReplicaDeletionSuccessful, R.ReplicaDeletionStarted)


def test_R40_invalid_replica_deletion_successful_to_replica_deletion_ineligible() -> None:
    _invalid(R.ReplicaDeletionSuccessful, R.ReplicaDeletionIneligible)


# -- from ReplicaDeletionIneligible ------------------------------------------------------


def test_R41_invalid_replica_deletion_ineligible_to_nonexistent_replica() -> None:
    _invalid(R.ReplicaDeletionIneligible, R.NonExistentReplica)


def test_R42_invalid_replica_deletion_ineligible_to_new_replica() -> None:
    _invalid(R.ReplicaDeletionIneligible, R.NewReplica)


def test_R44_invalid_replica_deletion_ineligible_to_replica_deletion_started() -> None:
    _invalid(R.ReplicaDeletionIneligible, R.ReplicaDeletionStarted)


def test_R45_invalid_replica_deletion_ineligible_to_replica_deletion_successful() -> None:
    _invalid(R.ReplicaDeletionIneligible, R.ReplicaDeletionSuccessful)


def test_R43_deletion_ineligible_to_online_replica() -> None:
    _online_with_cached_state(R.ReplicaDeletionIneligible)


# -- gaps the catalogue asks to fill (semantics-derived) ---------------------------------


def test_R_gap_online_to_offline_sole_isr_member() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], leader=5, isr=[5], leader_epoch=3, zk_version=7,
                    replica_states={5: R.OnlineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OfflineReplica)
    # The last ISR member is kept; the leader goes; the epoch is bumped.
    assert leadership(part) == (-1, (5,), 4, 8, EPOCH)
    assert part.replica_states == {5: R.OfflineReplica}
    assert sr(ctx.out) == [(5, T, 0, False, 3)]
    assert lai(ctx.out) == []  # no other assigned replica


def test_R_gap_offline_follower_not_in_isr() -> None:
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


def test_R_gap_new_replica_refused_when_it_is_the_leader() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], leader=5, isr=[5])
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.NewReplica)
    assert part.replica_states == {5: R.NonExistentReplica}
    assert requests_count(ctx.out) == 0
    assert kinds(ctx.out) == ["state_change_failed"]


def test_R_gap_new_replica_with_other_leader_gets_is_new_lai() -> None:
    ctx = make_ctx(live=[5, 6])
    part = add_part(ctx, T, 0, [6, 5], leader=6, isr=[6], leader_epoch=1, zk_version=1)
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.NewReplica)
    assert part.replica_states == {5: R.NewReplica}
    assert lai(ctx.out) == [(5, T, 0, 6, (6,), 1, 1, EPOCH, (6, 5), True)]
    assert [u[:3] for u in um(ctx.out)] == [(T, 0, 6)]
    assert leadership(part) == (6, (6,), 1, 1, EPOCH)


def test_R_empty_call_is_a_no_op() -> None:
    ctx = make_ctx(live=[5])
    add_part(ctx, T, 0, [5])
    handle_replica_changes(ctx, ctx.topics[T], [], R.OfflineReplica)
    assert ctx.out.state_changes == [] and requests_count(ctx.out) == 0
