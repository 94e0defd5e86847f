"""`KafkaController` flows (Kafka 3.7.1) that Kafka's own controller tests do not test
directly, replayed through the real fold (expectations read from the controller's code).
"""

from __future__ import annotations

from schemas import event_types as ET
from statemachine.context import ReplayConfig
from tests.helpers.core import (
    Log,
    at,
    final,
    kinds,
    pstate_row,
    replay_log,
    replica_states_of,
)

ONLINE = "OnlinePartition"
OFFLINE = "OfflinePartition"


def test_two_isr_members_fail_in_one_event_in_scala_order() -> None:
    """`ZkReplicaStateMachine.handleStateChanges` groups by broker: brokers 1 and 2 (ISR [1, 2],
    leader 1) fail in one BrokerChange. Scala 2.13's groupBy map visits 1 before 2
    (`statemachine.scala_order`): 1 leaves the ISR, then 2 is the last member and stays;
    two epoch bumps either way."""
    log = Log()
    log.failover(0, [0, 1, 2, 3])
    log.create("t", 0, [1, 2, 3])
    log.isr("t", 0, [1, 2], leader_epoch=0)
    seq = log.failure(1, 2)
    _, out = replay_log(log)
    assert final(out, "t", 0) == (OFFLINE, -1, (2,), 2, 3, 1)
    # One batch: the last LAI state per (broker, partition); only 3 is registered.
    assert [(r.broker_id, r.leader, r.isr, r.leader_epoch)
            for r in at(out.leader_and_isr, seq)] == [(3, -1, (2,), 2)]
    assert replica_states_of(out, "t", 0) == {1: "OfflineReplica", 2: "OfflineReplica",
                                    3: "OnlineReplica"}


def test_no_request_to_a_broker_that_dies_in_the_same_broker_change() -> None:
    """`KafkaController.processBrokerChange`: the channel manager drops the dead brokers before
    the new brokers start; they are still in liveBrokers then (the startup's election counts 2
    as a live replica and addresses it), but the request to 2 is not sent."""
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [1, 2])
    log.isr("t", 0, [1], leader_epoch=0)
    log.failure(1)  # leader -1, ISR [1]
    seq = log._add(ET.BROKER_STARTUP, broker_id=1)
    log._add(ET.BROKER_FAILURE, same_seq=True, broker_id=2)  # one BrokerChange
    _, out = replay_log(log)
    assert final(out, "t", 0)[:4] == (ONLINE, 1, (1,), 2)
    assert {r.broker_id for r in at(out.leader_and_isr, seq)} == {1}
    # The startup phases still count 2 as live (it leaves liveBrokers in the last phase).
    assert [(u.batch, u.leader, u.offline_replicas) for u in at(out.update_metadata, seq)] == [
        (1, -1, ()), (2, 1, ()), (3, 1, (2,))]


def test_failover_with_a_broker_gone_elects_a_new_leader() -> None:
    """`onControllerFailover`, `ReplicaStateMachine.startup` and
    `PartitionStateMachine.startup`: broker 1 (the leader) disappeared while there was no
    controller. Replica startup drives it Offline (leader -1, epoch 1); partition startup
    finds leader -1 (Offline) and the Offline election picks 2 (epoch 2)."""
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [1, 2, 0])
    seq = log.failover(0, [0, 2])
    _, out = replay_log(log)
    assert final(out, "t", 0) == (ONLINE, 2, (2, 0), 2, 2, 2)
    assert replica_states_of(out, "t", 0) == {0: "OnlineReplica", 1: "OfflineReplica",
                                    2: "OnlineReplica"}
    assert {r.controller_epoch for r in at(out.leader_and_isr, seq)} == {2}


def test_failover_resumes_a_reassignment_of_a_topic_queued_for_deletion() -> None:
    """`onControllerFailover`: `initializePartitionReassignments` resumes every in-memory
    reassignment (`maybeResumeReassignments`, no deletion check; only the API/znode trigger
    rejects queued topics). A deletion requested during a reassignment starts anyway (the
    ineligible mark is a no-op before the topic is queued)."""
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [0, 1])
    log.reassign("t", 0, [1, 2])  # phase A: epoch 1
    log.delete("t")  # 0 leaves the ISR (epoch 2), 1 is the last member (epoch 3)
    _, out = replay_log(log)
    assert final(out, "t", 0)[1:4] == (-1, (1,), 3)
    seq = log.failover(1, [0, 1, 2])
    _, out = replay_log(log)
    row = pstate_row(out, "t", 0)
    # Resumed phase A: epoch 4, LAI to the origin and (isNew) to the adding replica.
    assert (row.leader, row.isr, row.leader_epoch) == (-1, (1,), 4)
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((1, 2, 0), (2,), (0,))
    assert {(r.broker_id, r.leader_epoch, r.is_new) for r in at(out.leader_and_isr, seq)
            if r.leader_epoch == 4} == {(0, 4, False), (1, 4, False), (2, 4, True)}
    # A2: the adding replica is already OnlineReplica (failover initialisation): invalid.
    assert [(f.seq, f.broker_id) for f in out.findings if f.kind == "invalid_transition"] == [
        (seq, 2)]


