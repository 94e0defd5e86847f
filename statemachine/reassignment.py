"""Partition reassignment, the KIP-455 model of Kafka 2.4+: `KafkaController`'s
`onPartitionReassignment` and the steps around it, as in Kafka 3.7.1; and, for the profiles
before 2.4, the older steps (bottom of the file)."""

from __future__ import annotations

from typing import NamedTuple

from statemachine import deletion
from statemachine.context import ControllerContext
from statemachine.model import Part, Topic
from statemachine.partition_machine import handle_partition_changes, reassign_strategy
from statemachine.replica_machine import handle_replica_changes
from statemachine.requests import RequestBatch, send_update_metadata
from statemachine.rows import Ints
from statemachine.states import PartitionState, ReplicaState

R = ReplicaState


class Assignment(NamedTuple):
    """`ReplicaAssignment(replicas, addingReplicas, removingReplicas)`."""

    replicas: Ints
    adding: Ints = ()
    removing: Ints = ()

    @property
    def being_reassigned(self) -> bool:
        return bool(self.adding or self.removing)

    @property
    def target(self) -> Ints:
        return tuple(r for r in self.replicas if r not in self.removing)

    @property
    def origin(self) -> Ints:
        return tuple(r for r in self.replicas if r not in self.adding)

    def reassign_to(self, target: Ints) -> Assignment:
        """Target replicas first, in target order, then the origin replicas."""
        replicas = tuple(dict.fromkeys((*target, *self.origin)))
        origin = self.origin
        return Assignment(
            replicas,
            tuple(r for r in replicas if r not in origin),
            tuple(r for r in replicas if r not in target),
        )


def current_assignment(part: Part) -> Assignment:
    return Assignment(part.replicas, part.adding, part.removing)


def request(ctx: ControllerContext, topic: Topic, part: Part, target: Ints) -> None:
    """A reassignment request (ZK znode or AlterPartitionReassignments API)."""
    if topic.queued_for_deletion and part.replicas and not ctx.config.profile.kip455_reassignment:
        drop_before_kip455(ctx, topic, part)  # "Skipping reassignment ... being deleted"
    if topic.queued_for_deletion or not part.replicas:
        ctx.finding(topic.name, part.partition, None, "reassignment_rejected",
                    f"UNKNOWN_TOPIC_OR_PARTITION: {topic.name}-{part.partition} "
                    + ("is queued for deletion" if topic.queued_for_deletion
                       else "has no assignment"))
        return
    if ctx.config.profile.kip455_reassignment:
        # maybeBuildReassignment: an ongoing reassignment is re-targeted from its origin.
        new = current_assignment(part).reassign_to(target)
    elif part.replicas == target:
        # Version note: before 2.4 "Partition ... to be reassigned is already assigned to
        # replicas ... Ignoring request for partition reassignment": no epoch bump.
        drop_before_kip455(ctx, topic, part)
        return
    else:
        new = _zk_context(part, target)
    offline_adding = [r for r in new.adding if r not in ctx.live]
    if offline_adding:
        # The API path rejects this (INVALID_REPLICA_ASSIGNMENT); the ZK path, which
        # Kafka's own tests use, accepts it and stalls in phase A until the broker is back.
        ctx.finding(topic.name, part.partition, None, "reassignment_to_offline_broker",
                    f"adding replicas {offline_adding} are not live; the reassignment "
                    "waits for them")
    on_partition_reassignment(ctx, topic, part, new)


def maybe_complete(ctx: ControllerContext, topic: Topic, part: Part) -> None:
    """`maybeCompleteReassignment`, after an ISR change of a reassigning partition."""
    if part.being_reassigned and _complete(part, current_assignment(part)):
        on_partition_reassignment(ctx, topic, part, current_assignment(part))


def _complete(part: Part, assignment: Assignment) -> bool:
    if not assignment.being_reassigned:
        return True
    isr = part.isr
    return all(r in isr for r in assignment.target)


def on_partition_reassignment(ctx: ControllerContext, topic: Topic, part: Part,
                              new: Assignment) -> None:
    if not ctx.config.profile.kip455_reassignment:
        _on_partition_reassignment_before_kip455(ctx, topic, part, new)
        return
    deletion.mark_ineligible(topic)
    current = current_assignment(part)
    if current != new:
        # U: store the new assignment, then stop replicas that left it altogether.
        ctx.set_assignment(topic, part, new.replicas, new.adding, new.removing)
        unneeded = tuple(r for r in current.replicas if r not in new.replicas)
        if unneeded:
            stop_removed_replicas(ctx, topic, part, unneeded)
    if not part.has_leadership:
        # updateLeaderEpoch finds no ZK state: IllegalStateException in Kafka, which makes
        # the controller resign. Nothing sensible can be replayed past it.
        ctx.finding(topic.name, part.partition, None, "reassignment_without_leader",
                    f"{topic.name}-{part.partition} has no leadership info; Kafka would "
                    "raise IllegalStateException and the controller would resign")
        return
    if not _complete(part, new):
        # Phase A: bump the leader epoch, start the adding replicas.
        update_leader_epoch_and_send(ctx, topic, part)
        for a in new.adding:
            handle_replica_changes(ctx, topic, [(part, a)], R.NewReplica)
        return
    # Phase B: the targets are in sync.
    handle_replica_changes(ctx, topic, [(part, a) for a in new.adding], R.OnlineReplica)
    ctx.set_assignment(topic, part, new.target)
    if part.leader not in new.target:
        handle_partition_changes(ctx, topic, [part], PartitionState.OnlinePartition,
                                 reassign_strategy)
    elif part.leader in ctx.live:
        update_leader_epoch_and_send(ctx, topic, part)
    else:
        handle_partition_changes(ctx, topic, [part], PartitionState.OnlinePartition,
                                 reassign_strategy)
    if new.removing:
        stop_removed_replicas(ctx, topic, part, new.removing)
    send_update_metadata(ctx, topic, part)
    deletion.resume_for_topic(ctx, topic)


