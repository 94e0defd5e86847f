"""Kafka 3.7.1 `ControllerIntegrationTest` and `ControllerFailoverTest`, replayed through
the real fold: cluster events build the
timeline, topic and partition events go to `replay`.

Translation of the integration harness: brokers are 0..n-1 and the
controller is broker 0 (`c`), other brokers are `o`, `L`, `O`, ...; the first controller
is a `ControllerFailover` (epoch 1); a server "shutdown" is a `ControlledShutdown` followed
by a `BrokerFailure`; a restart is a `BrokerStartup`; a controller move is a
`ControllerFailover` with the live brokers; a leader's AlterPartition or the ISR growth the
test waits for is an `IsrChanged`; the auto-rebalance task is a `PreferredLeaderElection`.
`waitForPartitionState(tp, ctrlEpoch, leader, leaderEpoch)` becomes an assertion on the
final partition_states row (or on a replay of the log up to that point).
"""

from __future__ import annotations

from typing import Any

from statemachine.cluster import build_timeline, controller_rows
from statemachine.context import Outputs, ReplayConfig
from statemachine.events import Event
from tests.helpers.core import (
    Log,
    at,
    final,
    kinds,
    pstate_row,
    replay_log,
    replica_states_of,
    requests_count,
    split,
)

ONLINE = "OnlinePartition"
OFFLINE = "OfflinePartition"


def _upto(log: Log, seq: int) -> list[Event]:
    return [e for e in log.events if e.seq <= seq]


def _state(out: Outputs, topic: str = "t", p: int = 0) -> tuple[Any, ...]:
    """(ctrlEpoch, leader, leaderEpoch): what waitForPartitionState polls."""
    r = pstate_row(out, topic, p)
    return (r.controller_epoch, r.leader, r.leader_epoch)


def _last_um(out: Outputs, topic: str = "t", p: int = 0) -> Any:
    rows = [u for u in out.update_metadata if u.topic == topic and u.partition == p]
    return rows[-1]


# -- controller election and epoch -------------------------------------------------------


def test_empty_cluster_first_controller_epoch_is_1() -> None:
    """`testEmptyCluster`."""
    log = Log()
    log.failover(0, [0])
    timeline = build_timeline(split(log.events)[0])
    assert timeline.state_at(log.seq).epoch == 1
    assert [(r.controller_id, r.controller_epoch) for r in controller_rows(timeline)] == [(0, 1)]


def test_controller_epoch_persists_when_all_brokers_down() -> None:
    """`testControllerEpochPersistsWhenAllBrokersDown`."""
    log = Log()
    log.failover(0, [0])
    log.shutdown(0)
    timeline = build_timeline(split(log.events)[0])
    state = timeline.state_at(log.seq)
    assert (state.epoch, state.live, state.shutting_down) == (1, frozenset(), frozenset())


def test_controller_move_increments_controller_epoch() -> None:
    """`testControllerMoveIncrementsControllerEpoch`."""
    log = Log()
    log.failover(0, [0])
    log.shutdown(0)
    log.failover(0, [0])  # the restarted broker is elected again
    timeline = build_timeline(split(log.events)[0])
    assert timeline.state_at(log.seq).epoch == 2
    assert [r.controller_epoch for r in controller_rows(timeline)] == [1, 2]


def test_failover_with_no_partitions_sends_no_partition_request() -> None:
    """`testMetadataPropagationOnControlPlane`."""
    log = Log()
    log.failover(0, [0])
    _, out = replay_log(log)
    # The only request is the empty failover UM, which carries no partition row.
    assert requests_count(out) == 0 and out.partition_states == []


# -- metadata propagation ----------------------------------------------------------------


