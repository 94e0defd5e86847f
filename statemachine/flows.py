"""Kafka's controller flows (`KafkaController`, Kafka 3.7.1) as they touch the topics of
one replay group.

Each cluster step or event becomes the sequence of state-machine calls `KafkaController`
makes, per topic, in Kafka's order. Kafka runs each call over all partitions of the cluster
at once; partitions of different topics never influence each other inside a call (except by
sharing a request batch, which only merges their requests), so running the calls topic by
topic gives the same states and requests.

A broker event wakes the topics with a replica on that broker, plus those led by a
shutting-down broker on a failure (they lose their leader in `partitionsWithOfflineLeader`),
and, because Kafka retries them at every broker change
(`PartitionStateMachine.triggerOnlinePartitionStateChange()` with no argument, and
`partitionsWithOfflineLeader` in `onReplicasBecomeOffline`), every leaderless partition of
the group (`ControllerContext.leaderless_by_topic`). A deletion-activity step has every
group walk its queued topics (`apply_deletion_step`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schemas import event_types as ET
from statemachine import deletion, reassignment, windows
from statemachine.cluster import (
    BROKER_CHANGE,
    DELETION,
    FAILOVER,
    SHUTDOWN,
    ClusterState,
    ClusterStep,
)
from statemachine.context import ControllerContext
from statemachine.events import Event
from statemachine.model import Part, Topic
from statemachine.partition_machine import (
    controlled_shutdown_strategy,
    handle_partition_changes,
    offline_strategy,
    preferred_strategy,
)
from statemachine.replica_machine import Replica, handle_replica_changes
from statemachine.requests import RequestBatch, send_update_metadata
from statemachine.rows import APPLIED, Ints
from statemachine.snapshot import partition_snapshot
from statemachine.states import PARTITION_NAMES, REPLICA_NAMES, PartitionState, ReplicaState

P = PartitionState
R = ReplicaState
# The finding of a log event a what-if variant makes impossible (`_isr_changed`).
NO_LONGER_APPLIES = "log_event_no_longer_applies"
_CLEAN = offline_strategy(False)
_UNCLEAN = offline_strategy(True)


def trigger_online(ctx: ControllerContext, topic: Topic, parts: Sequence[Part]) -> dict[int, bool]:
    """`triggerOnlinePartitionStateChange` restricted to `parts`: New and Offline
    partitions of a topic not queued for deletion, Offline strategy, allowUnclean=false
    (the topic's own unclean setting still applies)."""
    if topic.queued_for_deletion:
        return {}
    todo = [p for p in parts if p.partition_state in (P.NewPartition, P.OfflinePartition)]
    return handle_partition_changes(ctx, topic, todo, P.OnlinePartition, _CLEAN)


# -- cluster steps ---------------------------------------------------------------------


def apply_cluster_step(ctx: ControllerContext, step: ClusterStep) -> None:
    if step.kind == DELETION:
        apply_deletion_step(ctx, step)
        return
    ctx.begin(step.seq, step.ts, None)
    leaders = windows.leaders_before(ctx, step)
    ctx.epoch, ctx.controller = step.epoch, step.controller
    if step.kind == FAILOVER:
        ctx.set_liveness(step.live_after, step.shutting_down_after)
        for name in sorted(ctx.topics):
            topic = ctx.topics[name]
            if step.reset:
                close_history(ctx, topic)
            if step.queued is not None:
                deletion.found_at_failover(ctx, topic, step.queued)
            on_controller_failover(ctx, topic)
    elif step.kind == BROKER_CHANGE:
        _broker_change(ctx, step)
    elif step.kind == SHUTDOWN:
        ctx.set_liveness(step.live_after, step.shutting_down_after)
        for topic in ctx.topics_on((step.broker,)):
            on_controlled_shutdown(ctx, topic, step.broker)
    ctx.set_cluster(ClusterState(step.live_after, step.shutting_down_after, step.epoch,
                                 step.controller))
    ctx.note_leaderless()
    windows.settle_step(ctx, step, leaders)


def apply_deletion_step(ctx: ControllerContext, step: ClusterStep) -> None:
    """The `resumeDeletions` of a deletion-activity event for the queued topics of the
    group that have not walked in the seq already (in their own event's handler). Applied
    after the group's events of the seq."""
    ctx.begin(step.seq, step.ts, None)
    deletion.resume_queued(ctx, ctx.walked_topics if ctx.walked_seq == step.seq else set())
    if ctx.touched:
        ctx.note_leaderless()
        windows.settle(ctx, (step.event_type, None))


def _broker_change(ctx: ControllerContext, step: ClusterStep) -> None:
    """`KafkaController.processBrokerChange`: new brokers start; bounced brokers fail and
    start again; dead brokers fail. Liveness moves between the phases exactly as the
    controller updates it."""
    # The dead brokers leave the channel manager before any phase runs: they
    # stay in liveBrokers (elections still count them) until the last phase, but a request
    # addressed to them meanwhile is dropped ("since it is offline"), so it is not sent.
    gone = frozenset(step.dead)

    def enter(live: frozenset[int], shutting_down: frozenset[int]) -> None:
        ctx.set_liveness(live, shutting_down)
        ctx.live_or_shutting_down -= gone

    live, shutting_down = step.live_before, step.shutting_down_before
    if not ctx.config.profile.broker_bounce:
        # Version note: before 2.2 (KIP-380) the live brokers become ZK's at once, before
        # either phase (`controllerContext.liveBrokers = curBrokers`): the dead brokers are
        # gone already while the new ones start. No bounces (the timeline has none).
        enter((live | frozenset(step.new)) - gone, shutting_down - gone)
        if step.new:
            _startup(ctx, step.new)
        if step.dead:
            _failure(ctx, step.dead)
        return
    if step.new:
        live = live | frozenset(step.new)
        enter(live, shutting_down)
        _startup(ctx, step.new)
    if step.bounced:
        bounced = frozenset(step.bounced)
        live, shutting_down = live - bounced, shutting_down - bounced
        enter(live, shutting_down)
        _failure(ctx, step.bounced)
        live = live | bounced
        enter(live, shutting_down)
        _startup(ctx, step.bounced)
    if step.dead:
        live, shutting_down = live - gone, shutting_down - gone
        enter(live, shutting_down)
        _failure(ctx, step.dead)


def _hosted(topic: Topic, brokers: Ints) -> list[Replica]:
    return [(p, b) for p in topic.sorted_parts() for b in brokers if b in p.replicas]


def _startup(ctx: ControllerContext, brokers: Ints) -> None:
    leaderless = ctx.leaderless_by_topic()
    for topic in ctx.topics_on(brokers):
        leaderless.pop(topic.name, None)
        on_broker_startup(ctx, topic, brokers)
    # triggerOnlinePartitionStateChange() retries every New and Offline partition of the
    # cluster (KafkaController.scala:590 at 3.7.1), not only those on the new brokers.
    for name, parts in leaderless.items():
        trigger_online(ctx, ctx.topics[name], parts)


def _failure(ctx: ControllerContext, brokers: Ints) -> None:
    # Partitions led by a shutting-down broker lose their leader here too (they are in
    # partitionsWithOfflineLeader), so wake the topics of shutting-down brokers as well.
    leaderless = ctx.leaderless_by_topic()
    for topic in ctx.topics_on((*brokers, *sorted(ctx.shutting_down))):
        leaderless.pop(topic.name, None)
        on_replicas_become_offline(ctx, topic, _hosted(topic, brokers), brokers)
    # partitionsWithOfflineLeader and triggerOnlinePartitionStateChange() span the cluster
    # (KafkaController.scala:668-673 at 3.7.1): the leaderless partitions of untouched
    # topics go Offline -> Offline and are retried too.
    for name, parts in leaderless.items():
        _offline_and_retry(ctx, ctx.topics[name], parts)


def on_broker_startup(ctx: ControllerContext, topic: Topic, new: Ints) -> None:
    """`KafkaController.onBrokerStartup`. Its first two UpdateMetadata requests carry no
    partition change (an empty UM to the existing brokers, and the current metadata to the
    new ones), so no partition rows come of them."""
    replicas = _hosted(topic, new)
    parts = list(dict.fromkeys(p for p, _ in replicas))
    # One OnlineReplica call for the replicas on all new brokers: their groupBy order.
    handle_replica_changes(ctx, topic, replicas, R.OnlineReplica, new)
    # Every New or Offline partition of the topic, hosted on the new brokers or not.
    trigger_online(ctx, topic, topic.sorted_parts())
    if not replicas:
        return
    for part in parts:
        if part.being_reassigned and any(r in new for r in part.target_replicas):
            reassignment.on_partition_reassignment(
                ctx, topic, part, reassignment.current_assignment(part))
    if topic.queued_for_deletion:
        deletion.resume_for_topic(ctx, topic)


def on_replicas_become_offline(ctx: ControllerContext, topic: Topic,
                               replicas: Sequence[Replica], failed: Ints = ()) -> None:
    """`KafkaController.onReplicasBecomeOffline` for the replicas of one topic on the
    `failed` brokers (Kafka's one OfflineReplica call spans all their replicas: its
    groupBy order is that of all of them)."""
    if not topic.queued_for_deletion:
        _offline_and_retry(ctx, topic, topic.sorted_parts())
        handle_replica_changes(ctx, topic, replicas, R.OfflineReplica, failed)
    else:
        deletion.fail_replica_deletion(ctx, topic, replicas)


def _offline_and_retry(ctx: ControllerContext, topic: Topic, parts: Sequence[Part]) -> None:
    """The partition steps of `onReplicasBecomeOffline` for `parts` of a topic not queued
    for deletion: those whose leader is not live (`partitionsWithOfflineLeader`: a dead or
    shutting-down leader, or none) go Offline, then every New and Offline one is retried."""
    if topic.queued_for_deletion:
        return
    live = ctx.live
    offline_leader = [p for p in parts if p.has_leadership and p.leader not in live]
    handle_partition_changes(ctx, topic, offline_leader, P.OfflinePartition)
    trigger_online(ctx, topic, parts)


def on_controlled_shutdown(ctx: ControllerContext, topic: Topic, broker: int) -> None:
    """`KafkaController.doControlledShutdown` after its checks: move leadership off the
    broker, take it out of the ISRs it follows. RF=1 partitions and topics queued for
    deletion are left alone (version note: the latter from 2.1, KAFKA-6753)."""
    if topic.queued_for_deletion and ctx.config.profile.shutdown_skips_deleted_topics:
        return
    act_on = [p for p in topic.sorted_parts()
              if broker in p.replicas and len(p.replicas) > 1 and p.has_leadership]
    led = [p for p in act_on if p.leader == broker]
    followed = [p for p in act_on if p.leader != broker]
    results = handle_partition_changes(ctx, topic, led, P.OnlinePartition,
                                       controlled_shutdown_strategy)
    for part in led:
        if not results.get(part.partition, False):
            ctx.finding(topic.name, part.partition, broker, "controlled_shutdown_incomplete",
                        f"broker {broker} still leads {topic.name}-{part.partition}: no other "
                        "ISR member can take over")
    if followed:
        batch = RequestBatch(ctx, topic)
        for part in followed:
            batch.add_stop_replica((broker,), part, delete=False)
        batch.send()
        handle_replica_changes(ctx, topic, [(p, broker) for p in followed], R.OfflineReplica)


# The reason of the transitions `close_history` records.
HISTORY_CLOSED = "closed: a new history (the controller epoch went back)"


def close_history(ctx: ControllerContext, topic: Topic) -> None:
    """A failover whose controller epoch went back (`ClusterStep.reset`: ZooKeeper's data
    is not the one the partitions were replayed on): the topic's partitions end as a
    completed deletion leaves them (no assignment, no leadership, every replica and the
    partition NonExistent), so that their windows close here and a later creation of the
    same name starts afresh instead of being merged into them. The transitions are
    recorded with `HISTORY_CLOSED`; the timeline's `controller_epoch_reset` finding says
    why."""
    for part in topic.sorted_parts():
        for r in sorted(part.replica_states):
            ctx.change(topic.name, part, r, "replica", REPLICA_NAMES[part.replica_states[r]],
                       R.NonExistentReplica.name, APPLIED, HISTORY_CLOSED)
        if part.partition_state != P.NonExistentPartition:
            ctx.change(topic.name, part, None, "partition",
                       PARTITION_NAMES[part.partition_state], P.NonExistentPartition.name,
                       APPLIED, HISTORY_CLOSED)
        part.replica_states = {}
        part.partition_state = P.NonExistentPartition
        ctx.set_assignment(topic, part, ())
        part.clear_leadership()
    topic.queued_for_deletion = topic.deletion_started = topic.ineligible_for_deletion = False
    topic.deletion_started_count = 0
    ctx.queued.discard(topic.name)
    topic.unclean_leader_election_enable = None
    windows.mark_topics(ctx, (topic,))


def on_controller_failover(ctx: ControllerContext, topic: Topic) -> None:
    """`KafkaController.onControllerFailover` for one topic, from
    `fetchTopicDeletionsInProgress` to `tryTopicDeletion`: the new controller rebuilds its
    view from ZK (the assignment and leadership survive; machine states and shutting-down
    brokers do not)."""
    live = ctx.live
    parts = [p for p in topic.sorted_parts() if p.replicas]
    if topic.queued_for_deletion:
        topic.deletion_started = False
        topic.ineligible_for_deletion = any(
            r not in live for p in parts for r in p.replicas) or any(
            p.being_reassigned for p in parts)
    for part in parts:
        part.controller_epoch = part.zk_controller_epoch  # the cache is reloaded from ZK
    # ReplicaStateMachine.startup: every state is rebuilt, none is Started.
    topic.deletion_started_count = 0
    online: list[Replica] = []
    offline: list[Replica] = []
    for part in topic.sorted_parts():
        old = part.replica_states
        part.replica_states = {}
        for r in part.replicas:
            state = R.OnlineReplica if r in live else R.ReplicaDeletionIneligible
            part.replica_states[r] = state
            (online if state == R.OnlineReplica else offline).append((part, r))
            if old.get(r) != state:
                ctx.change(topic.name, part, r, "replica",
                           REPLICA_NAMES[old.get(r, R.NonExistentReplica)], state.name,
                           APPLIED, "initialized by controller failover")
    handle_replica_changes(ctx, topic, online, R.OnlineReplica)
    if ctx.config.profile.failover_offline_transition:
        # Version note: from 2.3 (KAFKA-3143); before, dead replicas keep their leadership
        # and ISR membership in ZK until their broker changes again.
        handle_replica_changes(ctx, topic, offline, R.OfflineReplica)
    # PartitionStateMachine.startup (initializePartitionState).
    for part in parts:
        if part.has_leadership:
            partition_state = P.OnlinePartition if part.leader in live else P.OfflinePartition
        else:
            partition_state = P.NewPartition
        if partition_state != part.partition_state:
            ctx.change(topic.name, part, None, "partition", PARTITION_NAMES[part.partition_state],
                       partition_state.name, APPLIED, "initialized by controller failover")
            part.partition_state = partition_state
    trigger_online(ctx, topic, parts)
    # initializePartitionReassignments resumes every in-memory reassignment through
    # maybeResumeReassignments, which (unlike the API/znode trigger) does not skip topics
    # queued for deletion. Version note: not so before 2.4 (`resumed_at_failover`).
    for part in parts:
        if part.being_reassigned and reassignment.resumed_at_failover(ctx, topic, part):
            reassignment.on_partition_reassignment(
                ctx, topic, part, reassignment.current_assignment(part))
    deletion.resume_deletions(ctx, topic)


# -- topic and partition events --------------------------------------------------------


def apply_event(ctx: ControllerContext, e: Event) -> None:
    ctx.begin(e.seq, e.ts, e.source)
    handler = _HANDLERS.get(e.event_type)
    if handler is None:
        ctx.finding(e.topic, e.partition, e.broker_id, "unsupported_event",
                    f"event type {e.event_type!r} is not a topic or partition event")
        return
    handler(ctx, e)
    if ctx.touched:
        ctx.note_leaderless()
        windows.settle(ctx, (e.event_type, None))


def _known_part(ctx: ControllerContext, e: Event, kind: str) -> tuple[Topic, Part] | None:
    topic = ctx.topics.get(e.topic or "")
    part = topic.parts.get(e.partition if e.partition is not None else -1) if topic else None
    if topic is None or part is None or not part.replicas:
        ctx.finding(e.topic, e.partition, e.broker_id, kind,
                    f"UNKNOWN_TOPIC_OR_PARTITION: {e.topic}-{e.partition} does not exist")
        return None
    return topic, part


def _partition_created(ctx: ControllerContext, e: Event) -> None:
    assert e.topic is not None and e.partition is not None and e.replicas is not None
    topic = ctx.topic(e.topic)
    if topic.queued_for_deletion:
        ctx.finding(e.topic, e.partition, None, "partition_created_during_deletion",
                    f"topic {e.topic} is queued for deletion; the new partition is ignored")
        return
    part = topic.parts.get(e.partition)
    if part is not None and part.replicas:
        ctx.finding(e.topic, e.partition, None, "partition_exists",
                    f"{e.topic}-{e.partition} already has assignment {list(part.replicas)}")
        return
    if part is None:
        part = topic.parts[e.partition] = Part(e.partition, topic.name)
    if e.unclean_leader_election is not None:
        topic.unclean_leader_election_enable = e.unclean_leader_election
    ctx.set_assignment(topic, part, tuple(e.replicas))
    on_new_partition_creation(ctx, topic, [part])


def on_new_partition_creation(ctx: ControllerContext, topic: Topic, parts: Sequence[Part]) -> None:
    """`KafkaController.onNewPartitionCreation`: the replicas of a new partition end
    Online even on dead brokers."""
    replicas = [(p, b) for p in parts for b in p.replicas]
    handle_partition_changes(ctx, topic, parts, P.NewPartition)
    handle_replica_changes(ctx, topic, replicas, R.NewReplica)
    handle_partition_changes(ctx, topic, parts, P.OnlinePartition, _CLEAN)
    handle_replica_changes(ctx, topic, replicas, R.OnlineReplica)


def _reassignment_requested(ctx: ControllerContext, e: Event) -> None:
    found = _known_part(ctx, e, "reassignment_rejected")
    if found is not None:
        assert e.replicas is not None
        reassignment.request(ctx, *found, tuple(e.replicas))


def _held_dead_in(ctx: ControllerContext, isr: Ints) -> list[int]:
    """The members of `isr` a what-if variant holds dead and that are dead now."""
    held = ctx.config.held_dead
    return [b for b in isr if b in held and b not in ctx.live_or_shutting_down] if held else []


def _isr_changed(ctx: ControllerContext, e: Event) -> None:
    """An ISR change by the leader: AlterPartition (`KafkaController.processAlterPartition`)
    or, before 2.7, the leader's own
    ZK write seen through an IsrChangeNotification. From 3.3 the request's leader epoch is
    the current one (any other is rejected), so the leader epoch never changes.

    Version note: before 3.3 an accepted request with a leader epoch ahead of the
    controller's is written as it came (AlterIsr writes the request's `LeaderAndIsr`; before
    2.7 the controller reloads what the leader wrote): the epoch is the request's.

    In a what-if variant, an ISR that names a broker the variant holds dead is a log event
    that no longer applies: the leader is always in the ISR it sends, so either the dead
    broker sent it, or a live leader vouched for a follower that cannot be fetching. Kafka
    never receives it (no write, no UpdateMetadata); one `NO_LONGER_APPLIES` finding
    records it, apart from the rejections."""
    found = _known_part(ctx, e, "alter_partition_rejected")
    if found is None:
        return
    topic, part = found
    assert e.isr is not None
    isr = tuple(e.isr)
    dead = _held_dead_in(ctx, isr)
    if dead:
        ctx.finding(topic.name, part.partition, part.leader, NO_LONGER_APPLIES,
                    f"ISR {list(isr)} names broker(s) {dead}, dead in this variant")
        return
    error = _alter_partition_error(ctx, part, isr, e.leader_epoch)
    if error is not None:
        ctx.finding(topic.name, part.partition, part.leader, "alter_partition_rejected", error)
        # Kafka still sends UM(all live or shutting down, every partition of the request)
        # for a rejected partition, with its unchanged state.
        send_update_metadata(ctx, topic, part)
        return
    ahead = e.leader_epoch is not None and e.leader_epoch > part.leader_epoch
    if isr != part.isr or ahead:
        part.isr = isr
        if ahead:
            assert e.leader_epoch is not None
            part.leader_epoch = e.leader_epoch
        part.zk_version += 1
        if len(isr) > 1:
            part.recovering = False  # a RECOVERING leader may only grow the ISR once done
        # Version note: before 2.7 (KIP-497) the leader wrote ZK itself, with the
        # controller epoch of its last LeaderAndIsr: the stored epochs stay as they were.
        ctx.written(topic.name, part, "isr_change", by_controller=ctx.config.profile.alter_isr)
    # The idempotent echo writes nothing and leaves the cache alone: Kafka refreshes the
    # cache only for the partitions it wrote (`updateLeaderAndIsrCache(successfulUpdates)`).
    ctx.touch(part)
    send_update_metadata(ctx, topic, part)
    if part.adding or part.removing:
        reassignment.maybe_complete(ctx, topic, part)


def _alter_partition_error(ctx: ControllerContext, part: Part, isr: Ints, leader_epoch: int | None,
                           ) -> str | None:
    """The partition-level checks of AlterPartition (3.3+ order), None when accepted. An
    ISR equal to the current one is accepted without a write (idempotent).

    Version note: before 2.7 (KIP-497) the leader wrote the ISR to ZK itself and the
    controller only reloaded it (`IsrChangeNotification`): nothing is checked. From 2.7 to
    3.2 AlterIsr fences a stale leader epoch only; KIP-841 (3.3) adds the rest."""
    if not part.has_leadership:
        return "UNKNOWN_TOPIC_OR_PARTITION: no leadership info"
    profile = ctx.config.profile
    if not profile.alter_isr:
        return None
    if not profile.alter_partition_kip841:
        if leader_epoch is not None and leader_epoch < part.leader_epoch:
            return f"FENCED_LEADER_EPOCH: leader epoch {leader_epoch} is behind {part.leader_epoch}"
        return None
    if leader_epoch is not None and leader_epoch != part.leader_epoch:
        if leader_epoch > part.leader_epoch:
            return f"NOT_CONTROLLER: leader epoch {leader_epoch} is ahead of {part.leader_epoch}"
        return f"FENCED_LEADER_EPOCH: leader epoch {leader_epoch} is behind {part.leader_epoch}"
    if part.leader < 0:
        return "NOT_LEADER_OR_FOLLOWER: the partition has no leader"
    if isr != part.isr and not ctx.live.issuperset(isr):
        return f"INELIGIBLE_REPLICA: ISR members {[r for r in isr if r not in ctx.live]} " \
               "are not live"
    return None


def _electable(ctx: ControllerContext, e: Event) -> tuple[Topic, Part] | None:
    """The partition of an election request, unless Kafka rejects the request outright."""
    found = _known_part(ctx, e, "election_rejected")
    if found is None:
        return None
    topic, _ = found
    if topic.queued_for_deletion:
        ctx.finding(e.topic, e.partition, None, "election_rejected",
                    f"INVALID_TOPIC_EXCEPTION: {e.topic} is queued for deletion")
        return None
    return found


def _preferred_election(ctx: ControllerContext, e: Event) -> None:
    found = _electable(ctx, e)
    if found is None:
        return
    topic, part = found
    if part.has_leadership and part.leader == part.replicas[0] \
            and ctx.config.profile.preferred_skips_elected:
        # ELECTION_NOT_NEEDED. Version note: before 2.2 (KAFKA-5692) the preferred replica
        # was elected again, with a new leader epoch.
        return
    results = handle_partition_changes(ctx, topic, [part], P.OnlinePartition,
                                       preferred_strategy)
    if not results.get(part.partition, False):
        ctx.finding(topic.name, part.partition, None, "preferred_leader_not_available",
                    f"preferred replica {part.replicas[0]} of {topic.name}-{part.partition} "
                    "is not live or not in the ISR")


def _unclean_election(ctx: ControllerContext, e: Event) -> None:
    found = _electable(ctx, e)
    if found is None:
        return
    topic, part = found
    if not part.has_leadership or (part.leader >= 0 and part.leader in ctx.live):
        return  # ELECTION_NOT_NEEDED
    results = handle_partition_changes(ctx, topic, [part], P.OnlinePartition, _UNCLEAN)
    if not results.get(part.partition, False):
        ctx.finding(topic.name, part.partition, None, "eligible_leaders_not_available",
                    f"no live replica of {topic.name}-{part.partition}")


def _topic_config_changed(ctx: ControllerContext, e: Event) -> None:
    topic = ctx.topics.get(e.topic or "")
    if topic is None or not topic.exists:
        ctx.finding(e.topic, None, None, "unknown_topic",
                    f"config change for topic {e.topic}, which does not exist")
        return
    topic.unclean_leader_election_enable = e.unclean_leader_election
    # Version note: before 2.1 (KAFKA-6835) only the broker-level setting triggered
    # elections; the topic's is read at its next election.
    if e.unclean_leader_election and ctx.config.profile.topic_unclean_trigger:
        # TopicUncleanLeaderElectionEnable: only an enable triggers elections.
        trigger_online(ctx, topic, topic.sorted_parts())


def _deletion_requested(ctx: ControllerContext, e: Event) -> None:
    topic = ctx.topics.get(e.topic or "")
    if not ctx.config.delete_topic_enable:
        ctx.finding(e.topic, None, None, "deletion_disabled",
                    f"delete.topic.enable=false: deletion of {e.topic} ignored")
        return
    if topic is None or not topic.exists:
        ctx.finding(e.topic, None, None, "unknown_topic",
                    f"deletion of topic {e.topic}, which does not exist; marker removed")
        return
    if any(p.being_reassigned for p in topic.parts.values()):
        deletion.mark_ineligible(topic)  # a no-op unless already queued, as in Kafka
    deletion.enqueue(ctx, topic)


def _deletion_completed(ctx: ControllerContext, e: Event) -> None:
    """The log's own completion line is checked, never applied: the replay completes a
    deletion only when every replica of the topic is deleted."""
    topic = ctx.topics.get(e.topic or "")
    if topic is not None and (topic.queued_for_deletion or topic.exists):
        waiting = [f"{p.partition}/{b}:"
                   f"{REPLICA_NAMES[p.replica_states.get(b, R.NonExistentReplica)]}"
                   for p, b in deletion.topic_replicas(topic)
                   if p.replica_states.get(b) != R.ReplicaDeletionSuccessful]
        ctx.finding(e.topic, None, None, "deletion_completion_mismatch",
                    f"the log says deletion of {e.topic} completed; the replay has replicas "
                    f"not deleted: {', '.join(waiting[:20])}")


def _stop_replica_response(ctx: ControllerContext, e: Event) -> None:
    found = _known_part(ctx, e, "stop_replica_response_ignored")
    if found is None:
        return
    topic, part = found
    assert e.broker_id is not None
    if not topic.deletion_started or e.broker_id not in part.replicas:
        ctx.finding(topic.name, part.partition, e.broker_id, "stop_replica_response_ignored",
                    f"StopReplica response from {e.broker_id} for {topic.name}-"
                    f"{part.partition}, whose deletion has not started")
        return
    replicas = [(part, e.broker_id)]
    if e.error:
        deletion.fail_replica_deletion(ctx, topic, replicas)
    else:
        deletion.complete_replica_deletion(ctx, topic, replicas)


_HANDLERS: dict[str, Callable[[ControllerContext, Event], None]] = {
    ET.PARTITION_CREATED: _partition_created,
    ET.REASSIGNMENT_REQUESTED: _reassignment_requested,
    ET.ISR_CHANGED: _isr_changed,
    ET.PREFERRED_LEADER_ELECTION: _preferred_election,
    ET.UNCLEAN_LEADER_ELECTION: _unclean_election,
    ET.TOPIC_CONFIG_CHANGED: _topic_config_changed,
    ET.TOPIC_DELETION_REQUESTED: _deletion_requested,
    ET.TOPIC_DELETION_COMPLETED: _deletion_completed,
    ET.STOP_REPLICA_RESPONSE: _stop_replica_response,
    ET.PARTITION_SNAPSHOT: partition_snapshot,
}
