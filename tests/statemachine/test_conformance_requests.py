"""Kafka 3.7.1 `ControllerChannelManagerTest` against the request
batch (`statemachine.requests.RequestBatch`).

Fixture as in Kafka: controller 1, controller epoch 1, brokers 1, 2, 3 live; topics foo and
bar, 2 partitions each, RF 3 round-robin. The core keeps one batch per topic (partitions of
different topics never interact inside a batch except by sharing a request), so a Kafka
batch that mixes foo and bar is one batch per topic here. Rows are per (broker, partition)
as the requests are sent; UpdateMetadata rows are per partition with `to_brokers=None` for
"every live or shutting-down broker".
"""

from __future__ import annotations

from statemachine.context import ControllerContext
from statemachine.model import Part
from statemachine.requests import RequestBatch
from tests.helpers.core import add_part, lai, make_ctx, sr, um

ASSIGN = {("foo", 0): (1, 2, 3), ("foo", 1): (2, 3, 1), ("bar", 0): (3, 1, 2),
          ("bar", 1): (1, 2, 3)}
# The leaderships of testLeaderAndIsrRequestSent: foo-0 (1, [1,2]), foo-1 (2, [2,3]),
# bar-1 (3, [1,3]), epoch 0.
LEADERS = {("foo", 0): (1, (1, 2)), ("foo", 1): (2, (2, 3)), ("bar", 1): (3, (1, 3))}


def _ctx(live: tuple[int, ...] = (1, 2, 3), shutting_down: tuple[int, ...] = (),
         leaders: dict[tuple[str, int], tuple[int, tuple[int, ...]]] | None = None,
         ) -> ControllerContext:
    ctx = make_ctx(live=live, shutting_down=shutting_down, epoch=1, controller=1)
    for (t, p), replicas in ASSIGN.items():
        if leaders is not None and (t, p) in leaders:
            leader, isr = leaders[(t, p)]
            add_part(ctx, t, p, replicas, leader=leader, isr=isr)
        else:
            add_part(ctx, t, p, replicas)
    return ctx


def _part(ctx: ControllerContext, topic: str, p: int) -> Part:
    return ctx.topics[topic].parts[p]


def _lai_to(ctx: ControllerContext, brokers: tuple[int, ...], keys: list[tuple[str, int]],
            is_new: bool = False) -> None:
    for topic in ("foo", "bar"):
        batch = RequestBatch(ctx, ctx.topics[topic])
        for t, p in keys:
            if t == topic:
                batch.add_leader_and_isr(brokers, _part(ctx, t, p), is_new=is_new)
        batch.send()


def test_leader_and_isr_request_sent() -> None:
    """`testLeaderAndIsrRequestSent`."""
    ctx = _ctx(leaders=LEADERS)
    _lai_to(ctx, (2,), list(LEADERS))
    rows = sorted(lai(ctx.out), key=lambda r: (r.topic, r.partition))
    assert rows == [
        (2, "bar", 1, 3, (1, 3), 0, 0, 1, (1, 2, 3), False),
        (2, "foo", 0, 1, (1, 2), 0, 0, 1, (1, 2, 3), False),
        (2, "foo", 1, 2, (2, 3), 0, 0, 1, (2, 3, 1), False),
    ]
    assert {r.controller_epoch for r in ctx.out.leader_and_isr} == {1}
    # The implied UM for each partition goes to every live-or-shutting-down broker, so
    # brokers 1 and 3 also get one.
    assert sorted((u.topic, u.partition, u.leader, u.to_brokers) for u in um(ctx.out)) == [
        ("bar", 1, 3, None), ("foo", 0, 1, None), ("foo", 1, 2, None)]


def test_leader_and_isr_is_new_is_sticky() -> None:
    """`testLeaderAndIsrRequestIsNew`."""
    ctx = _ctx(leaders=LEADERS)
    batch = RequestBatch(ctx, ctx.topics["foo"])
    batch.add_leader_and_isr((2,), _part(ctx, "foo", 0), is_new=True)
    batch.add_leader_and_isr((2,), _part(ctx, "foo", 0), is_new=False)
    batch.send()
    assert lai(ctx.out) == [(2, "foo", 0, 1, (1, 2), 0, 0, 1, (1, 2, 3), True)]
    assert len(um(ctx.out)) == 1


def test_leader_and_isr_sent_to_live_or_shutting_down_brokers() -> None:
    """`testLeaderAndIsrRequestSentToLiveOrShuttingDownBrokers`."""
    ctx = _ctx(live=(1,), shutting_down=(2,), leaders=LEADERS)
    _lai_to(ctx, (1, 2, 3), [("foo", 0)])
    assert [(r.broker_id, r.topic, r.partition) for r in lai(ctx.out)] == [
        (1, "foo", 0), (2, "foo", 0)]
    # Shutting-down 2 and dead 3 are offline replicas in the UM.
    assert um(ctx.out) == [("foo", 0, 1, (1, 2), 0, 0, 1, (1, 2, 3), (2, 3), None)]