def test_new_partition_with_no_live_replica_comes_online_at_startup() -> None:
    """`KafkaController.onBrokerStartup` retries the New partitions."""
    log = Log()
    log.failover(0, [0])
    log.create("t", 0, [1, 2])
    _, out = replay_log(log)
    assert final(out, "t", 0)[:2] == ("NewPartition", None)
    assert "no_live_replica" in kinds(out)
    up = log.startup(2)
    _, out = replay_log(log)
    assert final(out, "t", 0) == (ONLINE, 2, (2,), 0, 0, 1)
    assert [(r.broker_id, r.is_new) for r in at(out.leader_and_isr, up)] == [(2, True)]


def test_failure_of_another_broker_offlines_partition_led_by_shutting_down_broker() -> None:
    """`ControllerContext.partitionsWithOfflineLeader` includes partitions led by a
    shutting-down broker: a failure of any broker moves them Offline (the election fails; the
    leader stays)."""
    log = Log()
    log.failover(0, [0, 1, 2, 3])
    log.create("test", 0, [0, 1, 2])
    for b in (2, 1, 0):
        log.controlled_shutdown(b)
    log.failure(3)  # hosts nothing of test-0
    _, out = replay_log(log)
    assert final(out, "test", 0)[:4] == (OFFLINE, 0, (0,), 2)
    log.startup(0)  # a bounce of 0: failure then startup in one event
    _, out = replay_log(log)
    # The failure half takes 0 out of the ISR (last member: leader -1, epoch 3); the
    # startup half elects it again (epoch 4).
    assert final(out, "test", 0)[:4] == (ONLINE, 0, (0,), 4)


def test_admin_unclean_election_and_topic_unclean_enable() -> None:
    """`KafkaController.processReplicaLeaderElection` (UNCLEAN) and
    `processTopicUncleanLeaderElectionEnable`."""
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [1, 2])
    log.create("u", 0, [1, 2])
    log.isr("t", 0, [1], leader_epoch=0)
    log.isr("u", 0, [1], leader_epoch=0)
    log.failure(1)
    _, out = replay_log(log)
    assert final(out, "t", 0)[:4] == final(out, "u", 0)[:4] == (OFFLINE, -1, (1,), 1)
    enable = log.config("t", True)  # TopicUncleanLeaderElectionEnable
    admin = log.unclean("u", 0)  # ElectLeaders(UNCLEAN) from the AdminClient
    _, out = replay_log(log)
    for topic, seq in (("t", enable), ("u", admin)):
        row = pstate_row(out, topic, 0)
        assert (row.state, row.leader, row.isr, row.leader_epoch,
                row.leader_recovery_state) == (ONLINE, 2, (2,), 2, "RECOVERING")
        assert [f.seq for f in out.findings
                if f.kind == "unclean_leader_election" and f.topic == topic] == [seq]


def test_topic_unclean_disable_triggers_nothing() -> None:
    """`KafkaController.processTopicUncleanLeaderElectionEnable`."""
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [1, 2])
    log.isr("t", 0, [1], leader_epoch=0)
    log.failure(1)
    seq = log.config("t", False)
    _, out = replay_log(log)
    assert at(out.state_changes, seq) == []
    assert final(out, "t", 0)[:2] == (OFFLINE, -1)


def test_preferred_election_not_needed() -> None:
    """`KafkaController.processReplicaLeaderElection`: ELECTION_NOT_NEEDED."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0, 1])
    seq = log.preferred("t", 0)
    _, out = replay_log(log)
    assert at(out.state_changes, seq) == [] and at(out.leader_and_isr, seq) == []
    assert final(out, "t", 0) == (ONLINE, 0, (0, 1), 0, 0, 1)


def test_cancel_reverts_to_origin_replicas() -> None:
    """reassignTo(origin) cancels: the adding replica is stopped and removed; phase B runs
    with the origin (B3 bumps the epoch: leader online and in the new replicas)."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0])
    log.reassign("t", 0, [1])
    cancel = log.reassign("t", 0, [0])
    _, out = replay_log(log)
    row = pstate_row(out, "t", 0)
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((0,), (), ())
    assert final(out, "t", 0) == (ONLINE, 0, (0,), 2, 2, 1)
    assert replica_states_of(out, "t", 0) == {0: "OnlineReplica"}
    assert [(r.broker_id, r.delete_partition) for r in at(out.stop_replica, cancel)] == [
        (1, False), (1, True)]


