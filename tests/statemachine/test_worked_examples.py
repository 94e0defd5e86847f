"""Worked examples of Kafka 3.7.1's controller as tests: the OfflineReplica transition
(`ZkReplicaStateMachine.doRemoveReplicasFromIsr`), a whole ISR going offline, controlled
shutdown, the reassignment epoch trace and a few end-to-end scenarios.

The OfflineReplica examples are machine level (a context built by hand); the others
replay an event log through the real fold. Brokers: c = 0 is the controller.
"""

from __future__ import annotations

from statemachine.context import ReplayConfig
from statemachine.replica_machine import handle_replica_changes
from tests.helpers.core import (
    EPOCH,
    Log,
    R,
    add_part,
    at,
    final,
    kinds,
    lai,
    leadership,
    make_ctx,
    pstate_row,
    replay_log,
    replica_states_of,
    sr,
)

ONLINE = "OnlinePartition"
OFFLINE = "OfflinePartition"
E, V = 4, 9  # leader epoch and zkVersion before each OfflineReplica example


# -- OfflineReplica (removeReplicasFromIsr) ----------------------------------------------


def _offline(replicas: list[int], leader: int, isr: list[int], live: list[int]):  # type: ignore[no-untyped-def]
    ctx = make_ctx(live=live)
    part = add_part(ctx, "t", 0, replicas, leader=leader, isr=isr, leader_epoch=E,
                    zk_version=V, replica_states={5: R.OnlineReplica})
    handle_replica_changes(ctx, ctx.topics["t"], [(part, 5)], R.OfflineReplica)
    assert part.replica_states == {5: R.OfflineReplica}
    return ctx, part


def test_offline_replica_isr_5_6_leader_5_take_5_offline() -> None:
    ctx, part = _offline([5, 6], 5, [5, 6], [5, 6])
    assert leadership(part) == (-1, (6,), E + 1, V + 1, EPOCH)
    assert [r.broker_id for r in lai(ctx.out)] == [6]
    assert sr(ctx.out) == [(5, "t", 0, False, E)]


def test_offline_replica_isr_5_6_leader_6_take_5_offline() -> None:
    ctx, part = _offline([5, 6], 6, [5, 6], [5, 6])
    assert leadership(part) == (6, (6,), E + 1, V + 1, EPOCH)


def test_offline_replica_isr_5_leader_5_take_5_offline() -> None:
    ctx, part = _offline([5], 5, [5], [5])
    assert leadership(part) == (-1, (5,), E + 1, V + 1, EPOCH)


def test_offline_replica_isr_5_leader_none_take_5_offline_again_bumps_again() -> None:
    ctx, part = _offline([5], -1, [5], [5])
    assert leadership(part) == (-1, (5,), E + 1, V + 1, EPOCH)
    handle_replica_changes(ctx, ctx.topics["t"], [(part, 5)], R.OfflineReplica)
    assert leadership(part) == (-1, (5,), E + 2, V + 2, EPOCH)


def test_offline_replica_replica_not_in_isr() -> None:
    ctx, part = _offline([6, 5], 6, [6], [5, 6])
    assert leadership(part) == (6, (6,), E, V, EPOCH)
    assert lai(ctx.out) == [(6, "t", 0, 6, (6,), E, V, EPOCH, (6, 5), False)]


# -- entire ISR offline (onReplicasBecomeOffline) ----------------------------------------


def test_entire_isr_offline() -> None:
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [1])
    seq = log.failure(1)
    _, out = replay_log(log)
    assert final(out, "t", 0) == (OFFLINE, -1, (1,), 1, 1, 1)
    steps = [(r.machine, r.from_state, r.to_state, r.outcome, (r.reason or "")[:6])
             for r in at(out.state_changes, seq)]
    assert steps == [
        ("partition", ONLINE, OFFLINE, "applied", ""),  # 1. partition -> Offline
        ("partition", OFFLINE, ONLINE, "failed", "Failed"),  # 2. no live replica
        ("replica", "OnlineReplica", "OfflineReplica", "applied", ""),  # 3. ISR size 1
    ]


# -- controlled shutdown (doControlledShutdown) ------------------------------------------


def test_controlled_shutdown_example() -> None:
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [0, 1, 2])
    s2 = log.controlled_shutdown(2)
    s1 = log.controlled_shutdown(1)
    s0 = log.controlled_shutdown(0)
    _, out = replay_log(log)
    # Shutdown(2): a follower; the step-5 SR and the OfflineReplica SR, both at epoch 0.
    assert [(r.broker_id, r.delete_partition, r.leader_epoch, r.batch)
            for r in at(out.stop_replica, s2)] == [(2, False, 0, 1), (2, False, 0, 2)]
    assert [(r.leader, r.isr, r.leader_epoch) for r in at(out.leader_and_isr, s2)] == [
        (0, (0, 1), 1), (0, (0, 1), 1)]
    assert [(r.leader, r.isr, r.leader_epoch) for r in at(out.leader_and_isr, s1)] == [
        (0, (0,), 2), (0, (0,), 2)]
    assert [r.leader_epoch for r in at(out.stop_replica, s1)] == [1, 1]
    # Shutdown(0): no ISR member that is not shutting down; the leader stays 0.
    assert at(out.leader_and_isr, s0) == []
    assert final(out, "t", 0)[:4] == (ONLINE, 0, (0,), 2)
    assert [f.seq for f in out.findings if f.kind == "controlled_shutdown_incomplete"] == [s0]