def update_leader_epoch_and_send(ctx: ControllerContext, topic: Topic, part: Part) -> None:
    """Rewrite the ZK state with leaderEpoch + 1; LeaderAndIsr to the origin replicas
    (isNew=false) and the adding replicas (isNew=true), carrying the full assignment."""
    part.leader_epoch += 1
    part.zk_version += 1
    ctx.written(topic.name, part, "reassignment")
    batch = RequestBatch(ctx, topic)
    assignment = current_assignment(part)
    batch.add_leader_and_isr(assignment.origin, part, is_new=False)
    batch.add_leader_and_isr(assignment.adding, part, is_new=True)
    batch.send()


def stop_removed_replicas(ctx: ControllerContext, topic: Topic, part: Part, removed: Ints) -> None:
    """Four separate calls: the controller does not wait for the StopReplica response."""
    replicas = [(part, r) for r in removed]
    for target in (R.OfflineReplica, R.ReplicaDeletionStarted, R.ReplicaDeletionSuccessful,
                   R.NonExistentReplica):
        handle_replica_changes(ctx, topic, replicas, target)


# -- Version note: before 2.4 (KIP-455) ---------------------------------------------------
# ZK holds the assignment OAR + RAR while a reassignment runs and /admin/reassign_partitions
# the target RAR; the replay keeps RAR as `removing` (AR - RAR) and the replicas to start as
# `adding` (RAR - AR at request time), the controller's `partitionsBeingReassigned`.


def resumed_at_failover(ctx: ControllerContext, topic: Topic, part: Part) -> bool:
    """Whether a failover resumes the reassignment of `part`. From 2.4 every one is
    (`maybeResumeReassignments`); before, `maybeTriggerPartitionReassignment` drops those
    of a topic queued for deletion and those whose assignment (OAR + RAR) is already the
    target RAR (a pure expansion: RAR ++ OAR adds nothing after RAR), and resumes the rest."""
    if ctx.config.profile.kip455_reassignment:
        return True
    if topic.queued_for_deletion or part.replicas == part.target_replicas:
        drop_before_kip455(ctx, topic, part)
        return False
    return True


def drop_before_kip455(ctx: ControllerContext, topic: Topic, part: Part) -> None:
    """`removePartitionFromReassignedPartitions`: the controller forgets the reassignment;
    the assignment stays as ZK has it (OAR + RAR when one was running)."""
    if part.being_reassigned:
        ctx.set_assignment(topic, part, part.replicas)


def _zk_context(part: Part, target: Ints) -> Assignment:
    """AR = (RAR ++ AR) without duplicates: a re-target extends the running union and
    drops nothing until the end (the znode's new RAR replaces the old one)."""
    union = tuple(dict.fromkeys((*target, *part.replicas)))
    return Assignment(union, tuple(r for r in target if r not in part.replicas),
                      tuple(r for r in union if r not in target))


def _on_partition_reassignment_before_kip455(ctx: ControllerContext, topic: Topic, part: Part,
                                             new: Assignment) -> None:
    """The twelve steps of `onPartitionReassignment` before 2.4."""
    deletion.mark_ineligible(topic)
    if current_assignment(part) != new:
        ctx.set_assignment(topic, part, new.replicas, new.adding, new.removing)  # step 1
    if not part.has_leadership:
        ctx.finding(topic.name, part.partition, None, "reassignment_without_leader",
                    f"{topic.name}-{part.partition} has no leadership info; Kafka fails the "
                    "leader epoch update of the reassignment")
        return
    rar = new.target
    if not all(r in part.isr for r in rar):
        # Steps 2-3: LeaderAndIsr (isNew=false) to OAR + RAR, then start RAR - OAR.
        _bump_and_send(ctx, topic, part, part.replicas)
        for a in new.adding:
            handle_replica_changes(ctx, topic, [(part, a)], R.NewReplica)
        return
    old_and_new = part.replicas
    for r in rar:  # step 5: every RAR replica, one call each
        handle_replica_changes(ctx, topic, [(part, r)], R.OnlineReplica)
    ctx.set_assignment(topic, part, rar)  # step 6
    if part.leader in rar and part.leader in ctx.live:
        _bump_and_send(ctx, topic, part, old_and_new)  # step 7, leader kept
    else:
        handle_partition_changes(ctx, topic, [part], PartitionState.OnlinePartition,
                                 reassign_strategy)
    removed = tuple(r for r in old_and_new if r not in rar)
    if removed:
        stop_removed_replicas(ctx, topic, part, removed)  # steps 8-9
    send_update_metadata(ctx, topic, part)  # step 12
    deletion.resume_for_topic(ctx, topic)


def _bump_and_send(ctx: ControllerContext, topic: Topic, part: Part, recipients: Ints) -> None:
    """`updateLeaderEpochAndSendRequest` before 2.4: every recipient gets isNew=false."""
    part.leader_epoch += 1
    part.zk_version += 1
    part.written(ctx.epoch)
    batch = RequestBatch(ctx, topic)
    batch.add_leader_and_isr(recipients, part, is_new=False)
    batch.send()
