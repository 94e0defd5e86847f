"""Release profiles 2.0, 2.1 and 2.2 (`statemachine/profiles.py`): the switches that
arrived in 2.1 and 2.2, each replayed under the line before and after, with the controller
source at the tags of apache/kafka cited (`git show TAG:core/src/main/scala/kafka/...`)."""

from __future__ import annotations

import pytest

from statemachine.cluster import build_timeline
from statemachine.context import Outputs, ReplayConfig
from statemachine.profiles import profile_for
from tests.helpers.core import Log, at, final, kinds, replay_log, um

A, B, C, D = 1, 2, 3, 4


def _cfg(version: str) -> ReplayConfig:
    return ReplayConfig(kafka_version=version, scala_binary=profile_for(version).scala_binary)


def _partition_moves(out: Outputs, seq: int | None = None) -> list[tuple[int, str, str]]:
    return [(r.seq, r.from_state, r.to_state) for r in out.state_changes
            if r.machine == "partition" and (seq is None or r.seq == seq)]


# -- a known broker registering again (KIP-380, KAFKA-7235, 2.2) ----------------------------


def _bounce_log() -> tuple[Log, int]:
    log = Log()
    log.failover(0, [0, A, B])
    log.create("t", 0, [A, B])  # leader A, ISR [A, B]
    return log, log.startup(A)


def test_a_bounce_before_2_2_goes_unseen() -> None:
    """KafkaController.scala at 2.1.0, lines 1246-1247: `BrokerChange` computes only
    `newBrokerIds = curBrokerIds -- liveOrShuttingDownBrokerIds` and `deadBrokerIds`; a
    known broker that registered again is neither, lines 1258-1261 call nothing (2.0.0:
    the same code, lines 1239-1240 and 1251-1254). A keeps its leadership."""
    log, seq = _bounce_log()
    for version in ("2.0", "2.1"):
        _, out = replay_log(log, _cfg(version))
        assert final(out, "t", 0)[:4] == ("OnlinePartition", A, (A, B), 0), version
        assert not at(out.state_changes, seq) and not at(out.leader_and_isr, seq), version


def test_a_bounce_from_2_2_fails_and_restarts_the_broker() -> None:
    """KafkaController.scala at 2.2.0, lines 1299-1300: `bouncedBrokerIds` (a newer broker
    epoch of a known id); lines 1320-1325: `onBrokerFailure` then `onBrokerStartup` for
    them. A loses the leadership to B and comes back as a follower outside the ISR."""
    log, seq = _bounce_log()
    _, out = replay_log(log, _cfg("2.2"))
    assert final(out, "t", 0)[:4] == ("OnlinePartition", B, (B,), 1)
    assert at(out.state_changes, seq)


@pytest.mark.parametrize(("version", "shutting_down"), [("2.1", {A}), ("2.2", set())])
def test_a_shutting_down_broker_that_registers_again(version: str,
                                                     shutting_down: set[int]) -> None:
    """Before 2.2 nothing removes the re-registered broker from `shuttingDownBrokerIds`
    (only `onBrokerFailure` does: KafkaController.scala at 2.1.0, line 413), so it stays
    shutting down; from 2.2 the bounce's `onBrokerFailure` (2.2.0, line 1322) clears it
    (line 424)."""
    log = Log()
    log.failover(0, [0, A, B])
    log.controlled_shutdown(A)
    seq = log.startup(A)
    timeline = build_timeline(log.events, profile=profile_for(version))
    state = timeline.state_at(seq)
    assert set(state.shutting_down) == shutting_down
    assert (A in state.live) is not bool(shutting_down)


def test_a_failure_and_start_in_one_event_before_2_2_changes_nothing() -> None:
    """The ZooKeeper read of 2.1.0 (line 1243, `getAllBrokersInCluster`) finds the broker
    registered: neither new nor dead. The finding still says what the log held."""
    log, _ = _bounce_log()
    log.broker_change([B], [B])
    _, out = replay_log(log, _cfg("2.1"))
    assert final(out, "t", 0)[:3] == ("OnlinePartition", A, (A, B))
    assert kinds(out).count("contradictory_broker_change") == 0  # timeline findings
    timeline = build_timeline(log.events, profile=profile_for("2.1"))
    assert [f.kind for f in timeline.findings] == ["contradictory_broker_change"]
    assert "before 2.2" in timeline.findings[0].detail


