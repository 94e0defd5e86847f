"""`TopicDeletionManager` for one topic (Kafka 3.7.1).

Deletion completes only when every replica of every partition of the topic is
ReplicaDeletionSuccessful. The replay keeps all partitions of a topic in one group, so that
rule is evaluated here, on the whole topic, at the moment Kafka evaluates it.

`resumeDeletions` in Kafka walks every queued topic of the cluster. Here an event's own
handler walks the topic at hand (`resume_deletions`), and the timeline's deletion-activity
step has every group walk its other queued topics (`resume_queued`) once. Kafka may walk
twice in one event (a StopReplica response with failed and deleted replicas); for a topic
the event does not touch that ends as one walk: between events a queued topic has a
ReplicaDeletionStarted replica or is ineligible for deletion, and from there a first walk
at most retries its ineligible replicas and a second changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from statemachine import windows
from statemachine.context import ControllerContext
from statemachine.model import Part, Topic
from statemachine.partition_machine import handle_partition_changes
from statemachine.replica_machine import Replica, handle_replica_changes
from statemachine.requests import RequestBatch
from statemachine.states import PartitionState, ReplicaState

R = ReplicaState


def topic_replicas(topic: Topic) -> list[Replica]:
    """`replicasForTopic`: every assigned replica of every partition."""
    return [(part, b) for part in topic.sorted_parts() for b in part.replicas]


def _in_state(replicas: Sequence[Replica], state: ReplicaState) -> list[Replica]:
    return [(p, b) for p, b in replicas if p.replica_states.get(b) == state]


def enqueue(ctx: ControllerContext, topic: Topic) -> None:
    topic.queued_for_deletion = True
    ctx.queued.add(topic.name)
    windows.mark_topics(ctx, (topic,))  # its partitions' windows change kind
    resume_deletions(ctx, topic)


def found_at_failover(ctx: ControllerContext, topic: Topic, queued: frozenset[str]) -> None:
    """`TopicDeletionManager.init` with the topics the new controller read from
    `/admin/delete_topics` (`fetchTopicDeletionsInProgress`): what is queued is what it
    found, not what the replay had queued (a deletion the old controller completed or
    dropped, a marker written or removed while no controller ran). With
    `delete.topic.enable=false` nothing is queued (the markers are removed). A topic the
    replay had otherwise is a finding. `onControllerFailover` goes on as for any queued
    topic: ineligibility, then `tryTopicDeletion`."""
    found = topic.name in queued and ctx.config.delete_topic_enable and topic.exists
    if found == topic.queued_for_deletion:
        return
    ctx.finding(topic.name, None, None, "deletion_queue_differs",
                f"the new controller found {topic.name} "
                + ("queued for deletion; the replay had not queued it"
                   if found else "not queued for deletion; the replay had queued it")
                + ": taken as found")
    topic.queued_for_deletion = found
    if found:
        ctx.queued.add(topic.name)
    else:
        ctx.queued.discard(topic.name)
        topic.deletion_started = topic.ineligible_for_deletion = False
    windows.mark_topics(ctx, (topic,))  # its partitions' windows change kind


def mark_ineligible(topic: Topic) -> None:
    if topic.queued_for_deletion:
        topic.ineligible_for_deletion = True


def resume_for_topic(ctx: ControllerContext, topic: Topic) -> None:
    """`resumeDeletionForTopics({topic})`."""
    if topic.queued_for_deletion:
        topic.ineligible_for_deletion = False
        resume_deletions(ctx, topic)


def resume_queued(ctx: ControllerContext, skip: set[str]) -> None:
    """`resumeDeletions` for the queued topics of the group but those in `skip` (they
    walked in the seq already). Kafka walks a hash set; the replay takes names in
    ascending order (topics do not interact, so only the order of rows could differ)."""
    for name in sorted(ctx.queued - skip):
        resume_deletions(ctx, ctx.topics[name])


def resume_deletions(ctx: ControllerContext, topic: Topic) -> None:
    """`resumeDeletions` (TopicDeletionManager.scala:318 at 3.7.1) for one topic."""
    ctx.walked(topic.name)
    if not topic.queued_for_deletion or topic.deletion_started_count:
        # Some replica is ReplicaDeletionStarted: not all are deleted, no retry, and the
        # topic is not eligible (a deletion is in progress). Nothing to do.
        return
    replicas = topic_replicas(topic)
    retry = False
    # The completion rule: every replica of every partition deleted (vacuously true for a
    # topic with no replicas left).
    if all(p.replica_states.get(b) == R.ReplicaDeletionSuccessful for p, b in replicas):
        complete(ctx, topic, replicas)
        return
    started = bool(_in_state(replicas, R.ReplicaDeletionStarted))
    if not started and _in_state(replicas, R.ReplicaDeletionIneligible):
        retry = True
    eligible = not started and not topic.ineligible_for_deletion
    if retry:
        handle_replica_changes(ctx, topic, _in_state(replicas, R.ReplicaDeletionIneligible),
                               R.OfflineReplica)
    if eligible:
        on_topic_deletion(ctx, topic)


def complete(ctx: ControllerContext, topic: Topic, replicas: Sequence[Replica]) -> None:
    """`completeDeleteTopic`, then `removeTopic`: assignments, leadership and deletion
    bookkeeping go; partition states stay (as NonExistentPartition)."""
    parts = list(dict.fromkeys(p for p, _ in replicas))
    handle_replica_changes(ctx, topic, replicas, R.NonExistentReplica)
    if not ctx.config.profile.deletion_start_non_existent:
        # Version note: before 2.1 (KAFKA-6753) the partitions leave only now.
        _to_non_existent(ctx, topic, parts)
    for part in topic.parts.values():
        ctx.set_assignment(topic, part, ())
        part.clear_leadership()
    topic.queued_for_deletion = topic.deletion_started = topic.ineligible_for_deletion = False
    ctx.queued.discard(topic.name)
    topic.unclean_leader_election_enable = None
    ctx.finding(topic.name, None, None, "topic_deleted",
                f"Deletion of topic {topic.name} successfully completed")


def on_topic_deletion(ctx: ControllerContext, topic: Topic) -> None:
    parts = [p for p in topic.sorted_parts() if p.replicas]
    if not topic.deletion_started:
        # Version note: from 2.1 (KAFKA-6753) the partitions leave when the deletion
        # starts; before, at its completion (`complete`).
        if ctx.config.profile.deletion_start_non_existent:
            _to_non_existent(ctx, topic, parts)
        topic.deletion_started = True
    batch = RequestBatch(ctx, topic)
    for part in parts:
        batch.add_update_metadata(part)
    batch.send()
    on_partition_deletion(ctx, topic, parts)


def _to_non_existent(ctx: ControllerContext, topic: Topic, parts: Sequence[Part]) -> None:
    handle_partition_changes(ctx, topic, parts, PartitionState.OfflinePartition)
    handle_partition_changes(ctx, topic, parts, PartitionState.NonExistentPartition)


def on_partition_deletion(ctx: ControllerContext, topic: Topic, parts: Sequence[Part]) -> None:
    live = ctx.live
    replicas = [(p, b) for p in parts for b in p.replicas]
    dead = [(p, b) for p, b in replicas if b not in live]
    retry = [(p, b) for p, b in replicas
             if b in live and p.replica_states.get(b) != R.ReplicaDeletionSuccessful]
    handle_replica_changes(ctx, topic, dead, R.ReplicaDeletionIneligible)
    handle_replica_changes(ctx, topic, retry, R.OfflineReplica)
    handle_replica_changes(ctx, topic, retry, R.ReplicaDeletionStarted)
    if dead:
        mark_ineligible(topic)


def complete_replica_deletion(ctx: ControllerContext, topic: Topic,
                              replicas: Sequence[Replica]) -> None:
    if topic.queued_for_deletion:
        handle_replica_changes(ctx, topic, replicas, R.ReplicaDeletionSuccessful)
        resume_deletions(ctx, topic)


def fail_replica_deletion(ctx: ControllerContext, topic: Topic,
                          replicas: Sequence[Replica]) -> None:
    if topic.queued_for_deletion and replicas:
        handle_replica_changes(ctx, topic, replicas, R.ReplicaDeletionIneligible)
        mark_ineligible(topic)
        resume_deletions(ctx, topic)
