"""PartitionSnapshot: a partition that existed before the log began, initialised as the
controller initialises it from ZooKeeper (`KafkaController.initializeControllerContext`,
`ReplicaStateMachine.startup`, `PartitionStateMachine.initializePartitionState`, 3.7.1).
Expected values are derived by hand from Kafka 3.7.1's source, cited per test."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schemas import event_types as ET
from statemachine.context import ReplayConfig
from statemachine.states import PartitionState as P
from tests.helpers.core import Log, final, kinds, lai, replay_log, replica_states_of

SECOND = 1_000_000


def snapshot(log: Log, topic: str, partition: int, replicas: Sequence[int], *,
             same_seq: bool = False, **fields: Any) -> int:
    return log._add(ET.PARTITION_SNAPSHOT, same_seq=same_seq, topic=topic,
                    partition=partition, replicas=replicas, **fields)


def _seeded(log: Log, replicas: Sequence[int] = (1, 2, 3), leader: int = 1,
            isr: Sequence[int] = (1, 2, 3)) -> int:
    return snapshot(log, "t", 0, replicas, leader=leader, isr=tuple(isr), leader_epoch=5,
                    zk_version=7, controller_epoch=3)


def test_without_a_snapshot_the_failure_knows_nothing() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    log.failure(1)
    _, out = replay_log(log)
    assert out.partition_states == [] and out.leader_and_isr == [] and out.findings == []


def test_failure_of_the_leader_of_a_seeded_partition_elects_the_next_isr_replica() -> None:
    # KafkaController.onReplicasBecomeOffline (3.7.1 KafkaController.scala:664-673): the
    # partition whose leader died goes OfflinePartition, then
    # triggerOnlinePartitionStateChange elects with offlinePartitionLeaderElection
    # (PartitionStateMachine.scala:532-533): the first replica of the assignment that is
    # live and in the ISR, 2; Election.leaderForOffline (Election.scala:42) keeps the live
    # ISR [2, 3]; newLeaderAndIsr bumps the leader epoch 5 -> 6 and the znode version
    # 7 -> 8, written by the controller of epoch 1 (the log's failover).
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    _seeded(log)
    fail = log.failure(1)
    _, out = replay_log(log)
    assert final(out, "t", 0) == (P.OnlinePartition.name, 2, (2, 3), 6, 8, 1)
    sent = [(r.broker_id, r.leader, r.isr, r.leader_epoch) for r in lai(out)]
    # Twice each: the election's LeaderAndIsr, then OfflineReplica of replica 1 sends the
    # (unchanged) leadership to the remaining replicas (ReplicaStateMachine
    # doHandleStateChanges, OfflineReplica case, 3.7.1).
    assert sorted(sent) == [(2, 2, (2, 3), 6)] * 2 + [(3, 2, (2, 3), 6)] * 2
    assert {r.seq for r in out.leader_and_isr} == {fail}
    assert replica_states_of(out, "t", 0) == {1: "OfflineReplica", 2: "OnlineReplica",
                                              3: "OnlineReplica"}


def test_snapshot_sharing_the_failure_seq_is_applied_before_it() -> None:
    # --initial-state may seed at the seq of the run's first event: a failure there must see
    # the seeded partition, so a snapshot comes before its seq's cluster step.
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    fail = log.failure(1)
    snapshot(log, "t", 0, (1, 2, 3), same_seq=True, leader=1, isr=(1, 2, 3), leader_epoch=5,
             zk_version=7, controller_epoch=3)
    assert log.events[-1].seq == fail
    _, out = replay_log(log)
    assert final(out, "t", 0) == (P.OnlinePartition.name, 2, (2, 3), 6, 8, 1)


def test_failure_of_the_only_replica_takes_the_seeded_partition_offline() -> None:
    # RF 1: no live ISR member, unclean election off, so the election fails and the
    # partition stays OfflinePartition; the replica's OfflineReplica removes it from the
    # ISR as leader: leader NoLeader (-1), the last ISR member kept
    # (ReplicaStateMachine.doRemoveReplicasFromIsr, 3.7.1).
    log = Log(tick=SECOND)
    log.failover(0, [1, 2])
    seeded = snapshot(log, "t", 0, (1,), leader=1, isr=(1,), leader_epoch=4, zk_version=9,
                      controller_epoch=1)
    fail = log.failure(1)
    _, out = replay_log(log)
    state = final(out, "t", 0)
    assert (state.state, state.leader, state.isr) == (P.OfflinePartition.name, -1, (1,))
    offline = [w for w in out.partition_windows if w.kind == "offline"]
    assert [(w.start_seq, w.cause_event) for w in offline] == [(fail, ET.BROKER_FAILURE)]
    assert seeded < fail


def test_initialisation_follows_leader_liveness_and_sends_nothing() -> None:
    # initializePartitionState: leader alive -> Online, dead -> Offline, no leadership ->
    # New; initializeReplicaState: replicas on live brokers Online, the others Offline.
    log = Log(tick=SECOND)
    log.failover(0, [1, 2])
    snapshot(log, "t", 0, (1, 2), leader=1, isr=(1, 2), leader_epoch=0)
    snapshot(log, "t", 1, (4, 1), leader=4, isr=(4,), leader_epoch=2)
    offline_at = log.events[-1].seq
    snapshot(log, "t", 2, (2, 4))
    _, out = replay_log(log)
    assert final(out, "t", 0).state == P.OnlinePartition.name
    assert final(out, "t", 1)[:3] == (P.OfflinePartition.name, 4, (4,))
    assert final(out, "t", 2) == (P.NewPartition.name, None, None, None, None, None)
    assert replica_states_of(out, "t", 1) == {1: "OnlineReplica", 4: "OfflineReplica"}
    assert out.leader_and_isr == [] and out.update_metadata == [] and out.stop_replica == []
    # The seeded offline partition is offline from the snapshot's ts.
    offline = [w for w in out.partition_windows if w.kind == "offline"]
    assert [(w.partition, w.start_seq, w.start_ts, w.cause_event) for w in offline] == [
        (1, offline_at, offline_at * SECOND, ET.PARTITION_SNAPSHOT),
        (2, offline_at + 1, (offline_at + 1) * SECOND, ET.PARTITION_SNAPSHOT)]


def test_contradicting_snapshot_is_a_finding_and_changes_nothing() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2])
    log.create("t", 0, [1, 2])
    _, before = replay_log(log)
    snapshot(log, "t", 0, (2, 1), leader=2, isr=(2,), leader_epoch=9)
    _, out = replay_log(log)
    assert final(out, "t", 0) == final(before, "t", 0)
    assert kinds(out) == ["snapshot_contradicts"]
    detail = out.findings[0].detail
    assert "replicas [2, 1] vs [1, 2]" in detail and "leader 2 vs 1" in detail
    assert "leader_epoch 9 vs 0" in detail and "isr [2] vs [1, 2]" in detail
    assert len(out.state_changes) == len(before.state_changes)


def test_identical_snapshot_is_a_no_op() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2])
    log.create("t", 0, [1, 2])
    _, before = replay_log(log)
    snapshot(log, "t", 0, (1, 2), leader=1, isr=(2, 1), leader_epoch=0, zk_version=0,
             controller_epoch=1)
    _, out = replay_log(log)
    assert out.findings == [] and out.state_changes == before.state_changes
    assert out.partition_states == before.partition_states


def test_logged_state_that_kafka_would_not_initialise_is_a_finding() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2])
    snapshot(log, "t", 0, (3,), leader=3, isr=(3,), leader_epoch=0,
             partition_state="OnlinePartition")
    _, out = replay_log(log)
    assert final(out, "t", 0).state == P.OfflinePartition.name
    assert kinds(out) == ["snapshot_state_differs"]


def test_seeded_partition_survives_the_saved_state() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    _seeded(log)
    state, _ = replay_log(log)
    later = Log(start=log.seq + 1, tick=SECOND)
    later.failure(1)
    _, out = replay_log([*log.events, *later.events], state=state)
    assert final(out, "t", 0)[:3] == (P.OnlinePartition.name, 2, (2, 3))


def test_before_kafka_3143_a_seeded_replica_on_a_dead_broker_stays_ineligible() -> None:
    # 2.0.0 ReplicaStateMachine.startup: initializeReplicaState puts a replica on a dead
    # broker in ReplicaDeletionIneligible and only the live ones are moved (to
    # OnlineReplica); from 2.3 (KAFKA-3143) the others go to OfflineReplica.
    log = Log(tick=SECOND)
    log.failover(0, [1, 2])
    snapshot(log, "t", 0, (1, 4), leader=1, isr=(1,), leader_epoch=0)
    _, old = replay_log(log, ReplayConfig(kafka_version="2.0"))
    _, new = replay_log(log)
    assert replica_states_of(old, "t", 0) == {1: "OnlineReplica", 4: "ReplicaDeletionIneligible"}
    assert replica_states_of(new, "t", 0) == {1: "OnlineReplica", 4: "OfflineReplica"}