def test_update_metadata_request_sent() -> None:
    """`testUpdateMetadataRequestSent`."""
    ctx = _ctx(leaders=LEADERS)
    for topic in ("foo", "bar"):
        batch = RequestBatch(ctx, ctx.topics[topic])
        for t, p in LEADERS:
            if t == topic:
                batch.add_update_metadata(_part(ctx, t, p), to=(2,))
        batch.send()
    assert sorted(um(ctx.out)) == [
        ("bar", 1, 3, (1, 3), 0, 0, 1, (1, 2, 3), (), (2,)),
        ("foo", 0, 1, (1, 2), 0, 0, 1, (1, 2, 3), (), (2,)),
        ("foo", 1, 2, (2, 3), 0, 0, 1, (2, 3, 1), (), (2,)),
    ]
    assert {r.controller_epoch for r in ctx.out.update_metadata} == {1}
    assert lai(ctx.out) == [] and sr(ctx.out) == []


def test_update_metadata_skips_partitions_without_leadership() -> None:
    """`testUpdateMetadataDoesNotIncludePartitionsWithoutLeaderAndIsr`."""
    ctx = _ctx()
    for topic in ("foo", "bar"):
        batch = RequestBatch(ctx, ctx.topics[topic])
        for t, p in LEADERS:
            if t == topic:
                batch.add_update_metadata(_part(ctx, t, p), to=(2,))
        batch.send()
    assert um(ctx.out) == []  # 0 partition states


def test_update_metadata_during_topic_deletion() -> None:
    """`testUpdateMetadataRequestDuringTopicDeletion`."""
    ctx = _ctx(leaders=LEADERS)
    ctx.topics["foo"].queued_for_deletion = True
    for topic in ("foo", "bar"):
        batch = RequestBatch(ctx, ctx.topics[topic])
        for t, p in LEADERS:
            if t == topic:
                batch.add_update_metadata(_part(ctx, t, p), to=(2,))
        batch.send()
    rows = {(u.topic, u.partition): u for u in um(ctx.out)}
    assert len(rows) == 3
    # foo: LeaderDuringDelete (-2), leader epoch 0, zkVersion 0; ISR unchanged.
    assert rows[("foo", 0)][2:6] == (-2, (1, 2), 0, 0)
    assert rows[("foo", 1)][2:6] == (-2, (2, 3), 0, 0)
    # bar-1 unchanged.
    assert rows[("bar", 1)][2:6] == (3, (1, 3), 0, 0)


def test_update_metadata_includes_live_or_shutting_down_brokers() -> None:
    """`testUpdateMetadataIncludesLiveOrShuttingDownBrokers`.

    UM([1,2,3]) with 2 shutting down and 3 dead reaches {1, 2} only. (Kafka's test sends
    no partition; a row needs one, so foo-0 is added.)"""
    ctx = _ctx(live=(1,), shutting_down=(2,), leaders=LEADERS)
    batch = RequestBatch(ctx, ctx.topics["foo"])
    batch.add_update_metadata(_part(ctx, "foo", 0), to=(1, 2, 3))
    batch.send()
    assert [u.to_brokers for u in um(ctx.out)] == [(1, 2)]


def test_stop_replica_request_sent() -> None:
    """`testStopReplicaRequestSent`."""
    leaders = {("foo", 0): (1, ()), ("foo", 1): (2, ()), ("bar", 1): (3, ())}
    ctx = _ctx(leaders=leaders)
    for topic in ("foo", "bar"):
        batch = RequestBatch(ctx, ctx.topics[topic])
        for t, p in leaders:
            if t == topic:
                batch.add_stop_replica((2,), _part(ctx, t, p), delete=False)
        batch.send()
    assert sorted(sr(ctx.out)) == [
        (2, "bar", 1, False, 0), (2, "foo", 0, False, 0), (2, "foo", 1, False, 0)]
    assert lai(ctx.out) == [] and um(ctx.out) == []


def test_stop_replica_delete_partition_is_sticky() -> None:
    """`testStopReplicaRequestWithAlreadyDefinedDeletedPartition`."""
    ctx = _ctx(leaders=LEADERS)
    batch = RequestBatch(ctx, ctx.topics["foo"])
    batch.add_stop_replica((2,), _part(ctx, "foo", 0), delete=True)
    batch.add_stop_replica((2,), _part(ctx, "foo", 0), delete=False)
    batch.send()
    assert sr(ctx.out) == [(2, "foo", 0, True, 0)]


def _sr_all(ctx: ControllerContext, brokers: tuple[int, ...],
            delete: dict[tuple[str, int], bool]) -> None:
    for topic in ("foo", "bar"):
        batch = RequestBatch(ctx, ctx.topics[topic])
        for (t, p), d in delete.items():
            if t == topic:
                batch.add_stop_replica(brokers, _part(ctx, t, p), delete=d)
        batch.send()


