"""The two controller actions that span every topic of the cluster, whatever replay group
holds a topic (Kafka 3.7.1):

* `TopicDeletionManager.resumeDeletions` walks every queued topic on any deletion activity
  (a deletion request, a StopReplica response), so a queued topic whose replicas are all on
  dead brokers is retried (ReplicaDeletionIneligible -> OfflineReplica) on another topic's
  event;
* every broker change retries the election of every leaderless partition of the cluster
  (`partitionsWithOfflineLeader` and `triggerOnlinePartitionStateChange()`), so a
  leaderless partition that the change does not touch still gets its rows.

Each outcome is derived by hand from the Kafka source named in the test, then checked on
one group and on the topics split into groups (`bucket_of`), with one shared timeline, as
the Spark job runs them.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from statemachine.cluster import DELETION, build_timeline
from statemachine.context import Outputs
from statemachine.events import Event
from statemachine.replay import bucket_of, replay
from statemachine.rows import FAILED
from tests.helpers.core import Log, replay_log

CLUSTER = "default"
# Two topics that no bucket count used below puts in one group.
DOOMED, SIBLING = "doomed", "sibling"


class Change(NamedTuple):
    seq: int
    step: int
    topic: str
    partition: int
    broker: int | None
    from_state: str
    to_state: str
    failed: bool


def changes(out: Outputs, seq: int | None = None) -> list[Change]:
    return sorted(Change(r.seq, r.step, r.topic, r.partition, r.broker_id, r.from_state,
                         r.to_state, r.outcome == FAILED)
                  for r in out.state_changes if seq is None or r.seq == seq)


def replay_split(events: list[Event], buckets: int) -> Outputs:
    """Replay the topics in `buckets` groups with the whole log's timeline, as the job does,
    and merge the groups' outputs."""
    timeline = build_timeline(events)
    groups: dict[int, list[Event]] = {}
    for e in events:
        if e.topic is not None:
            groups.setdefault(bucket_of(CLUSTER, e.topic, buckets), []).append(e)
    merged = Outputs()
    for b in sorted(groups):
        _, out = replay(None, groups[b], timeline)
        merged.state_changes += out.state_changes
        merged.replica_states += out.replica_states
        merged.partition_states += out.partition_states
        merged.findings += out.findings
        merged.stop_replica += out.stop_replica
        merged.leader_and_isr += out.leader_and_isr
        merged.update_metadata += out.update_metadata
    return merged


def same_whatever_the_grouping(log: Log) -> Outputs:
    """The single-group output, after checking that every split gives the same rows."""
    _, whole = replay_log(log)
    for buckets in (2, 3, 4, 8):
        assert bucket_of(CLUSTER, DOOMED, buckets) != bucket_of(CLUSTER, SIBLING, buckets)
        split = replay_split(log.events, buckets)
        for table in ("state_changes", "replica_states", "partition_states", "findings",
                      "stop_replica", "leader_and_isr", "update_metadata"):
            assert sorted(getattr(split, table), key=repr) == \
                sorted(getattr(whole, table), key=repr), (buckets, table)
    return whole


def doomed_on_a_dead_broker() -> Log:
    """`doomed` lives on broker 3 only, `sibling` on broker 1; broker 3 fails at seq 4."""
    log = Log()
    log.failover(1, [1, 2, 3])
    log.create(DOOMED, 0, [3])
    log.create(SIBLING, 0, [1])
    log.failure(3)
    return log