def test_controlled_shutdown_leaves_rf1_partitions_untouched() -> None:
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [1])
    cs = log.controlled_shutdown(1)
    _, out = replay_log(log)
    assert final(out, "t", 0) == (ONLINE, 1, (1,), 0, 0, 1)
    assert at(out.leader_and_isr, cs) == at(out.stop_replica, cs) == []
    assert "controlled_shutdown_incomplete" not in kinds(out)


# -- reassignment epoch trace (ControllerIntegrationTest.testPartitionReassignment) ------


def test_reassignment_epoch_trace() -> None:
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0])
    ra = log.reassign("t", 0, [1])
    done = log.isr("t", 0, [0, 1], leader_epoch=1)
    _, out = replay_log(log)
    # 1. Phase A: epoch 1; RS [o, c], adding [o], removing [c].
    assert {(r.leader_epoch, r.replicas, r.adding_replicas, r.removing_replicas)
            for r in at(out.leader_and_isr, ra)} == {(1, (1, 0), (1,), (0,))}
    # 2. The ISR becomes [c, o] with no epoch change (zkVersion +1);
    # 3. B3 Reassign election: leader o, epoch 2, LAI to the target replicas;
    # 4. B4: c leaves the ISR, epoch 3, LAI to the remaining replicas.
    assert [(r.batch, r.broker_id, r.leader, r.isr, r.leader_epoch, r.zk_version)
            for r in at(out.leader_and_isr, done)] == [
        (2, 1, 1, (0, 1), 2, 3),
        (3, 1, 1, (1,), 3, 4),
    ]
    # B4 stops the removed replica: SR(false) then SR(true), separate batches.
    # The first carries the epoch before the ISR removal (2), the second the cached one (3).
    assert [(r.broker_id, r.delete_partition, r.leader_epoch)
            for r in at(out.stop_replica, done)] == [(0, False, 2), (0, True, 3)]
    assert final(out, "t", 0) == (ONLINE, 1, (1,), 3, 4, 1)
    assert pstate_row(out, "t", 0).replicas == (1,)
    assert replica_states_of(out, "t", 0) == {1: "OnlineReplica"}


# -- scenarios (consistent with ControllerIntegrationTest) -------------------------------


def test_topic_created_with_dead_first_replica() -> None:
    log = Log()
    log.failover(0, [0])  # d = 1 never registered
    log.create("t", 0, [1, 0])
    _, out = replay_log(log)
    assert final(out, "t", 0) == (ONLINE, 0, (0,), 0, 0, 1)
    assert replica_states_of(out, "t", 0) == {0: "OnlineReplica", 1: "OnlineReplica"}


def test_follower_shuts_down_cleanly_then_dies() -> None:
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0, 1])
    cs = log.controlled_shutdown(1)
    fail = log.failure(1)
    _, out = replay_log(log)
    assert {(r.isr, r.leader_epoch) for r in at(out.leader_and_isr, cs)} == {((0,), 1)}
    # The failure finds it out of the ISR: no epoch change, LAI to the other replica.
    assert [(r.broker_id, r.isr, r.leader_epoch, r.zk_version)
            for r in at(out.leader_and_isr, fail)] == [(0, (0,), 1, 1)]
    assert final(out, "t", 0) == (ONLINE, 0, (0,), 1, 1, 1)
    assert replica_states_of(out, "t", 0) == {0: "OnlineReplica", 1: "OfflineReplica"}


def test_leader_shuts_down_cleanly() -> None:
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [1, 0, 2])
    cs = log.controlled_shutdown(1)
    _, out = replay_log(log)
    assert final(out, "t", 0)[:4] == (ONLINE, 0, (0, 2), 1)
    assert sorted(r.broker_id for r in at(out.leader_and_isr, cs)) == [0, 1, 2]
    log.failure(1)
    _, out = replay_log(log)
    assert final(out, "t", 0)[:4] == (ONLINE, 0, (0, 2), 1)


def test_restart_rejoin_then_preferred_election() -> None:
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [1, 0])
    log.shutdown(1)
    log.startup(1)
    log.isr("t", 0, [0, 1], leader_epoch=1)
    pe = log.preferred("t", 0)
    _, out = replay_log(log)
    assert final(out, "t", 0)[:4] == (ONLINE, 1, (0, 1), 2)
    # Preferred election recipients: all assigned replicas.
    assert sorted(r.broker_id for r in at(out.leader_and_isr, pe)) == [0, 1]


def test_rf1_broker_dies_and_returns() -> None:
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [1])
    log.failure(1)
    _, out = replay_log(log)
    assert final(out, "t", 0)[:4] == (OFFLINE, -1, (1,), 1)
    up = log.startup(1)
    _, out = replay_log(log)
    assert final(out, "t", 0)[:4] == (ONLINE, 1, (1,), 2)
    assert [(r.broker_id, r.leader, r.leader_epoch) for r in at(out.leader_and_isr, up)][-1] == (
        1, 1, 2)


def test_unclean_enabled_elects_live_replica_outside_isr() -> None:
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [2, 1])  # B = 2 leads, A = 1 follows
    log.isr("t", 0, [2], leader_epoch=0)  # A falls out of the ISR
    log.failure(2)
    _, out = replay_log(log, ReplayConfig(unclean_leader_election_enable=True))
    row = pstate_row(out, "t", 0)
    assert (row.state, row.leader, row.isr, row.leader_epoch, row.leader_recovery_state) == (
        ONLINE, 1, (1,), 1, "RECOVERING")
    assert "unclean_leader_election" in kinds(out)
    # With unclean disabled the partition stays offline with its last ISR member.
    _, clean = replay_log(log)
    assert final(clean, "t", 0)[:4] == (OFFLINE, -1, (2,), 1)
