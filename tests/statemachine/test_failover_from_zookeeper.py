"""What a new controller reads from ZooKeeper, when the log says it: the epoch it was
elected in, the topics queued for deletion, and a ZooKeeper whose epoch went back (its
data wiped under the running cluster).

* `KafkaZkClient.registerControllerAndIncrementControllerEpoch` (2.5.0
  `KafkaZkClient.scala:106-146`): the new epoch is the znode's plus one, written only if
  the znode's version is the one read; the znode is created with
  `KafkaController.InitialControllerEpoch` (0, `KafkaController.scala:53`) when missing,
  so the epoch goes back to 1 only when `/controller_epoch` is gone.
* `onControllerFailover` (2.5.0 `KafkaController.scala:231-251`): `initializeControllerContext`,
  then `fetchTopicDeletionsInProgress` (`:784-795`: the topics under
  `/admin/delete_topics`, logged `List of topics to be deleted: ..`) handed to
  `TopicDeletionManager.init` (`TopicDeletionManager.scala:95-107`: queued when
  `delete.topic.enable`, else the markers removed), and `tryTopicDeletion` after the state
  machines started. What is queued after a failover is what ZooKeeper listed.
"""

from __future__ import annotations

from statemachine.context import ReplayConfig
from statemachine.flows import HISTORY_CLOSED
from tests.helpers.core import Log, final, replay_log

V25 = ReplayConfig(kafka_version="2.5", scala_binary="2.12")


def test_the_logged_epoch_is_the_controller_epoch_of_its_writes_and_requests() -> None:
    log = Log()
    log.failover(1, [1, 2], epoch=16)
    log.create("t", 0, [1, 2])
    log.failover(2, [1, 2])  # not logged: counted on from 16
    log.failure(1)
    _, out = replay_log(log, V25)
    assert final(out, "t", 0).controller_epoch == 17
    assert {r.controller_epoch for r in out.leader_and_isr if r.seq == 2} == {16}
    assert {r.controller_epoch for r in out.leader_and_isr if r.seq == 4} == {17}


def test_an_empty_deletion_list_is_no_deletion() -> None:
    """A deletion the old controller could not finish (a replica on a dead broker); its
    `/admin/delete_topics` marker removed while no controller ran: the new controller
    lists no topic to delete, elects the partition and keeps the topic."""
    log = Log()
    log.failover(1, [1, 2, 3])
    log.create("audit", 0, [2, 3])
    log.failure(3)
    log.delete("audit")
    log.stop_replica_response("audit", 0, 2)
    log.failover(2, [1, 2], deletions=[])
    log.startup(3)
    _, out = replay_log(log, V25)
    assert final(out, "audit", 0)[:3] == ("OnlinePartition", 2, (2,))
    assert [(f.kind, f.topic) for f in out.findings if f.kind == "deletion_queue_differs"] == [
        ("deletion_queue_differs", "audit")]
    assert not [f for f in out.findings if f.kind == "topic_deleted"]
    # Without the list, the replay resumes the deletion it had queued.
    unlisted = Log()
    unlisted.events = [e._replace(topics_to_be_deleted=None) for e in log.events]
    _, kept = replay_log(unlisted, V25)
    assert final(kept, "audit", 0).state == "NonExistentPartition"


def test_a_listed_topic_is_queued_at_the_failover() -> None:
    log = Log()
    log.failover(1, [1, 2])
    log.create("old", 0, [1, 2])
    log.failover(2, [1, 2], deletions=["old", "unknown"])
    _, out = replay_log(log, V25)
    # tryTopicDeletion: every replica live, so the deletion starts (2.1+: the partition
    # goes NonExistent at once) and waits for the StopReplica responses.
    assert final(out, "old", 0).state == "NonExistentPartition"
    assert {r.broker_id for r in out.stop_replica if r.seq == 3 and r.delete_partition} == {1, 2}
    disabled = ReplayConfig(kafka_version="2.5", scala_binary="2.12", delete_topic_enable=False)
    _, kept = replay_log(log, disabled)
    assert final(kept, "old", 0).state == "OnlinePartition"
    assert not [f for f in kept.findings if f.kind == "deletion_queue_differs"]


def test_an_epoch_that_goes_back_starts_a_new_history() -> None:
    log = Log(tick=1_000_000)
    log.failover(1, [1, 2], epoch=16)
    log.create("events", 0, [1, 2])
    log.failure(1)  # events-0: leader 2, ISR [2]: under-replicated
    reset = log.failover(1, [1, 2], epoch=1)
    log.create("events", 0, [2, 1])
    state, out = replay_log(log, V25)
    assert final(out, "events", 0)[:4] == ("OnlinePartition", 2, (2, 1), 0)
    assert final(out, "events", 0).controller_epoch == 1
    assert not [f for f in out.findings if f.kind in ("partition_exists",
                                                       "partition_created_during_deletion")]
    closed = [(c.broker_id, c.from_state, c.to_state) for c in out.state_changes
              if c.reason == HISTORY_CLOSED]
    assert closed == [(1, "OfflineReplica", "NonExistentReplica"),
                      (2, "OnlineReplica", "NonExistentReplica"),
                      (None, "OnlinePartition", "NonExistentPartition")]
    windows = [(w.kind, w.start_seq, w.end_seq, w.end_event) for w in out.partition_windows
               if w.partition == 0]
    assert ("under_replicated", 3, reset, "ControllerFailover") in windows


def test_the_reset_is_a_timeline_finding_and_needs_a_logged_epoch() -> None:
    from statemachine.cluster import build_timeline

    log = Log()
    log.failover(1, [1], epoch=16)
    log.failover(1, [1], epoch=1)
    log.failover(1, [1])  # counted: 2
    tl = build_timeline(log.events)
    assert [(s.epoch, s.reset) for s in tl.steps] == [(16, False), (1, True), (2, False)]
    assert [f.kind for f in tl.findings] == ["controller_epoch_reset"]
    counted = Log()
    counted.failover(1, [1])
    counted.failover(1, [1])
    counted.failover(1, [1], epoch=1)  # counted 2 before it: no logged epoch to go back on
    assert [s.reset for s in build_timeline(counted.events).steps] == [False, False, False]