def _new_and_dead_log() -> tuple[Log, int]:
    """A partition on A, C and D while C is down; then C registers and D disappears in one
    broker change."""
    log = Log()
    log.failover(0, [0, A, D])
    log.create("t", 0, [A, C, D])  # leader A, ISR [A, D]
    return log, log.broker_change([C], [D])


def test_before_2_2_the_dead_brokers_are_gone_while_the_new_ones_start() -> None:
    """KafkaController.scala at 2.1.0, line 1249 (2.0.0, line 1242):
    `controllerContext.liveBrokers = curBrokers` before `onBrokerStartup` (line 1259): the
    UpdateMetadata of C's OnlineReplica transition already lists D offline. At 2.2.0
    (lines 1316-1318, 1326-1328) D leaves the live brokers only for its own
    `onBrokerFailure`, so the same request lists no offline replica."""
    log, seq = _new_and_dead_log()
    for version, offline in (("2.1", (D,)), ("2.2", ()), ("3.7", ())):
        _, out = replay_log(log, _cfg(version))
        sent = [r for r in out.update_metadata if r.seq == seq]
        assert sent[0].offline_replicas == offline, version
        assert final(out, "t", 0)[1:3] == (A, (A,)), version


# -- a topic's unclean.leader.election.enable (KAFKA-6835, 2.1) ----------------------------


def _unclean_config_log() -> tuple[Log, int, int]:
    log = Log()
    log.failover(0, [0, A, B, C])
    log.create("t", 0, [A, B])
    log.isr("t", 0, [A], leader_epoch=0)
    log.failure(A)  # offline: ISR [A], B live but not in sync
    config = log.config("t", True)
    return log, config, log.startup(D)


def test_a_topic_unclean_enable_before_2_1_triggers_no_election() -> None:
    """ConfigHandler.scala at 2.0.0, lines 48-76: `TopicConfigHandler` has no controller
    and only updates the logs; 2.0.0 KafkaController.scala has only the broker-level
    `UncleanLeaderElectionEnable` (line 1021). The topic's setting is read at the next
    election (PartitionStateMachine.scala at 2.0.0, lines 350-356, `getLogConfigs`): the
    next broker change elects B."""
    log, config, startup = _unclean_config_log()
    _, out = replay_log(log, _cfg("2.0"))
    assert not _partition_moves(out, config)
    assert _partition_moves(out, startup) == [(startup, "OfflinePartition", "OnlinePartition")]
    assert final(out, "t", 0)[1:3] == (B, (B,))


def test_a_topic_unclean_enable_from_2_1_elects_at_once() -> None:
    """ConfigHandler.scala at 2.1.0, lines 80-82: an enabled
    `unclean.leader.election.enable` calls `enableTopicUncleanLeaderElection`;
    KafkaController.scala at 2.1.0, lines 1003-1011: `TopicUncleanLeaderElectionEnable`
    runs `triggerOnlinePartitionStateChange(topic)`."""
    log, config, _ = _unclean_config_log()
    _, out = replay_log(log, _cfg("2.1"))
    assert _partition_moves(out, config) == [(config, "OfflinePartition", "OnlinePartition")]
    assert final(out, "t", 0)[1:3] == (B, (B,))


# -- when a deleted topic's partitions become NonExistentPartition (KAFKA-6753, 2.1) --------


def _deletion_log() -> tuple[Log, int, int]:
    log = Log()
    log.failover(0, [0, A, B])
    log.create("t", 0, [A, B])
    delete = log.delete("t")
    log.stop_replica_response("t", 0, A)
    return log, delete, log.stop_replica_response("t", 0, B)


