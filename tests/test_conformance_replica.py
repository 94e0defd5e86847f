"""Kafka 3.7.1 `ReplicaStateMachineTest` (scenarios.md R01-R45) against the replica machine.

Fixture as in Kafka: controller 5, controller epoch 50, partition t-0, replica (t-0, 5).
Kafka's test verifies calls on a mocked batch; the core emits requests as sent, so the
recipients are made live where a test verifies a request (scenarios.md section 9).
"""

from __future__ import annotations

import pytest

from statemachine import flows
from statemachine.replica_machine import handle_replica_changes
from tests.kafka_fixture import (
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
    part = add_part(ctx, T, 0, rstates={5: from_state} if from_state is not None else None)
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], to)
    assert part.rstates == {5: from_state or R.NonExistentReplica}
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
    assert part.rstates == {5: R.OnlineReplica}
    # The Online->Online step finds no leadership info and sends nothing to the replica.
    assert not [r for r in ctx.out.state_changes
                if r.machine == "replica" and not r.valid]


def test_R02_startup_offline_partition() -> None:
    ctx = make_ctx(live=[])
    part = add_part(ctx, T, 0, [5])
    flows.on_controller_failover(ctx, ctx.topics[T])
    assert part.rstates == {5: R.OfflineReplica}
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
    assert part.rstates == {100: R.OfflineReplica}


# -- from NonExistentReplica -------------------------------------------------------------


def test_R04_nonexistent_replica_to_new_replica() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0)
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.NewReplica)
    assert part.rstates == {5: R.NewReplica}
    assert requests_count(ctx.out) == 0  # no leadership info: nothing is sent


@pytest.mark.parametrize("case, target", [
    ("R05", R.OnlineReplica),
    ("R06", R.OfflineReplica),
    ("R07", R.ReplicaDeletionStarted),
    ("R08", R.ReplicaDeletionIneligible),
    ("R09", R.ReplicaDeletionSuccessful),
])
def test_R05_to_R09_invalid_nonexistent_replica_transitions(case: str, target: R) -> None:
    _invalid(None, target)


# -- from NewReplica ---------------------------------------------------------------------


def test_R10_invalid_new_replica_to_nonexistent_replica() -> None:
    _invalid(R.NewReplica, R.NonExistentReplica)


def test_R11_new_replica_to_online_replica() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], rstates={5: R.NewReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OnlineReplica)
    assert part.rstates == {5: R.OnlineReplica}
    assert part.replicas == (5,)
    assert requests_count(ctx.out) == 0


def test_R11b_new_replica_not_in_assignment_is_appended() -> None:
    """§4.3: New->Online appends a replica missing from the assignment (error logged)."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [6], rstates={5: R.NewReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OnlineReplica)
    assert part.rstates == {5: R.OnlineReplica}
    assert part.replicas == (6, 5)
    assert kinds(ctx.out) == ["replica_not_in_assignment"]


def test_R12_new_replica_to_offline_replica() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, rstates={5: R.NewReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OfflineReplica)
    assert part.rstates == {5: R.OfflineReplica}
    # SR([5], t-0, delete=false), epoch -1 (no leadership). The UM([5], {t-0}) carries no
    # partition state (no leadership info), so it yields no UM row.
    assert sr(ctx.out) == [(5, T, 0, False, -1)]
    assert ctx.out.stop_replica[0].controller_epoch == EPOCH
    assert um(ctx.out) == []
    assert lai(ctx.out) == []


@pytest.mark.parametrize("case, target", [
    ("R13", R.ReplicaDeletionStarted),
    ("R14", R.ReplicaDeletionIneligible),
    ("R15", R.ReplicaDeletionSuccessful),
])
def test_R13_to_R15_invalid_new_replica_transitions(case: str, target: R) -> None:
    _invalid(R.NewReplica, target)


# -- from OnlineReplica ------------------------------------------------------------------


@pytest.mark.parametrize("case, target", [
    ("R16", R.NonExistentReplica),
    ("R17", R.NewReplica),
    ("R20", R.ReplicaDeletionStarted),
    ("R21", R.ReplicaDeletionIneligible),
    ("R22", R.ReplicaDeletionSuccessful),
])
def test_R16_R17_R20_to_R22_invalid_online_replica_transitions(case: str, target: R) -> None:
    _invalid(R.OnlineReplica, target)


def _online_with_cached_state(from_state: R) -> None:
    """R18, R25, R43: -> Online with leadership S = (5, [5], e0, v0, c50) sends
    LAI([5], t-0, S, [5], isNew=false), implying an UM for t-0 to all; no write."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], leader=5, isr=[5], rstates={5: from_state})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OnlineReplica)
    assert part.rstates == {5: R.OnlineReplica}
    assert leadership(part) == (5, (5,), 0, 0, EPOCH)
    assert lai(ctx.out) == [(5, T, 0, 5, (5,), 0, 0, EPOCH, (5,), False)]
    assert ctx.out.leader_and_isr[0].controller_epoch == EPOCH
    assert um(ctx.out) == [(T, 0, 5, (5,), 0, 0, EPOCH, (5,), (), None)]
    assert sr(ctx.out) == []


