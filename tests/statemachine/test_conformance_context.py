"""Kafka 3.7.1 `ControllerContextTest` (its assignment tests) against the assignment
model: `reassignment.Assignment` (`ReplicaAssignment`) and the `Part` view of it.
"""

from __future__ import annotations

from statemachine.reassignment import Assignment
from tests.helpers.core import add_part, make_ctx


def test_update_partition_full_replica_assignment() -> None:
    """`testUpdatePartitionFullReplicaAssignmentUpdatesReplicaAssignment`."""
    ctx = make_ctx(live=[1, 2, 3])
    part = add_part(ctx, "A", 0, [1, 2, 3])
    ctx.set_assignment(ctx.topics["A"], part, (4,))
    assert (part.replicas, part.adding, part.removing) == ((4,), (), ())
    # Stored verbatim, with no validation.
    ctx.set_assignment(ctx.topics["A"], part, (3,), (1,), (2,))
    assert (part.replicas, part.adding, part.removing) == ((3,), (1,), (2,))


def test_partition_replica_assignment() -> None:
    """`testPartitionReplicaAssignment`."""
    a = Assignment((1, 2, 3, 4, 5, 6), (2, 3, 4), (1, 5, 6))
    assert a.being_reassigned and a.target == (2, 3, 4)
    a = Assignment((1, 2, 3, 4), (), (1, 4))
    assert a.being_reassigned and a.target == (2, 3)
    a = Assignment((1, 2, 3, 4), (4,), (2,))
    assert a.being_reassigned and a.target == (1, 3, 4)
    a = Assignment((1, 2, 3, 4, 5, 6))
    assert not a.being_reassigned and a.target == (1, 2, 3, 4, 5, 6)

    b = Assignment((1, 2, 3, 4)).reassign_to((4, 2, 5, 3))
    assert b == Assignment((4, 2, 5, 3, 1), (5,), (1,))
    assert b.target == (4, 2, 5, 3) and b.being_reassigned
    assert Assignment((1, 2, 3)).reassign_to((4, 5, 6)) == Assignment(
        (4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    c = Assignment((1, 2, 3)).reassign_to((3, 1, 2))
    assert c == Assignment((3, 1, 2), (), ()) and not c.being_reassigned


def test_part_view_agrees_with_assignment() -> None:
    ctx = make_ctx(live=[1])
    part = add_part(ctx, "A", 0, [1, 2, 3, 4], adding=[4], removing=[2])
    assert part.being_reassigned
    assert part.target_replicas == (1, 3, 4)
    assert part.origin_replicas == (1, 2, 3)


def test_reassign_to_idempotence() -> None:
    """`testReassignToIdempotence`."""
    for a in (
        Assignment((1, 2, 3)),
        Assignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3)),
        Assignment((4, 2, 3, 1), (4,), (1,)),
    ):
        assert a.reassign_to(a.target) == a


def test_reassign_to() -> None:
    """`testReassignTo`."""
    original = Assignment((1, 2, 3))
    first = original.reassign_to((4, 5, 6))
    assert first == Assignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    second = first.reassign_to((7, 8, 9))
    assert second == Assignment((7, 8, 9, 1, 2, 3), (7, 8, 9), (1, 2, 3))
    assert second == original.reassign_to((7, 8, 9))
    assert first.reassign_to((1, 2, 3)) == Assignment((1, 2, 3))  # a cancel