def test_deletion_before_2_1_moves_the_partitions_at_completion() -> None:
    """TopicDeletionManager.scala at 2.0.0: `onTopicDeletion` (lines 253-261) sends the
    UpdateMetadata and starts the replicas' deletion, no partition moves;
    `completeDeleteTopic` moves the replicas to NonExistentReplica (line 233), then the
    partitions to OfflinePartition and NonExistentPartition (lines 236-237)."""
    log, delete, last = _deletion_log()
    _, out = replay_log(log, _cfg("2.0"))
    assert _partition_moves(out, delete) == []
    assert _partition_moves(out, last) == [(last, "OnlinePartition", "OfflinePartition"),
                                           (last, "OfflinePartition", "NonExistentPartition")]
    assert "topic_deleted" in kinds(out)
    # While the deletion runs the partition is advertised as being deleted all the same.
    assert {r.leader for r in um(out, "t") if r.leader < 0} == {-2}


def test_deletion_from_2_1_moves_the_partitions_at_the_start() -> None:
    """TopicDeletionManager.scala at 2.1.0, lines 271-279: `onTopicDeletion` moves the
    partitions of topics not yet in `topicsWithDeletionStarted` to OfflinePartition and
    NonExistentPartition; `completeDeleteTopic` (lines 245-258) no longer moves them."""
    log, delete, last = _deletion_log()
    _, out = replay_log(log, _cfg("2.1"))
    assert _partition_moves(out, delete) == [(delete, "OnlinePartition", "OfflinePartition"),
                                             (delete, "OfflinePartition", "NonExistentPartition")]
    assert _partition_moves(out, last) == []
    assert "topic_deleted" in kinds(out)


def _shutdown_during_deletion() -> tuple[Log, int]:
    """The deletion's OfflineReplica moves took every replica out of the ISR (leader -1,
    ISR [C]); they wait ReplicaDeletionStarted for their StopReplica responses."""
    log = Log()
    log.failover(0, [0, A, B, C])
    log.create("t", 0, [A, B, C])
    log.delete("t")
    return log, log.controlled_shutdown(A)


def test_a_controlled_shutdown_before_2_1_acts_on_a_deleted_topic() -> None:
    """KafkaController.scala at 2.0.0, lines 1054-1056: `partitionsToActOn` is every
    partition on the broker with more than one replica and a leader, whether its topic is
    queued for deletion or not. A does not lead it: it gets a StopReplica (lines 1062-1067)
    and its replica, ReplicaDeletionStarted, fails the OfflineReplica move (lines 1073-1074)."""
    log, seq = _shutdown_during_deletion()
    _, out = replay_log(log, _cfg("2.0"))
    assert [(r.broker_id, r.delete_partition) for r in at(out.stop_replica, seq)] == [
        (A, False)]
    assert [(r.from_state, r.to_state, r.outcome) for r in at(out.state_changes, seq)] == [
        ("ReplicaDeletionStarted", "OfflineReplica", "rejected")]


def test_a_controlled_shutdown_from_2_1_leaves_a_deleted_topic_alone() -> None:
    """KafkaController.scala at 2.1.0, lines 1036-1040: `partitionsToActOn` skips topics
    queued for deletion (`!topicDeletionManager.isTopicQueuedUpForDeletion`), and so does
    the list of partitions the broker still leads (lines 1059-1066)."""
    log, seq = _shutdown_during_deletion()
    _, out = replay_log(log, _cfg("2.1"))
    assert not at(out.stop_replica, seq) and not at(out.state_changes, seq)


# -- a preferred election that is not needed (KAFKA-5692, 2.2) ------------------------------


@pytest.mark.parametrize(("version", "epoch"), [("2.0", 1), ("2.1", 1), ("2.2", 0), ("3.7", 0)])
def test_a_preferred_election_of_the_preferred_leader(version: str, epoch: int) -> None:
    """KafkaController.scala at 2.1.0, lines 1484-1490: the partitions of the znode go to
    `onPreferredReplicaElection` (line 624: `handleStateChanges(..., OnlinePartition,
    PreferredReplicaPartitionLeaderElectionStrategy)`) whoever leads them, so A is elected
    again with a new epoch; at 2.2.0, lines 1590-1595, the partitions already led by their
    preferred replica are set apart (`alreadyPreferred`) and not elected."""
    log = Log()
    log.failover(0, [0, A, B])
    log.create("t", 0, [A, B])
    seq = log.preferred("t", 0)
    _, out = replay_log(log, _cfg(version))
    assert final(out, "t", 0)[1:4] == (A, (A, B), epoch)
    assert len(at(out.partition_state_writes, seq)) == epoch