def test_metadata_propagation_on_broker_change() -> None:
    """`testMetadataPropagationOnBrokerChange`."""
    # R0 = 0 (controller), R1 = 1, T = 2.
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("topic1", 0, [0, 2])
    log.create("topic1", 1, [0, 1])
    down = log.shutdown(2)
    _, out = replay_log(_upto(log, down))
    u = _last_um(out, "topic1", 0)
    assert (u.replicas, u.offline_replicas, u.isr) == ((0, 2), (2,), (0,))
    u1 = _last_um(out, "topic1", 1)
    assert (u1.replicas, u1.offline_replicas) == ((0, 1), ())
    assert at(out.update_metadata, down)  # the failure propagated p0's offline replica

    up = log.startup(2)
    _, out = replay_log(log)
    u = _last_um(out, "topic1", 0)
    assert u.seq == up
    assert (u.replicas, u.offline_replicas) == ((0, 2), ())
    assert _last_um(out, "topic1", 1).offline_replicas == ()


def test_metadata_propagation_for_offline_replicas() -> None:
    """`testMetadataPropagationForOfflineReplicas`."""
    # c = 0, r = 1 hosts the only replica, other = 2.
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("topic1", 0, [1])
    log.shutdown(2)
    log.shutdown(1)
    log.shutdown(0)
    log.failover(0, [0])  # the controller broker restarts and is elected (epoch 2)
    log.startup(2)
    _, out = replay_log(log)
    state, leader, isr, _, _, ctrl = final(out, "topic1", 0)
    # Leader -1; the ISR keeps its last member.
    assert (state, leader, isr, ctrl) == (OFFLINE, -1, (1,), 2)
    u = _last_um(out, "topic1", 0)
    assert (u.leader, u.isr, u.replicas, u.offline_replicas) == (-1, (1,), (1,), (1,))


def test_broker_shutdown_with_no_replicas() -> None:
    """`testMetadataPropagationOnBrokerShutdownWithNoReplicas`."""
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("topic1", 0, [1])
    log.shutdown(1)
    cs = log.controlled_shutdown(2)
    fail = log.failure(2)
    _, out = replay_log(log)
    assert _state(out, "topic1") == (1, -1, 1)
    # Broker 2 hosts no replica: no partition request comes of its shutdown (the fallback
    # UM only refreshes the broker list), and the live brokers converge to [c].
    assert at(out.leader_and_isr, cs) == at(out.update_metadata, fail) == []
    timeline = build_timeline(split(log.events)[0])
    assert timeline.state_at(fail).live == frozenset({0})


# -- topic and partition creation --------------------------------------------------------


def test_topic_creation() -> None:
    """`testTopicCreation`."""
    log = Log()
    log.failover(0, [0])
    log.create("t", 0, [0])
    _, out = replay_log(log)
    assert _state(out) == (1, 0, 0)
    assert final(out, "t", 0).state == ONLINE


def test_topic_creation_with_offline_replica() -> None:
    """`testTopicCreationWithOfflineReplica`."""
    log = Log()
    log.failover(0, [0, 1])
    log.shutdown(1)
    seq = log.create("t", 0, [1, 0])
    _, out = replay_log(log)
    assert _state(out) == (1, 0, 0)
    assert final(out, "t", 0).isr == (0,)
    # Both replica states Online, including the dead one.
    assert replica_states_of(out, "t", 0) == {0: "OnlineReplica", 1: "OnlineReplica"}
    # LAI(isNew) to the ISR only.
    assert [(r.broker_id, r.is_new) for r in at(out.leader_and_isr, seq)] == [(0, True)]


def test_topic_partition_expansion() -> None:
    """`testTopicPartitionExpansion`."""
    log = Log()
    log.failover(0, [0])
    log.create("t", 0, [0])
    seq = log.create("t", 1, [0])
    _, out = replay_log(log)
    assert _state(out, "t", 1) == (1, 0, 0)
    assert [(u.partition, u.leader) for u in at(out.update_metadata, seq)] == [(1, 0)]


