"""Kafka 3.7.1 `TopicDeletionManagerTest` against `statemachine.deletion`, with the real
machines (Kafka's mocks only differ by throwing on invalid transitions, which none of its
tests triggers), plus the same flows driven through the event log.

Fixture as in Kafka: brokers 1, 2, 3 live; topics of 2 partitions, RF 3 round-robin, every
replica Online and every partition Online (the real machines give them leadership: leader
= first replica, ISR = all three).
"""

from __future__ import annotations

from statemachine import deletion
from statemachine.context import ControllerContext
from statemachine.model import Topic
from statemachine.replica_machine import Replica, handle_replica_changes
from tests.helpers.core import (
    Log,
    P,
    R,
    add_part,
    final,
    kinds,
    lai,
    make_ctx,
    replay_log,
    replica_states_of,
    sr,
    um,
)


def _ctx(*topics: str) -> ControllerContext:
    ctx = make_ctx(live=[1, 2, 3], epoch=1, controller=1)
    k = 0
    brokers = (1, 2, 3)
    for t in topics:
        for p in range(2):
            replicas = tuple(brokers[(i + k) % 3] for i in range(3))
            add_part(ctx, t, p, replicas, leader=replicas[0], isr=replicas,
                     partition_state=P.OnlinePartition,
                     replica_states={b: R.OnlineReplica for b in replicas})
            k += 1
    return ctx


def _replicas(topic: Topic, brokers: tuple[int, ...] = (1, 2, 3)) -> list[Replica]:
    return [(p, b) for p in topic.sorted_parts() for b in p.replicas if b in brokers]


def _states(topic: Topic, brokers: tuple[int, ...] = (1, 2, 3)) -> set[R]:
    return {R(p.replica_states[b]) for p, b in _replicas(topic, brokers)}


def _flags(topic: Topic) -> tuple[bool, bool, bool]:
    return (topic.queued_for_deletion, topic.deletion_started, topic.ineligible_for_deletion)


def test_round_robin_fixture() -> None:
    ctx = _ctx("foo", "bar")
    assert [p.replicas for t in ("foo", "bar") for p in ctx.topics[t].sorted_parts()] == [
        (1, 2, 3), (2, 3, 1), (3, 1, 2), (1, 2, 3)]


def test_initialization_intersects_ineligible_with_queued() -> None:
    """`testInitialization`.

    init(toBeDeleted={foo, bar}, ineligible={bar, baz}) keeps only {bar} ineligible:
    marking a topic ineligible is a no-op unless it is queued."""
    ctx = _ctx("foo", "bar", "baz")
    foo, bar, baz = (ctx.topics[t] for t in ("foo", "bar", "baz"))
    foo.queued_for_deletion = bar.queued_for_deletion = True
    deletion.mark_ineligible(bar)
    deletion.mark_ineligible(baz)
    assert [t.name for t in (foo, bar, baz) if t.queued_for_deletion] == ["foo", "bar"]
    assert [t.name for t in (foo, bar, baz) if t.ineligible_for_deletion] == ["bar"]


