"""Kafka 3.7.1 `PartitionStateMachineTest` against the partition machine.

Fixture as in Kafka: controller 5, controller epoch 50, partition t-0, unclean election
disabled. Kafka's ZK-write stubs return zkVersion 2 after a read at 0 (a mock artifact);
real ZK gives 1, which is what these tests assert.
"""

from __future__ import annotations

from statemachine import deletion
from statemachine.partition_machine import (
    controlled_shutdown_strategy,
    handle_partition_changes,
    offline_strategy,
    preferred_strategy,
)
from statemachine.replica_machine import handle_replica_changes
from tests.helpers.core import (
    EPOCH,
    P,
    R,
    add_part,
    kinds,
    lai,
    leadership,
    make_ctx,
    requests_count,
    um,
)

T = "t"
CLEAN = offline_strategy(False)


def _invalid(from_state: P, to: P) -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], partition_state=from_state)
    handle_partition_changes(ctx, ctx.topics[T], [part], to, CLEAN)
    assert part.partition_state == from_state
    assert requests_count(ctx.out) == 0
    (change,) = ctx.out.state_changes
    assert (change.machine, change.from_state, change.to_state, change.outcome) == (
        "partition", from_state.name, to.name, "rejected")
    assert kinds(ctx.out) == ["invalid_transition"]


def test_nonexistent_partition_to_new_partition() -> None:
    """`testNonexistentPartitionToNewPartitionTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5])
    handle_partition_changes(ctx, ctx.topics[T], [part], P.NewPartition)
    assert part.partition_state == P.NewPartition
    assert requests_count(ctx.out) == 0


def test_invalid_nonexistent_partition_to_online_partition() -> None:
    """`testInvalidNonexistentPartitionToOnlinePartitionTransition`."""
    _invalid(P.NonExistentPartition, P.OnlinePartition)


def test_invalid_nonexistent_partition_to_offline_partition() -> None:
    """`testInvalidNonexistentPartitionToOfflinePartitionTransition`."""
    _invalid(P.NonExistentPartition, P.OfflinePartition)


def test_new_partition_to_online_partition() -> None:
    """`testNewPartitionToOnlinePartitionTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], partition_state=P.NewPartition)
    results = handle_partition_changes(ctx, ctx.topics[T], [part], P.OnlinePartition, CLEAN)
    assert part.partition_state == P.OnlinePartition
    assert leadership(part) == (5, (5,), 0, 0, EPOCH)
    assert lai(ctx.out) == [(5, T, 0, 5, (5,), 0, 0, EPOCH, (5,), True)]
    assert um(ctx.out) == [(T, 0, 5, (5,), 0, 0, EPOCH, (5,), (), None)]
    assert results == {}  # initialisations are not election results (Kafka's map)


def test_new_partition_with_no_live_replica_stays_new() -> None:
    """Next to `testNewPartitionToOnlinePartitionTransition`: NewPartition->Online with no
    online replica stays New; nothing written or sent."""
    ctx = make_ctx(live=[6])
    part = add_part(ctx, T, 0, [5], partition_state=P.NewPartition)
    handle_partition_changes(ctx, ctx.topics[T], [part], P.OnlinePartition, CLEAN)
    assert part.partition_state == P.NewPartition
    assert not part.has_leadership
    assert requests_count(ctx.out) == 0
    assert kinds(ctx.out) == ["no_live_replica"]


def test_new_partition_to_offline_partition() -> None:
    """`testNewPartitionToOfflinePartitionTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], partition_state=P.NewPartition)
    handle_partition_changes(ctx, ctx.topics[T], [part], P.OfflinePartition)
    assert part.partition_state == P.OfflinePartition
    assert requests_count(ctx.out) == 0


def test_invalid_new_partition_to_nonexistent_partition() -> None:
    """`testInvalidNewPartitionToNonexistentPartitionTransition`."""
    _invalid(P.NewPartition, P.NonExistentPartition)