def test_topic_partition_expansion_with_offline_replica() -> None:
    """`testTopicPartitionExpansionWithOfflineReplica`."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [1, 0])
    log.shutdown(1)
    seq = log.create("t", 1, [1, 0])
    _, out = replay_log(log)
    assert _state(out, "t", 1) == (1, 0, 0)
    assert [(r.broker_id, r.partition) for r in at(out.leader_and_isr, seq)] == [(0, 1)]


# -- reassignment ------------------------------------------------------------------------


def test_partition_reassignment() -> None:
    """`testPartitionReassignment`."""
    # c = 0, o = 1.
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0])
    ra = log.reassign("t", 0, [1])
    _, mid = replay_log(log)
    row = pstate_row(mid, "t", 0)
    # Phase A: epoch 1; RS [o, c], adding [o], removing [c].
    assert (row.leader, row.leader_epoch, row.replicas, row.adding_replicas,
            row.removing_replicas) == (0, 1, (1, 0), (1,), (0,))
    # A1: LAI(isNew=false) to the origin, LAI(isNew=true) to the adding replica, one batch;
    # A2: NewReplica for the adding replica sends it another LAI(isNew=true).
    assert [(r.batch, r.broker_id, r.is_new) for r in at(mid.leader_and_isr, ra)] == [
        (1, 0, False), (1, 1, True), (2, 1, True)]
    log.isr("t", 0, [0, 1], leader_epoch=1)
    _, out = replay_log(log)
    row = pstate_row(out, "t", 0)
    assert _state(out) == (1, 1, 3)  # Reassign election 2, ISR removal of c 3
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((1,), (), ())
    assert row.isr == (1,)
    assert replica_states_of(out, "t", 0) == {1: "OnlineReplica"}


def test_reassignment_with_offline_replica_halting_progress() -> None:
    """`testPartitionReassignmentWithOfflineReplicaHaltingProgress`."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0])
    log.shutdown(1)
    log.reassign("t", 0, [1])
    _, out = replay_log(log)
    row = pstate_row(out, "t", 0)
    assert _state(out) == (1, 0, 1)  # phase A only
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((1, 0), (1,), (0,))
    assert "reassignment_to_offline_broker" in kinds(out)


def test_reassignment_resumes_after_replica_comes_online() -> None:
    """`testPartitionReassignmentResumesAfterReplicaComesOnline`."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0])
    log.shutdown(1)
    log.reassign("t", 0, [1])
    up = log.startup(1)
    _, mid = replay_log(log)
    assert _state(mid) == (1, 0, 2)  # resumed phase A
    log.isr("t", 0, [0, 1], leader_epoch=2)
    _, out = replay_log(log)
    row = pstate_row(out, "t", 0)
    # Reassign election 3, ISR shrink 4.
    assert _state(out) == (1, 1, 4)
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((1,), (), ())
    assert up < row.last_seq


# -- preferred election ------------------------------------------------------------------


def _preferred_cycle(log: Log, leader_epoch: int) -> None:
    """Shut o (1) down, restart it, wait for ISR {o, c}, then elect the preferred replica."""
    log.shutdown(1)
    log.startup(1)
    log.isr("t", 0, [0, 1], leader_epoch=leader_epoch)
    log.preferred("t", 0)


def test_preferred_replica_leader_election() -> None:
    """`testPreferredReplicaLeaderElection`."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [1, 0])
    down = log.shutdown(1)
    _, mid = replay_log(_upto(log, down))
    assert _state(mid) == (1, 0, 1)  # controlled-shutdown election
    log.startup(1)
    log.isr("t", 0, [0, 1], leader_epoch=1)
    log.preferred("t", 0)
    _, out = replay_log(log)
    assert _state(out) == (1, 1, 2)
    assert final(out, "t", 0).isr == (0, 1)