def test_basic_deletion() -> None:
    """`testBasicDeletion`."""
    ctx = _ctx("foo", "bar")
    foo, bar = ctx.topics["foo"], ctx.topics["bar"]
    deletion.enqueue(ctx, foo)
    deletion.enqueue(ctx, bar)
    for t in (foo, bar):
        assert {p.partition_state for p in t.parts.values()} == {P.NonExistentPartition}
        assert _states(t) == {R.ReplicaDeletionStarted}
        assert _flags(t) == (True, True, False)
    # One UM for every partition of both topics, advertised with LeaderDuringDelete.
    assert sorted((u.topic, u.partition, u.leader) for u in um(ctx.out) if u.leader == -2) == [
        ("bar", 0, -2), ("bar", 1, -2), ("foo", 0, -2), ("foo", 1, -2)]
    # No LeaderAndIsr for a queued topic (OfflineReplica skips it): the ISR shrinks in ZK
    # silently.
    assert lai(ctx.out) == []
    # Each replica: SR(delete=false, epoch -2), then SR(delete=true, epoch -2).
    assert sorted(sr(ctx.out)) == sorted(
        [(b, t, p, d, -2) for t in ("foo", "bar") for p in (0, 1) for b in (1, 2, 3)
         for d in (False, True)])
    # The replica transitions, per replica: Online->Offline->Started.
    steps = [(r.topic, r.partition, r.broker_id, r.to_state) for r in ctx.out.state_changes
             if r.machine == "replica"]
    assert sorted(steps) == sorted(
        [(t, p, b, s) for t in ("foo", "bar") for p in (0, 1) for b in (1, 2, 3)
         for s in ("OfflineReplica", "ReplicaDeletionStarted")])
    part_steps = [(r.topic, r.partition, r.to_state) for r in ctx.out.state_changes
                  if r.machine == "partition"]
    assert sorted(part_steps) == sorted(
        [(t, p, s) for t in ("foo", "bar") for p in (0, 1)
         for s in ("OfflinePartition", "NonExistentPartition")])

    deletion.complete_replica_deletion(ctx, foo, _replicas(foo))
    deletion.complete_replica_deletion(ctx, bar, _replicas(bar))
    for t in (foo, bar):
        assert all(p.replicas == () for p in t.parts.values())  # partitionsForTopic empty
        assert all(p.replica_states == {} for p in t.parts.values())
        assert not any(p.has_leadership for p in t.parts.values())
        assert _flags(t) == (False, False, False)
        assert not t.exists
    assert kinds(ctx.out).count("topic_deleted") == 2


def test_deletion_with_broker_offline() -> None:
    """`testDeletionWithBrokerOffline`."""
    ctx = _ctx("foo", "bar")
    foo = ctx.topics["foo"]
    ctx.set_liveness(frozenset({1, 3}), frozenset())
    handle_replica_changes(ctx, foo, _replicas(foo, (2,)), R.OfflineReplica)

    deletion.enqueue(ctx, foo)
    assert {p.partition_state for p in foo.parts.values()} == {P.NonExistentPartition}
    assert _states(foo, (1, 3)) == {R.ReplicaDeletionStarted}
    assert _states(foo, (2,)) == {R.ReplicaDeletionIneligible}
    assert _flags(foo) == (True, True, True)

    deletion.complete_replica_deletion(ctx, foo, _replicas(foo, (1, 3)))
    assert {p.partition_state for p in foo.parts.values()} == {P.NonExistentPartition}
    assert _flags(foo) == (True, True, True)
    assert _states(foo, (1, 3)) == {R.ReplicaDeletionSuccessful}
    # The retry moved them Ineligible -> Offline even though the topic is ineligible.
    assert _states(foo, (2,)) == {R.OfflineReplica}

    ctx.set_liveness(frozenset({1, 2, 3}), frozenset())
    deletion.resume_for_topic(ctx, foo)
    assert _states(foo, (1, 3)) == {R.ReplicaDeletionSuccessful}
    assert _states(foo, (2,)) == {R.ReplicaDeletionStarted}

    deletion.complete_replica_deletion(ctx, foo, _replicas(foo, (2,)))
    assert all(p.replicas == () and p.replica_states == {} for p in foo.parts.values())
    assert _flags(foo) == (False, False, False)
    # bar was never touched.
    assert _states(ctx.topics["bar"]) == {R.OnlineReplica}


def test_broker_failure_after_deletion_started() -> None:
    """`testBrokerFailureAfterDeletionStarted`."""
    ctx = _ctx("foo", "bar")
    foo = ctx.topics["foo"]
    deletion.enqueue(ctx, foo)
    assert {p.partition_state for p in foo.parts.values()} == {P.NonExistentPartition}
    assert _states(foo) == {R.ReplicaDeletionStarted}

    ctx.set_liveness(frozenset({1, 3}), frozenset())
    deletion.fail_replica_deletion(ctx, foo, _replicas(foo, (2,)))
    assert _flags(foo) == (True, True, True)
    assert _states(foo, (2,)) == {R.ReplicaDeletionIneligible}
    assert _states(foo, (1, 3)) == {R.ReplicaDeletionStarted}

    ctx.set_liveness(frozenset({1, 2, 3}), frozenset())
    deletion.resume_for_topic(ctx, foo)
    assert _flags(foo) == (True, True, False)
    assert _states(foo, (1, 3)) == {R.ReplicaDeletionStarted}
    # Deletion is "in progress" (some replica Started): neither retry nor restart.
    assert _states(foo, (2,)) == {R.ReplicaDeletionIneligible}

    deletion.complete_replica_deletion(ctx, foo, _replicas(foo, (1, 3)))
    assert _flags(foo) == (True, True, False)
    assert _states(foo, (1, 3)) == {R.ReplicaDeletionSuccessful}
    assert _states(foo, (2,)) == {R.ReplicaDeletionStarted}