def test_retarget_keeps_origin_and_stops_the_dropped_adding_replica() -> None:
    """`KafkaController.onPartitionReassignment` after `maybeBuildReassignment`."""
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [0])
    log.reassign("t", 0, [1])
    log.reassign("t", 0, [2])
    _, out = replay_log(log)
    row = pstate_row(out, "t", 0)
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((2, 0), (2,), (0,))
    assert row.leader_epoch == 2  # two phase-A bumps
    assert replica_states_of(out, "t", 0) == {0: "OnlineReplica", 2: "NewReplica"}
    log.isr("t", 0, [0, 2], leader_epoch=2)
    _, out = replay_log(log)
    assert final(out, "t", 0) == (ONLINE, 2, (2,), 4, 5, 1)


def test_reassignment_of_unknown_partition_is_rejected() -> None:
    """`KafkaController.maybeTriggerPartitionReassignment`."""
    log = Log()
    log.failover(0, [0, 1])
    log.reassign("t", 0, [1])
    _, out = replay_log(log)
    assert kinds(out) == ["reassignment_rejected"]


def test_failover_restarts_an_unfinished_deletion() -> None:
    """The new controller resets every replica state (`onControllerFailover`): a replica whose
    deletion had succeeded is deleted again; the topic completes only after every replica
    answers."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0, 1])
    log.delete("t")
    log.stop_replica_response("t", 0, 0)
    log.failover(1, [0, 1])
    log.stop_replica_response("t", 0, 1)
    _, out = replay_log(log)
    assert replica_states_of(out, "t", 0) == {0: "ReplicaDeletionStarted",
                                    1: "ReplicaDeletionSuccessful"}
    assert "topic_deleted" not in kinds(out)
    log.stop_replica_response("t", 0, 0)
    _, out = replay_log(log)
    assert replica_states_of(out, "t", 0) == {}
    assert kinds(out).count("topic_deleted") == 1


def test_deletion_disabled_ignores_the_request() -> None:
    """`KafkaController.processTopicDeletion` with delete.topic.enable=false."""
    log = Log()
    log.failover(0, [0])
    log.create("t", 0, [0])
    log.delete("t")
    _, out = replay_log(log, ReplayConfig(delete_topic_enable=False))
    assert kinds(out) == ["deletion_disabled"]
    assert final(out, "t", 0) == (ONLINE, 0, (0,), 0, 0, 1)


def test_partition_added_to_topic_queued_for_deletion_is_ignored() -> None:
    """`KafkaController.processPartitionModifications`."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0])
    log.failure(1)
    log.create("t", 1, [1])
    log.delete("t")  # 1's replica is dead: deletion waits
    log.create("t", 2, [0])
    _, out = replay_log(log)
    assert "partition_created_during_deletion" in kinds(out)
    assert {r.partition for r in out.partition_states} == {0, 1}


def test_isr_change_completes_reassignment_in_the_same_event() -> None:
    """`KafkaController.processAlterPartition`, then `maybeCompleteReassignment`."""
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [0, 1])
    log.reassign("t", 0, [1, 2])
    seq = log.isr("t", 0, [0, 1, 2], leader_epoch=1)
    _, out = replay_log(log)
    row = pstate_row(out, "t", 0)
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((1, 2), (), ())
    # B3: leader 0 leaves -> Reassign election picks 1 (first target in the ISR), epoch 2;
    # B4: 0 leaves the ISR, epoch 3.
    assert final(out, "t", 0) == (ONLINE, 1, (1, 2), 3, 4, 1)
    assert replica_states_of(out, "t", 0) == {1: "OnlineReplica", 2: "OnlineReplica"}
    assert at(out.state_changes, seq)


def test_unknown_broker_failure_and_shutdown_are_findings() -> None:
    """`KafkaController.processBrokerChange` and `doControlledShutdown`."""
    from statemachine.cluster import build_timeline
    from tests.helpers.core import split
    log = Log()
    log.failover(0, [0])
    log.failure(7)
    log.controlled_shutdown(8)
    timeline = build_timeline(split(log.events)[0])
    assert [f.kind for f in timeline.findings] == ["unknown_broker_failure",
                                                   "broker_not_available"]
    assert timeline.state_at(log.seq).live == frozenset({0})