def test_back_to_back_preferred_replica_leader_elections() -> None:
    """`testBackToBackPreferredReplicaLeaderElections`."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [1, 0])
    _preferred_cycle(log, 1)
    down = log.shutdown(1)
    _, mid = replay_log(_upto(log, down))
    assert _state(mid) == (1, 0, 3)
    log.startup(1)
    log.isr("t", 0, [0, 1], leader_epoch=3)
    log.preferred("t", 0)
    _, out = replay_log(log)
    assert _state(out) == (1, 1, 4)


def test_preferred_election_with_offline_preferred_replica() -> None:
    """`testPreferredReplicaLeaderElectionWithOfflinePreferredReplica`."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [1, 0])
    log.shutdown(1)
    seq = log.preferred("t", 0)
    _, out = replay_log(log)
    assert _state(out) == (1, 0, 1)  # the controller gave up
    assert "preferred_leader_not_available" in kinds(out)
    assert at(out.leader_and_isr, seq) == []


def test_auto_preferred_replica_leader_election() -> None:
    """`testAutoPreferredReplicaLeaderElection`."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [1, 0])
    down = log.shutdown(1)
    _, mid = replay_log(_upto(log, down))
    assert _state(mid) == (1, 0, 1)
    log.startup(1)
    log.isr("t", 0, [0, 1], leader_epoch=1)
    log.preferred("t", 0)  # the auto-rebalance task
    _, out = replay_log(log)
    assert _state(out) == (1, 1, 2)


def test_auto_preferred_election_with_other_reassigning_partitions() -> None:
    """`testAutoPreferredReplicaLeaderElectionWithOtherReassigningPartitions`."""
    # c = 0, L = 1, O = 2.
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [1, 0])
    log.create("reassigning", 0, [0])
    down_l = log.shutdown(1)
    _, out = replay_log(_upto(log, down_l))
    assert _state(out) == (1, 0, 1)
    log.shutdown(2)
    ra = log.reassign("reassigning", 0, [2])
    _, out = replay_log(_upto(log, ra))
    assert _state(out, "reassigning") == (1, 0, 1)  # phase A, stuck
    log.startup(1)
    log.isr("t", 0, [0, 1], leader_epoch=1)
    pe = log.preferred("t", 0)
    _, out = replay_log(_upto(log, pe))
    assert _state(out) == (1, 1, 2)  # despite the other ongoing reassignment
    log.startup(2)
    log.isr("reassigning", 0, [0, 2], leader_epoch=2)
    _, out = replay_log(log)
    assert _state(out, "reassigning") == (1, 2, 4)
    row = pstate_row(out, "reassigning", 0)
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((2,), (), ())
    assert _state(out) == (1, 1, 2)


def test_auto_preferred_election_with_same_partition_being_reassigned() -> None:
    """`testAutoPreferredReplicaLeaderElectionWithSamePartitionBeingReassigned`."""
    # c = 0, L = 1, O = 2.
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [0, 1])
    log.shutdown(2)
    ra = log.reassign("t", 0, [1, 0, 2])
    _, out = replay_log(log)
    row = pstate_row(out, "t", 0)
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((1, 0, 2), (2,), ())
    assert _state(out) == (1, 0, 1)  # phase A
    pe = log.preferred("t", 0)  # auto rebalance moves the leader to the new head L
    _, out = replay_log(log)
    assert _state(out) == (1, 1, 2)
    up = log.startup(2)
    _, out = replay_log(log)
    assert _state(out) == (1, 1, 3)  # resumed phase A
    log.isr("t", 0, [1, 0, 2], leader_epoch=3)
    _, out = replay_log(log)
    row = pstate_row(out, "t", 0)
    # Kafka's test polls (L, 3) and then sees the assignment complete; completion (B3,
    # leader stays and is online) bumps the epoch once more, so the final epoch is 4: the
    # (L, 3) Kafka's test observes is transient.
    assert _state(out) == (1, 1, 4)
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((1, 0, 2), (), ())
    assert ra < pe < up


# -- whole ISR offline -------------------------------------------------------------------


def test_entire_isr_offline_unclean_disabled() -> None:
    """`testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeaderElectionDisabled`."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [1])
    log.shutdown(1)
    _, out = replay_log(log)
    assert final(out, "t", 0) == (OFFLINE, -1, (1,), 1, 1, 1)