def test_online_partition_to_online_preferred_election() -> None:
    """`testOnlinePartitionToOnlineTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], leader=5, isr=[5], partition_state=P.OnlinePartition)
    results = handle_partition_changes(ctx, ctx.topics[T], [part], P.OnlinePartition,
                                       preferred_strategy)
    # The same leader is re-elected and the leader epoch is still bumped.
    assert part.partition_state == P.OnlinePartition
    assert results == {0: True}
    assert leadership(part) == (5, (5,), 1, 1, EPOCH)
    assert lai(ctx.out) == [(5, T, 0, 5, (5,), 1, 1, EPOCH, (5,), False)]


def test_online_partition_to_online_controlled_shutdown() -> None:
    """`testOnlinePartitionToOnlineTransitionForControlledShutdown`."""
    ctx = make_ctx(live=[6], shutting_down=[5])
    part = add_part(ctx, T, 0, [5, 6], leader=5, isr=[5, 6], partition_state=P.OnlinePartition)
    handle_partition_changes(ctx, ctx.topics[T], [part], P.OnlinePartition,
                             controlled_shutdown_strategy)
    assert part.partition_state == P.OnlinePartition
    assert leadership(part) == (6, (6,), 1, 1, EPOCH)
    # The LAI goes to both brokers, the shutting-down one included (KAFKA-7482).
    assert lai(ctx.out) == [
        (5, T, 0, 6, (6,), 1, 1, EPOCH, (5, 6), False),
        (6, T, 0, 6, (6,), 1, 1, EPOCH, (5, 6), False),
    ]
    # The shutting-down broker's replica is reported offline in the UM.
    assert um(ctx.out) == [(T, 0, 6, (6,), 1, 1, EPOCH, (5, 6), (5,), None)]


def test_online_partition_to_offline_partition() -> None:
    """`testOnlinePartitionToOfflineTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], leader=5, partition_state=P.OnlinePartition)
    handle_partition_changes(ctx, ctx.topics[T], [part], P.OfflinePartition)
    assert part.partition_state == P.OfflinePartition
    assert leadership(part) == (5, (5,), 0, 0, EPOCH)  # no write
    assert requests_count(ctx.out) == 0


def test_invalid_online_partition_to_nonexistent_partition() -> None:
    """`testInvalidOnlinePartitionToNonexistentPartitionTransition`."""
    _invalid(P.OnlinePartition, P.NonExistentPartition)


def test_invalid_online_partition_to_new_partition() -> None:
    """`testInvalidOnlinePartitionToNewPartitionTransition`."""
    _invalid(P.OnlinePartition, P.NewPartition)


def test_offline_partition_to_online_partition() -> None:
    """`testOfflinePartitionToOnlinePartitionTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], leader=-1, isr=[5], partition_state=P.OfflinePartition)
    results = handle_partition_changes(ctx, ctx.topics[T], [part], P.OnlinePartition, CLEAN)
    assert part.partition_state == P.OnlinePartition
    assert results == {0: True}
    assert leadership(part) == (5, (5,), 1, 1, EPOCH)
    assert lai(ctx.out) == [(5, T, 0, 5, (5,), 1, 1, EPOCH, (5,), False)]