def test_R18_online_replica_to_online_replica() -> None:
    _online_with_cached_state(R.OnlineReplica)


def test_R19_online_replica_to_offline_replica() -> None:
    ctx = make_ctx(live=[5, 6])
    part = add_part(ctx, T, 0, [5, 6], leader=5, isr=[5, 6], rstates={5: R.OnlineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OfflineReplica)
    assert part.rstates == {5: R.OfflineReplica}
    # Cached leadership == (leader -1, ISR [6], leaderEpoch 1, zkVersion 1, ctrlEpoch 50);
    # the replica machine elects no leader.
    assert leadership(part) == (-1, (6,), 1, 1, EPOCH)
    assert sr(ctx.out) == [(5, T, 0, False, 0)]  # epoch taken before the ISR removal
    assert lai(ctx.out) == [(6, T, 0, -1, (6,), 1, 1, EPOCH, (5, 6), False)]
    assert [u[:7] for u in um(ctx.out)] == [(T, 0, -1, (6,), 1, 1, EPOCH)]


# -- from OfflineReplica -----------------------------------------------------------------


@pytest.mark.parametrize("case, target", [
    ("R23", R.NonExistentReplica),
    ("R24", R.NewReplica),
    ("R28", R.ReplicaDeletionSuccessful),
])
def test_R23_R24_R28_invalid_offline_replica_transitions(case: str, target: R) -> None:
    _invalid(R.OfflineReplica, target)


def test_R25_offline_replica_to_online_replica() -> None:
    _online_with_cached_state(R.OfflineReplica)


def test_R26_offline_replica_to_replica_deletion_started() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, rstates={5: R.OfflineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.ReplicaDeletionStarted)
    assert part.rstates == {5: R.ReplicaDeletionStarted}
    assert sr(ctx.out) == [(5, T, 0, True, -1)]
    assert lai(ctx.out) == [] and um(ctx.out) == []


def test_R27_offline_replica_to_replica_deletion_ineligible() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, rstates={5: R.OfflineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.ReplicaDeletionIneligible)
    assert part.rstates == {5: R.ReplicaDeletionIneligible}
    assert requests_count(ctx.out) == 0


# -- from ReplicaDeletionStarted ---------------------------------------------------------


@pytest.mark.parametrize("case, target", [
    ("R29", R.NonExistentReplica),
    ("R30", R.NewReplica),
    ("R31", R.OnlineReplica),
    ("R32", R.OfflineReplica),
])
def test_R29_to_R32_invalid_deletion_started_transitions(case: str, target: R) -> None:
    _invalid(R.ReplicaDeletionStarted, target)


@pytest.mark.parametrize("case, target", [
    ("R33", R.ReplicaDeletionIneligible),
    ("R34", R.ReplicaDeletionSuccessful),
])
def test_R33_R34_deletion_started_transitions(case: str, target: R) -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, rstates={5: R.ReplicaDeletionStarted})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], target)
    assert part.rstates == {5: target}
    assert requests_count(ctx.out) == 0


# -- from ReplicaDeletionSuccessful ------------------------------------------------------