def test_entire_isr_offline_unclean_enabled() -> None:
    """`testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeaderElectionEnabled`."""
    for config, unclean in ((ReplayConfig(unclean_leader_election_enable=True), None),
                            (None, True)):
        log = Log()
        log.failover(0, [0, 1])
        log.create("t", 0, [1], unclean=unclean)
        log.shutdown(1)
        _, out = replay_log(log, config)
        # The same result: no other replica exists.
        assert final(out, "t", 0) == (OFFLINE, -1, (1,), 1, 1, 1)
        assert "unclean_leader_election" not in kinds(out)


# -- controlled shutdown -----------------------------------------------------------------


def test_controlled_shutdown() -> None:
    """`testControlledShutdown`."""
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("test", 0, [0, 1, 2])
    s2 = log.controlled_shutdown(2)
    _, out = replay_log(log)
    assert final(out, "test", 0)[1:4] == (0, (0, 1), 1)
    u = _last_um(out, "test", 0)
    assert (u.seq, u.leader, u.isr) == (s2, 0, (0, 1))
    assert "controlled_shutdown_incomplete" not in kinds(out)

    s1 = log.controlled_shutdown(1)
    _, out = replay_log(log)
    assert final(out, "test", 0)[1:4] == (0, (0,), 2)
    # LAI to the other replicas, including shutting-down broker 2.
    assert sorted(r.broker_id for r in at(out.leader_and_isr, s1)) == [0, 2]
    assert "controlled_shutdown_incomplete" not in kinds(out)

    s0 = log.controlled_shutdown(0)
    _, out = replay_log(log)
    # All replicas are shutting down: the election fails, the leader stays 0, and the
    # partition is reported as still led by the broker (remaining partitions = 1).
    assert final(out, "test", 0)[:4] == (ONLINE, 0, (0,), 2)
    assert [(f.seq, f.broker_id) for f in out.findings
            if f.kind == "controlled_shutdown_incomplete"] == [(s0, 0)]


# -- broker bounce -----------------------------------------------------------------------


def test_controller_detects_bounced_brokers() -> None:
    """`testControllerDetectsBouncedBrokers`."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0, 1])
    bounce = log.startup(1)  # re-registration while known: failure + startup
    _, out = replay_log(log)
    assert final(out, "t", 0)[:4] == (ONLINE, 0, (0,), 1)
    assert replica_states_of(out, "t", 0) == {0: "OnlineReplica", 1: "OnlineReplica"}
    # The restarted broker gets the partition again (partitionCount 1 on it).
    assert 1 in {r.broker_id for r in at(out.leader_and_isr, bounce)}
    steps = [(r.broker_id, r.to_state) for r in at(out.state_changes, bounce)
             if r.machine == "replica"]
    assert steps == [(1, "OfflineReplica"), (1, "OnlineReplica")]


# -- AlterPartition ----------------------------------------------------------------------


def test_alter_partition_echo_is_idempotent() -> None:
    """`testAlterPartition`."""
    log = Log()
    log.failover(0, [0])
    log.create("t", 0, [0])
    seq = log.isr("t", 0, [0], leader_epoch=0)
    _, out = replay_log(log)
    assert final(out, "t", 0) == (ONLINE, 0, (0,), 0, 0, 1)  # no write
    assert not [f for f in out.findings if f.kind == "alter_partition_rejected"]
    assert at(out.leader_and_isr, seq) == []


def test_idempotent_echo_leaves_the_cache_alone() -> None:
    """`KafkaController.processAlterPartition`: the idempotent echo is a success with no
    write; Kafka refreshes the cache only for the partitions it wrote
    (`updateLeaderAndIsrCache(successfulUpdates)`), so an earlier re-stamp of the cached
    controller epoch (OfflineReplica of a replica outside the ISR, in
    `ZkReplicaStateMachine.doRemoveReplicasFromIsr`) stays in the UM, while ZK
    (partition_states) keeps the epoch of its last writer."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0, 1])
    log.isr("t", 0, [0], leader_epoch=0)  # ZK written by controller epoch 1
    log.failover(0, [0, 1])  # epoch 2
    fail = log.failure(1)  # 1 is outside the ISR: no write, the cache is re-stamped with 2
    echo = log.isr("t", 0, [0], leader_epoch=0)
    _, out = replay_log(log)
    assert {r.state_controller_epoch for r in at(out.update_metadata, fail)} == {2}
    assert [r.state_controller_epoch for r in at(out.update_metadata, echo)] == [2]
    assert final(out, "t", 0) == (ONLINE, 0, (0,), 0, 1, 1)