def test_stop_replica_while_topic_queued_for_deletion() -> None:
    """`testStopReplicaRequestsWhileTopicQueuedForDeletion`."""
    ctx = _ctx(leaders=LEADERS)
    ctx.topics["foo"].queued_for_deletion = True
    _sr_all(ctx, (2,), {k: True for k in LEADERS})
    assert sorted(sr(ctx.out)) == [
        (2, "bar", 1, True, 0), (2, "foo", 0, True, -2), (2, "foo", 1, True, -2)]


def test_stop_replica_while_topic_deletion_started() -> None:
    """`testStopReplicaRequestsWhileTopicDeletionStarted` and
    `testStopReplicaRequestWithoutDeletePartitionWhileTopicDeletionStarted`.

    The request is the same as while the topic is only queued, once deletion has started,
    and with delete=false. The response events are the flow's business (StopReplicaResponse
    applies only to started deletions: test_conformance_deletion)."""
    ctx = _ctx(leaders=LEADERS)
    ctx.topics["foo"].queued_for_deletion = ctx.topics["foo"].deletion_started = True
    _sr_all(ctx, (2,), {k: True for k in LEADERS})
    assert sorted(sr(ctx.out)) == [
        (2, "bar", 1, True, 0), (2, "foo", 0, True, -2), (2, "foo", 1, True, -2)]
    ctx2 = _ctx(leaders=LEADERS)
    ctx2.topics["foo"].queued_for_deletion = ctx2.topics["foo"].deletion_started = True
    _sr_all(ctx2, (2,), {k: False for k in LEADERS})
    assert sorted(sr(ctx2.out)) == [
        (2, "bar", 1, False, 0), (2, "foo", 0, False, -2), (2, "foo", 1, False, -2)]


def test_mixed_delete_and_not_delete_stop_replica() -> None:
    """`testMixedDeleteAndNotDeleteStopReplicaRequests`.

    IBP >= 2.6: one request holding per-partition flags (one row per partition)."""
    ctx = _ctx(leaders=LEADERS)
    _sr_all(ctx, (2,), {("foo", 0): True, ("foo", 1): True, ("bar", 0): False,
                        ("bar", 1): False})
    assert sorted(sr(ctx.out)) == [
        (2, "bar", 0, False, -1), (2, "bar", 1, False, 0),
        (2, "foo", 0, True, 0), (2, "foo", 1, True, 0)]


def test_stop_replica_groups_by_broker() -> None:
    """`testStopReplicaGroupsByBroker`."""
    ctx = _ctx(leaders=LEADERS)
    _sr_all(ctx, (2, 3), {k: False for k in LEADERS})
    rows = sr(ctx.out)
    assert {r.broker_id for r in rows} == {2, 3}
    for b in (2, 3):
        assert sorted((r.topic, r.partition) for r in rows if r.broker_id == b) == [
            ("bar", 1), ("foo", 0), ("foo", 1)]


def test_stop_replica_only_to_live_and_shutting_down_brokers() -> None:
    """`testStopReplicaSentOnlyToLiveAndShuttingDownBrokers`."""
    ctx = _ctx(live=(1,), shutting_down=(2,), leaders=LEADERS)
    _sr_all(ctx, (2, 3), {k: False for k in LEADERS})
    rows = sr(ctx.out)
    assert {r.broker_id for r in rows} == {2}
    assert len(rows) == 3


def test_negative_broker_ids_are_dropped() -> None:
    """`addLeaderAndIsrRequestForBrokers` and `addStopReplicaRequestForBrokers` drop broker
    ids below 0."""
    ctx = _ctx(leaders=LEADERS)
    batch = RequestBatch(ctx, ctx.topics["foo"])
    batch.add_leader_and_isr((-1, 2), _part(ctx, "foo", 0), is_new=False)
    batch.add_stop_replica((-1,), _part(ctx, "foo", 1), delete=False)
    batch.send()
    assert [r.broker_id for r in lai(ctx.out)] == [2]
    assert sr(ctx.out) == []


def test_later_add_overwrites_earlier_state() -> None:
    """`addLeaderAndIsrRequestForBrokers`: a later add for the same (broker, partition)
    overwrites the entry; the UM carries the last state too."""
    ctx = _ctx(leaders=LEADERS)
    part = _part(ctx, "foo", 0)
    batch = RequestBatch(ctx, ctx.topics["foo"])
    batch.add_leader_and_isr((2,), part, is_new=False)
    part.leader, part.leader_epoch, part.zk_version = 2, 1, 1
    batch.add_leader_and_isr((2,), part, is_new=False)
    batch.send()
    assert [r[3:7] for r in lai(ctx.out)] == [(2, (1, 2), 1, 1)]
    assert [u[2:6] for u in um(ctx.out)] == [(2, (1, 2), 1, 1)]
