"""Every (current, target) pair of both machines, generated from the valid-previous tables:
a valid transition reaches the target, an invalid one keeps the state and yields a finding.

The setup makes every valid transition succeed on its own merits: two live brokers, the
replica under test (5) is a follower, and the partition has a live ISR to elect from."""

from __future__ import annotations

import itertools

import pytest

from statemachine.cluster import ClusterState, build_timeline
from statemachine.context import ControllerContext, ReplayConfig
from statemachine.model import Part, Topic
from statemachine.partition_machine import handle_partition_changes, offline_strategy
from statemachine.replica_machine import handle_replica_changes
from statemachine.states import (
    PARTITION_VALID_PREVIOUS,
    REPLICA_VALID_PREVIOUS,
    PartitionState,
    ReplicaState,
    is_valid_transition,
    matrix_markdown,
)
from tests.helpers import ROOT

REPLICA_PAIRS = list(itertools.product(ReplicaState, ReplicaState))
PARTITION_PAIRS = list(itertools.product(PartitionState, PartitionState))


def _setup() -> tuple[ControllerContext, Topic, Part]:
    ctx = ControllerContext(ReplayConfig(), build_timeline([]), {})
    ctx.set_cluster(ClusterState(frozenset({5, 6}), frozenset(), 50, 5))
    ctx.begin(1, None, "test")
    topic = ctx.topic("t")
    part = topic.parts[0] = Part(0)
    ctx.set_assignment(topic, part, (5, 6))
    part.has_leadership, part.leader, part.isr = True, 6, (5, 6)
    return ctx, topic, part


@pytest.mark.parametrize(("current", "target"), REPLICA_PAIRS,
                         ids=[f"{c.name}-{t.name}" for c, t in REPLICA_PAIRS])
def test_replica_transition(current: ReplicaState, target: ReplicaState) -> None:
    ctx, topic, part = _setup()
    part.replica_states[5] = current
    handle_replica_changes(ctx, topic, [(part, 5)], target)

    valid = is_valid_transition(REPLICA_VALID_PREVIOUS, current, target)
    if valid and target == ReplicaState.NonExistentReplica:
        assert 5 not in part.replica_states and 5 not in part.replicas
    else:
        assert part.replica_states[5] == (target if valid else current)
    change = ctx.out.state_changes[0]
    assert (change.from_state, change.to_state, change.outcome) == (
        current.name, target.name, "applied" if valid else "rejected")
    kinds = [f.kind for f in ctx.out.findings]
    assert kinds == ([] if valid else ["invalid_transition"])
    if not valid:
        assert not (ctx.out.leader_and_isr or ctx.out.update_metadata or ctx.out.stop_replica)


@pytest.mark.parametrize(("current", "target"), PARTITION_PAIRS,
                         ids=[f"{c.name}-{t.name}" for c, t in PARTITION_PAIRS])
def test_partition_transition(current: PartitionState, target: PartitionState) -> None:
    ctx, topic, part = _setup()
    part.partition_state = current
    if current == PartitionState.NewPartition:
        part.has_leadership = False  # a new partition has never been elected
    handle_partition_changes(ctx, topic, [part], target, offline_strategy(False))

    valid = is_valid_transition(PARTITION_VALID_PREVIOUS, current, target)
    assert part.partition_state == (target if valid else current)
    assert [f.kind for f in ctx.out.findings] == ([] if valid else ["invalid_transition"])
    if not valid:
        assert not (ctx.out.leader_and_isr or ctx.out.update_metadata)


def test_tables_cover_every_state() -> None:
    assert set(REPLICA_VALID_PREVIOUS) == set(ReplicaState)
    assert set(PARTITION_VALID_PREVIOUS) == set(PartitionState)
    # Kafka's byte codes.
    assert [s.value for s in ReplicaState] == [1, 2, 3, 4, 5, 6, 7]
    assert [s.value for s in PartitionState] == [0, 1, 2, 3]


def test_the_docs_matrices_are_generated_from_the_tables() -> None:
    doc = (ROOT / "docs" / "core.md").read_text()
    assert matrix_markdown(REPLICA_VALID_PREVIOUS) in doc
    assert matrix_markdown(PARTITION_VALID_PREVIOUS) in doc