def test_offline_partition_to_unclean_online_partition() -> None:
    """`testOfflinePartitionToUncleanOnlinePartitionTransition`.

    IBP >= 3.2 variant (the core models KIP-704): RECOVERING; only live replicas get
    the LAI."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [6, 5], leader=6, isr=[6], partition_state=P.OfflinePartition)
    handle_partition_changes(ctx, ctx.topics[T], [part], P.OnlinePartition,
                             offline_strategy(True))
    assert part.partition_state == P.OnlinePartition
    assert leadership(part) == (5, (5,), 1, 1, EPOCH)
    assert part.recovering
    assert lai(ctx.out) == [(5, T, 0, 5, (5,), 1, 1, EPOCH, (6, 5), False)]
    assert ctx.out.leader_and_isr[0].leader_recovery_state == "RECOVERING"
    assert "unclean_leader_election" in kinds(ctx.out)


def test_unclean_disabled_keeps_partition_offline() -> None:
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [6, 5], leader=6, isr=[6], partition_state=P.OfflinePartition)
    results = handle_partition_changes(ctx, ctx.topics[T], [part], P.OnlinePartition, CLEAN)
    assert results == {0: False}
    assert part.partition_state == P.OfflinePartition
    assert leadership(part) == (6, (6,), 0, 0, EPOCH)
    assert requests_count(ctx.out) == 0
    assert kinds(ctx.out) == ["election_failed"]


def test_offline_partition_without_state_stays_offline() -> None:
    """`testOfflinePartitionToOnlinePartitionTransitionErrorCodeFromStateLookup`.

    Kafka's ZK read returns NONODE: Left("LeaderAndIsr information doesn't exist"); the
    replay's equivalent is a partition without leadership info."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], partition_state=P.OfflinePartition)
    results = handle_partition_changes(ctx, ctx.topics[T], [part], P.OnlinePartition, CLEAN)
    assert results == {0: False}
    assert part.partition_state == P.OfflinePartition
    assert requests_count(ctx.out) == 0
    assert kinds(ctx.out) == ["election_failed"]


def test_offline_partition_to_nonexistent_partition() -> None:
    """`testOfflinePartitionToNonexistentPartitionTransition`."""
    ctx = make_ctx(live=[5])
    part = add_part(ctx, T, 0, [5], partition_state=P.OfflinePartition)
    handle_partition_changes(ctx, ctx.topics[T], [part], P.NonExistentPartition)
    assert part.partition_state == P.NonExistentPartition
    assert requests_count(ctx.out) == 0


def test_invalid_offline_partition_to_new_partition() -> None:
    """`testInvalidOfflinePartitionToNewPartitionTransition`."""
    _invalid(P.OfflinePartition, P.NewPartition)


def test_offline_partitions_count() -> None:
    """`testUpdatingOfflinePartitionsCount`.

    `offlinePartitionCount` is derived from the partition states (the core keeps no
    metric): 4 after New->Offline, 0 after the Offline election."""
    ctx = make_ctx(live=[5])
    topic = ctx.topic("test")
    parts = [add_part(ctx, "test", i, [5], leader=5, isr=[5]) for i in range(4)]
    handle_partition_changes(ctx, topic, parts, P.NewPartition)
    handle_partition_changes(ctx, topic, parts, P.OfflinePartition)
    assert sum(p.partition_state == P.OfflinePartition for p in parts) == 4
    handle_partition_changes(ctx, topic, parts, P.OnlinePartition, CLEAN)
    assert sum(p.partition_state == P.OfflinePartition for p in parts) == 0
    assert [leadership(p) for p in parts] == [(5, (5,), 1, 1, EPOCH)] * 4


def test_partitions_and_replicas_during_topic_deletion() -> None:
    """`testUpdatingOfflinePartitionsCountDuringTopicDeletion`.

    The derived part: with no live broker, enqueueing the topic moves the
    partitions Offline -> NonExistent, the dead replicas to Ineligible, and marks the topic
    ineligible (the metric itself is not modelled)."""
    ctx = make_ctx(live=[])
    topic = ctx.topic("test")
    parts = [add_part(ctx, "test", i, [5]) for i in range(4)]
    handle_partition_changes(ctx, topic, parts, P.NewPartition)
    handle_partition_changes(ctx, topic, parts, P.OfflinePartition)
    handle_replica_changes(ctx, topic, [(p, 5) for p in parts], R.NewReplica)
    handle_replica_changes(ctx, topic, [(p, 5) for p in parts], R.OfflineReplica)
    assert sum(p.partition_state == P.OfflinePartition for p in parts) == 4
    deletion.enqueue(ctx, topic)
    assert [p.partition_state for p in parts] == [P.NonExistentPartition] * 4
    assert [p.replica_states for p in parts] == [{5: R.ReplicaDeletionIneligible}] * 4
    assert (topic.queued_for_deletion, topic.deletion_started,
            topic.ineligible_for_deletion) == (True, True, True)