def test_a_queued_topic_on_dead_brokers_is_retried_on_another_topics_deletion_request() -> None:
    """seq 5: deletion of `doomed` (`enqueueTopicsForDeletion` -> `resumeDeletions`,
    TopicDeletionManager.scala:121-126 at 3.7.1): it is eligible, `onPartitionDeletion`
    moves its dead replica to ReplicaDeletionIneligible and marks it ineligible
    (TopicDeletionManager.scala:307-315). seq 6: deletion of `sibling`: the new
    `resumeDeletions` walks both queued topics (TopicDeletionManager.scala:318-357):
    `doomed` has no ReplicaDeletionStarted replica and one ReplicaDeletionIneligible, so
    `retryDeletionForIneligibleReplicas` moves it to OfflineReplica
    (TopicDeletionManager.scala:232-237); being ineligible it does not start again."""
    log = doomed_on_a_dead_broker()
    log.delete(DOOMED)
    seq = log.delete(SIBLING)
    out = same_whatever_the_grouping(log)
    assert [c for c in changes(out, 5) if c.broker is not None] == [
        Change(5, 3, DOOMED, 0, 3, "OfflineReplica", "ReplicaDeletionIneligible", False)]
    assert [c for c in changes(out, seq) if c.topic == DOOMED] == [
        Change(seq, 1, DOOMED, 0, 3, "ReplicaDeletionIneligible", "OfflineReplica", False)]
    # `sibling` starts its own deletion in the same event.
    assert [(c.broker, c.to_state) for c in changes(out, seq) if c.topic == SIBLING] == [
        (None, "OfflinePartition"), (None, "NonExistentPartition"), (1, "OfflineReplica"),
        (1, "ReplicaDeletionStarted")]


def test_a_queued_topic_on_dead_brokers_is_retried_on_another_topics_stop_replica_response(
) -> None:
    """seq 5: deletion of `sibling` starts (its replica on broker 1 is
    ReplicaDeletionStarted). seq 6: deletion of `doomed`: its dead replica goes
    ReplicaDeletionIneligible; the walk finds `sibling` in progress and leaves it. seq 7:
    broker 1 answers the StopReplica for `sibling`: `completeReplicaDeletion` marks it
    deleted and calls `resumeDeletions` (TopicDeletionManager.scala:206-211;
    KafkaController.scala:1469), which completes `sibling` and retries `doomed`:
    ReplicaDeletionIneligible -> OfflineReplica. A later broker change that touches
    neither topic walks nothing (the replay's own rule, not a Kafka walk)."""
    log = doomed_on_a_dead_broker()
    log.delete(SIBLING)
    log.delete(DOOMED)
    seq = log.stop_replica_response(SIBLING, 0, 1)
    log.failure(2)
    out = same_whatever_the_grouping(log)
    assert changes(out, seq) == [
        Change(seq, 1, DOOMED, 0, 3, "ReplicaDeletionIneligible", "OfflineReplica", False),
        Change(seq, 1, SIBLING, 0, 1, "ReplicaDeletionStarted", "ReplicaDeletionSuccessful",
               False),
        Change(seq, 2, SIBLING, 0, 1, "ReplicaDeletionSuccessful", "NonExistentReplica", False),
    ]
    assert changes(out, seq + 1) == []
    assert [(r.topic, r.broker_id, r.state) for r in out.replica_states] == [
        (DOOMED, 3, "OfflineReplica")]


def test_the_timeline_marks_deletion_activity_after_the_broker_steps() -> None:
    """A deletion-activity seq is one `DELETION` step, after the cluster steps of the same
    seq, carrying the cluster as it is (no liveness change)."""
    log = doomed_on_a_dead_broker()
    log.delete(DOOMED)
    log.stop_replica_response(SIBLING, 0, 1, error="KAFKA_STORAGE_ERROR")
    steps = build_timeline(log.events).steps
    assert [(s.seq, s.kind, s.event_type) for s in steps[-3:]] == [
        (4, "BrokerChange", ""), (5, DELETION, "TopicDeletionRequested"),
        (6, DELETION, "StopReplicaResponse")]
    assert steps[-1].live_after == steps[-1].live_before == frozenset({1, 2})