def test_idempotent_alter_partition() -> None:
    """`testIdempotentAlterPartition`."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [1, 0])
    log.isr("t", 0, [1], leader_epoch=0)
    _, out = replay_log(log)
    # Leader epoch unchanged, partition epoch p+1.
    assert final(out, "t", 0) == (ONLINE, 1, (1,), 0, 1, 1)
    log.isr("t", 0, [1], leader_epoch=0)
    log.isr("t", 0, [1], leader_epoch=0)
    _, out = replay_log(log)
    assert final(out, "t", 0) == (ONLINE, 1, (1,), 0, 1, 1)  # no new write


def test_shutdown_broker_not_added_to_isr() -> None:
    """`testShutdownBrokerNotAddedToIsr`."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0, 1])
    log.controlled_shutdown(1)
    during = log.isr("t", 0, [0, 1], leader_epoch=1)  # shutting down counts as not live
    log.failure(1)
    after = log.isr("t", 0, [0, 1], leader_epoch=1)
    _, out = replay_log(log)
    assert final(out, "t", 0)[1:4] == (0, (0,), 1)
    rejected = [(f.seq, f.detail.split(":")[0]) for f in out.findings
                if f.kind == "alter_partition_rejected"]
    assert rejected == [(during, "INELIGIBLE_REPLICA"), (after, "INELIGIBLE_REPLICA")]
    log.startup(1)
    log.isr("t", 0, [0, 1], leader_epoch=1)
    _, out = replay_log(log)
    assert final(out, "t", 0)[1:4] == (0, (0, 1), 1)


def _errors(out: Outputs) -> list[str]:
    return [f.detail.split(":")[0] for f in out.findings
            if f.kind == "alter_partition_rejected"]


def test_alter_partition_errors() -> None:
    """`testAlterPartitionErrors`.

    The rows of Kafka's table an IsrChanged event can express: unknown topic or
    partition (4, 5), leaderEpoch E-1 (8) and E+1 (9). The state is never changed."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0, 1])
    log.isr("unknown", 0, [0, 1], leader_epoch=0)
    log.isr("t", 1, [0, 1], leader_epoch=0)
    log.controlled_shutdown(1)  # E = 1 (ISR [0])
    log.failure(1)
    log.startup(1)
    log.isr("t", 0, [0, 1], leader_epoch=0)
    log.isr("t", 0, [0, 1], leader_epoch=2)
    _, out = replay_log(log)
    assert _errors(out) == ["UNKNOWN_TOPIC_OR_PARTITION", "UNKNOWN_TOPIC_OR_PARTITION",
                            "FENCED_LEADER_EPOCH", "NOT_CONTROLLER"]
    assert final(out, "t", 0)[1:5] == (0, (0,), 1, 1)


def test_alter_partition_errors_after_unclean_election() -> None:
    """`testAlterPartitionErrorsAfterUncleanElection`."""
    # c = 0, A = 1, B = 2; unclean enabled.
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("t", 0, [1, 2], unclean=True)
    a_down = log.shutdown(1)
    _, out = replay_log(_upto(log, a_down))
    assert final(out, "t", 0)[1:4] == (2, (2,), 1)
    b_down = log.shutdown(2)
    _, out = replay_log(_upto(log, b_down))
    assert final(out, "t", 0)[:4] == (OFFLINE, -1, (2,), 2)
    log.startup(1)
    _, out = replay_log(log)
    row = pstate_row(out, "t", 0)
    assert (row.state, row.leader, row.isr, row.leader_epoch, row.leader_recovery_state) == (
        ONLINE, 1, (1,), 3, "RECOVERING")
    assert "unclean_leader_election" in kinds(out)
    log.isr("t", 0, [1, 2], leader_epoch=2)  # E-1
    log.isr("t", 0, [1, 2], leader_epoch=4)  # E+1
    _, out = replay_log(log)
    assert _errors(out) == ["FENCED_LEADER_EPOCH", "NOT_CONTROLLER"]
    assert final(out, "t", 0)[1:4] == (1, (1,), 3)


def test_rejected_isr_expansion_still_propagates_metadata() -> None:
    """`KafkaController.processAlterPartition` ends with UM(all live or shutting down,
    every partition of the request),
    rejected ones included, with the unchanged state."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0, 1])
    log.shutdown(1)
    seq = log.isr("t", 0, [0, 1], leader_epoch=1)  # INELIGIBLE_REPLICA
    _, out = replay_log(log)
    assert [(u.leader, u.isr, u.leader_epoch, u.zk_version)
            for u in at(out.update_metadata, seq)] == [(0, (0,), 1, 1)]