def test_R35_deletion_successful_to_nonexistent_replica() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], rstates={5: R.ReplicaDeletionSuccessful})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.NonExistentReplica)
    assert part.replicas == ()  # 5 removed from the assignment
    assert part.rstates == {}  # the entry is removed, not set to NonExistentReplica
    assert requests_count(ctx.out) == 0


@pytest.mark.parametrize("case, target", [
    ("R36", R.NewReplica),
    ("R37", R.OnlineReplica),
    ("R38", R.OfflineReplica),
    ("R39", R.ReplicaDeletionStarted),
    ("R40", R.ReplicaDeletionIneligible),
])
def test_R36_to_R40_invalid_deletion_successful_transitions(case: str, target: R) -> None:
    _invalid(R.ReplicaDeletionSuccessful, target)


# -- from ReplicaDeletionIneligible ------------------------------------------------------


@pytest.mark.parametrize("case, target", [
    ("R41", R.NonExistentReplica),
    ("R42", R.NewReplica),
    ("R44", R.ReplicaDeletionStarted),
    ("R45", R.ReplicaDeletionSuccessful),
])
def test_R41_R42_R44_R45_invalid_deletion_ineligible_transitions(case: str, target: R) -> None:
    _invalid(R.ReplicaDeletionIneligible, target)


def test_R43_deletion_ineligible_to_online_replica() -> None:
    _online_with_cached_state(R.ReplicaDeletionIneligible)


# -- gaps the catalogue asks to fill (semantics-derived) ---------------------------------


def test_R_gap_online_to_offline_sole_isr_member() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], leader=5, isr=[5], leader_epoch=3, zk_version=7,
                    rstates={5: R.OnlineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OfflineReplica)
    # The last ISR member is kept; the leader goes; the epoch is bumped.
    assert leadership(part) == (-1, (5,), 4, 8, EPOCH)
    assert part.rstates == {5: R.OfflineReplica}
    assert sr(ctx.out) == [(5, T, 0, False, 3)]
    assert lai(ctx.out) == []  # no other assigned replica


def test_R_gap_offline_follower_not_in_isr() -> None:
    ctx = make_ctx(live=[5, 6])
    part = add_part(ctx, T, 0, [6, 5], leader=6, isr=[6], leader_epoch=2, zk_version=4,
                    ctrl_epoch=49, rstates={5: R.OnlineReplica})
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.OfflineReplica)
    # No write: leader, ISR, epoch and zkVersion unchanged; the cache is re-stamped with
    # the current controller epoch; LAI with the current state to the other replicas.
    assert leadership(part) == (6, (6,), 2, 4, EPOCH)
    assert lai(ctx.out) == [(6, T, 0, 6, (6,), 2, 4, EPOCH, (6, 5), False)]
    assert sr(ctx.out) == [(5, T, 0, False, 2)]
    assert part.rstates == {5: R.OfflineReplica}


def test_R_gap_new_replica_refused_when_it_is_the_leader() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], leader=5, isr=[5])
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.NewReplica)
    assert part.rstates == {5: R.NonExistentReplica}
    assert requests_count(ctx.out) == 0
    assert kinds(ctx.out) == ["state_change_failed"]


def test_R_gap_new_replica_with_other_leader_gets_is_new_lai() -> None:
    ctx = make_ctx(live=[5, 6])
    part = add_part(ctx, T, 0, [6, 5], leader=6, isr=[6], leader_epoch=1, zk_version=1)
    handle_replica_changes(ctx, ctx.topics[T], [(part, 5)], R.NewReplica)
    assert part.rstates == {5: R.NewReplica}
    assert lai(ctx.out) == [(5, T, 0, 6, (6,), 1, 1, EPOCH, (6, 5), True)]
    assert [u[:3] for u in um(ctx.out)] == [(T, 0, 6)]
    assert leadership(part) == (6, (6,), 1, 1, EPOCH)


def test_R_empty_call_is_a_no_op() -> None:
    ctx = make_ctx(live=[5])
    add_part(ctx, T, 0, [5])
    handle_replica_changes(ctx, ctx.topics[T], [], R.OfflineReplica)
    assert ctx.out.state_changes == [] and requests_count(ctx.out) == 0