@pytest.mark.parametrize("change", ["failure", "startup"])
def test_a_leaderless_partition_untouched_by_a_broker_change_is_retried(change: str) -> None:
    """`doomed-0` (broker 3 only) is leaderless after broker 3 fails (seq 4). Broker 2,
    which hosts nothing, then fails (seq 5), and starts again (seq 6). Failure:
    `onReplicasBecomeOffline` moves every partition of the cluster whose leader is not
    live to OfflinePartition (`partitionsWithOfflineLeader`, KafkaController.scala:668-671
    and ControllerContext.scala:479-484 at 3.7.1), then `triggerOnlinePartitionStateChange()`
    retries every New and Offline partition (KafkaController.scala:673,
    PartitionStateMachine.scala:59-76): Offline -> Offline, then a failed election.
    Startup: `onBrokerStartup` retries them too (KafkaController.scala:590): a failed
    election."""
    log = doomed_on_a_dead_broker()
    seq = log.failure(2)
    if change == "startup":
        seq = log.startup(2)
    out = same_whatever_the_grouping(log)
    expected = [Change(seq, 1, DOOMED, 0, None, "OfflinePartition", "OnlinePartition", True)]
    if change == "failure":
        expected = [
            Change(seq, 1, DOOMED, 0, None, "OfflinePartition", "OfflinePartition", False),
            Change(seq, 2, DOOMED, 0, None, "OfflinePartition", "OnlinePartition", True)]
    assert changes(out, seq) == expected
    assert [(f.seq, f.topic, f.kind) for f in out.findings if f.seq == seq] == [
        (seq, DOOMED, "election_failed")]


def test_an_unhosted_leaderless_partition_of_a_touched_topic_is_retried() -> None:
    """`doomed-0` (broker 3) is leaderless; `doomed-1` lives on broker 1. Broker 1 fails
    (seq 6): Kafka's `partitionsWithOfflineLeader` is every partition with a leader that is
    not live, not only those on broker 1 (KafkaController.scala:668-673 at 3.7.1), so
    `doomed-0` goes Offline -> Offline and is retried along with `doomed-1`."""
    log = doomed_on_a_dead_broker()
    log.create(DOOMED, 1, [1])
    seq = log.failure(1)
    out = same_whatever_the_grouping(log)
    assert [c for c in changes(out, seq) if c.topic == DOOMED] == [
        Change(seq, 1, DOOMED, 0, None, "OfflinePartition", "OfflinePartition", False),
        Change(seq, 1, DOOMED, 1, None, "OnlinePartition", "OfflinePartition", False),
        Change(seq, 2, DOOMED, 0, None, "OfflinePartition", "OnlinePartition", True),
        Change(seq, 2, DOOMED, 1, None, "OfflinePartition", "OnlinePartition", True),
        Change(seq, 3, DOOMED, 1, 1, "OnlineReplica", "OfflineReplica", False),
    ]


def test_a_queued_topic_is_not_retried_by_a_broker_change() -> None:
    """`triggerOnlineStateChangeForPartitions` and `partitionsWithOfflineLeader` leave out
    topics queued for deletion (PartitionStateMachine.scala:69-76, ControllerContext.scala:479-484
    at 3.7.1): once `doomed` is queued, broker 2's failure gives it no row."""
    log = doomed_on_a_dead_broker()
    log.delete(DOOMED)
    seq = log.failure(2)
    out = same_whatever_the_grouping(log)
    assert changes(out, seq) == []


def test_a_group_without_events_of_its_own_walks_in_a_later_run() -> None:
    """Cut after seq 6, as two nightly runs: the second run holds only `sibling`'s
    StopReplica response (seq 7); `doomed`'s group, with no event that night, still walks
    at seq 7 from the timeline (the run's horizon), as in one replay of the whole log."""
    log = doomed_on_a_dead_broker()
    log.delete(SIBLING)
    log.delete(DOOMED)
    seq = log.stop_replica_response(SIBLING, 0, 1)
    timeline = build_timeline(log.events)
    mine = [e for e in log.events if e.topic == DOOMED]
    state, first = replay(None, mine, timeline, until=seq - 1)
    assert [c.to_state for c in changes(first) if c.broker == 3][-1] == \
        "ReplicaDeletionIneligible"
    _, second = replay(state, [], timeline, until=seq)
    assert changes(second) == [
        Change(seq, 1, DOOMED, 0, 3, "ReplicaDeletionIneligible", "OfflineReplica", False)]