def test_fenced_and_ahead_epochs_still_propagate_metadata() -> None:
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [0, 1])
    fenced = log.isr("t", 0, [0], leader_epoch=-1)  # FENCED_LEADER_EPOCH
    ahead = log.isr("t", 0, [0], leader_epoch=5)  # NOT_CONTROLLER
    unknown = log.isr("t", 3, [0], leader_epoch=0)  # UNKNOWN_TOPIC_OR_PARTITION: no state
    _, out = replay_log(log)
    for seq in (fenced, ahead):
        assert [(u.leader, u.isr, u.leader_epoch) for u in at(out.update_metadata, seq)] == [
            (0, (0, 1), 0)]
    assert at(out.update_metadata, unknown) == []


# -- topic ids: the epoch part of testTopicIdUpgradeAfterReassigningPartitions ------------


def test_noop_reassignment_bumps_epoch_and_failover_does_not_rewrite() -> None:
    """`testTopicIdUpgradeAfterReassigningPartitions`."""
    log = Log()
    log.failover(0, [0])
    log.create("t", 0, [0])
    log.failover(0, [0])
    log.failover(0, [0])  # controller epoch 3
    _, out = replay_log(log)
    assert _state(out) == (1, 0, 0)  # healthy partitions are not rewritten
    log.reassign("t", 0, [0])
    _, out = replay_log(log)
    assert _state(out) == (3, 0, 1)  # B3 bumps the epoch though nothing changes
    row = pstate_row(out, "t", 0)
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((0,), (), ())
    log.failover(0, [0])
    _, out = replay_log(log)
    assert _state(out) == (3, 0, 1)


# -- ControllerFailoverTest --------------------------------------------------------------


def test_resignation_and_reelection_keeps_partition_online() -> None:
    """`ControllerFailoverTest.testHandleIllegalStateException`.

    handleIllegalState: the controller resigns and some broker is elected with a
    higher epoch; the partition stays Online with its state untouched."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("topic1", 0, [0])
    seq = log.failover(1, [0, 1])
    _, out = replay_log(log)
    timeline = build_timeline(split(log.events)[0])
    assert timeline.state_at(seq).epoch == 2 and timeline.state_at(seq).controller == 1
    assert final(out, "topic1", 0) == (ONLINE, 0, (0,), 0, 0, 1)
    # The new controller re-sends the cached state with its own request epoch.
    assert {(r.controller_epoch, r.state_controller_epoch)
            for r in at(out.leader_and_isr, seq)} == {(2, 1)}