# -- the same flows through the event log ------------------------------------------------


def _deletion_log() -> Log:
    log = Log()
    log.failover(1, [1, 2, 3])
    log.create("foo", 0, [1, 2, 3])
    log.create("foo", 1, [2, 3, 1])
    return log


def test_log_deletion_completes_only_when_every_replica_is_deleted() -> None:
    log = _deletion_log()
    log.delete("foo")
    for p in (0, 1):
        for b in (1, 2, 3):
            log.stop_replica_response("foo", p, b)
    log.deleted("foo")
    _, out = replay_log(log)
    for p in (0, 1):
        row = final(out, "foo", p)
        assert row == ("NonExistentPartition", None, None, None, None, None)
        assert replica_states_of(out, "foo", p) == {}
    assert kinds(out).count("topic_deleted") == 1
    assert "deletion_completion_mismatch" not in kinds(out)


def test_log_failed_stop_replica_makes_topic_ineligible() -> None:
    log = _deletion_log()
    log.delete("foo")
    for b in (1, 2, 3):
        log.stop_replica_response("foo", 0, b)
    log.stop_replica_response("foo", 1, 1)
    log.stop_replica_response("foo", 1, 2, error="KAFKA_STORAGE_ERROR")
    log.stop_replica_response("foo", 1, 3)
    seq = log.deleted("foo")
    _, out = replay_log(log)
    # Broker 2 failed (Ineligible, topic ineligible); broker 3's later success runs
    # resumeDeletions with nothing Started, so the retry moves 2 Ineligible -> Offline
    # even though the topic stays ineligible (as in testDeletionWithBrokerOffline).
    assert replica_states_of(out, "foo", 1) == {1: "ReplicaDeletionSuccessful",
                                     2: "OfflineReplica",
                                     3: "ReplicaDeletionSuccessful"}
    assert replica_states_of(out, "foo", 0) == {b: "ReplicaDeletionSuccessful" for b in (1, 2, 3)}
    assert "topic_deleted" not in kinds(out)
    # The log's own completion line contradicts the replay: a finding, never applied.
    mismatch = [f for f in out.findings if f.kind == "deletion_completion_mismatch"]
    assert [f.seq for f in mismatch] == [seq]
    assert [r.queued_for_deletion for r in out.partition_states] == [True, True]


def test_log_stop_replica_response_before_deletion_is_ignored() -> None:
    log = _deletion_log()
    log.stop_replica_response("foo", 0, 1)
    _, out = replay_log(log)
    assert "stop_replica_response_ignored" in kinds(out)
    assert replica_states_of(out, "foo", 0) == {b: "OnlineReplica" for b in (1, 2, 3)}


def test_log_deletion_with_dead_broker_resumes_on_startup() -> None:
    """`testDeletionWithBrokerOffline` through the log: broker 2 is dead when deletion
    starts; its replicas are
    ineligible until it comes back, then deletion restarts for them."""
    log = _deletion_log()
    log.failure(2)
    log.delete("foo")
    for p in (0, 1):
        for b in (1, 3):
            log.stop_replica_response("foo", p, b)
    mid = log.seq
    log.startup(2)
    for p in (0, 1):
        log.stop_replica_response("foo", p, 2)
    _, out_mid = replay_log([e for e in log.events if e.seq <= mid])
    for p in (0, 1):
        assert replica_states_of(out_mid, "foo", p) == {1: "ReplicaDeletionSuccessful",
                                             2: "OfflineReplica",
                                             3: "ReplicaDeletionSuccessful"}
    _, out = replay_log(log)
    for p in (0, 1):
        assert replica_states_of(out, "foo", p) == {}
        assert final(out, "foo", p).state == "NonExistentPartition"
    assert kinds(out).count("topic_deleted") == 1
