"""`statemachine.kraft.election` (and `requests.reassignment`) against the cases of Kafka's
own 3.7.0 `metadata/src/test/java/org/apache/kafka/controller/PartitionChangeBuilderTest.java`
at PartitionChangeRecord version 0 (metadata version 3.7-IV0: no directories, no ELR):

* FOO (`:103-115`): replicas [2, 1, 3], ISR [2, 1, 3], leader 1; BAR (`:153-165`):
  replicas [1, 2, 3, 4], ISR [1, 2, 3], removing [1], adding [4], leader 1; BAZ
  (`:187-199`): replicas [2, 1, 3], ISR [1, 3], leader 3;
* FOO's and BAR's builders accept any leader but 3, BAZ's any (`:132-212`); min ISR 2."""

from __future__ import annotations

from statemachine.kraft.election import NO_LEADER, Change, Rules, Target, build, elect
from statemachine.kraft.image import KraftPart
from statemachine.kraft.records import Ints
from statemachine.kraft.requests import reassignment


def part(replicas: Ints, isr: Ints, leader: int, removing: Ints = (),
         adding: Ints = ()) -> KraftPart:
    p = KraftPart(0, "foo", "foo-id")
    p.replicas, p.isr, p.leader, p.removing, p.adding = replicas, isr, leader, removing, adding
    return p


def FOO() -> KraftPart:
    return part((2, 1, 3), (2, 1, 3), 1)


def BAR() -> KraftPart:
    return part((1, 2, 3, 4), (1, 2, 3), 1, removing=(1,), adding=(4,))


def rules(unclean: bool = False, acceptable: bool = True) -> Rules:
    return Rules((lambda r: r != 3) if acceptable else (lambda r: False), unclean, False, 2,
                 False)


def test_elect_leader() -> None:
    """`testElectLeader` (`:272-294`)."""
    foo = FOO()
    assert elect(foo, foo.isr, (), rules(), preferred=True) == (2, False)
    assert elect(foo, foo.isr, (), rules()) == (1, False)
    assert elect(foo, foo.isr, (), rules(unclean=True)) == (1, False)
    assert elect(foo, (1, 3), (), rules()) == (1, False)
    assert elect(foo, (3,), (), rules()) == (NO_LEADER, False)
    assert elect(foo, (3,), (), rules(unclean=True)) == (2, True)
    assert elect(foo, (4,), (), rules(unclean=True), replicas=(2, 1, 3, 4)) == (4, False)
    baz = part((2, 1, 3), (1, 3), 3)
    every = Rules(lambda r: True, False, False, 2, False)
    assert elect(baz, baz.isr, (), every, preferred=True) == (3, False)
    assert elect(baz, baz.isr, (), every._replace(unclean=True)) == (3, False)


def test_reassignment_rearranges_replicas() -> None:
    """`testReassignmentRearrangesReplicas` (`:442-453`): the replicas alone."""
    foo = FOO()
    assert build(foo, foo.isr, rules(), Target((3, 2, 1))) == Change(replicas=(3, 2, 1))


def test_isr_enlargement_completes_reassignment() -> None:
    """`testIsrEnlargementCompletesReassignment` (`:457-473`): the ISR [1, 2, 3, 4] less the
    removing 1 holds the adding 4: replicas and ISR [2, 3, 4], and the leader 1, removed,
    hands over to 2."""
    bar = BAR()
    assert build(bar, (1, 2, 3, 4), rules()) == Change(
        leader=2, isr=(2, 3, 4), replicas=(2, 3, 4), removing=(), adding=())


def test_revert_reassignment() -> None:
    """`testRevertReassignment` (`:477-499`): back to [1, 2, 3], the leader named (4 left
    the replicas: an epoch bump)."""
    bar = BAR()
    assert build(bar, (1, 2, 3), rules(), Target((1, 2, 3))) == Change(
        leader=1, replicas=(1, 2, 3), removing=(), adding=())


def test_removing_and_adding_replica_reassignments() -> None:
    """`testRemovingReplicaReassignment` (`:503-524`): FOO to [1, 2] removes 3, replicas
    [1, 2, 3], and completes at once: replicas [1, 2], ISR [2, 1], leader 1 named.
    `testAddingReplicaReassignment` (`:528-548`): FOO to [1, 2, 3, 4] adds 4."""
    foo = FOO()
    assert reassignment(foo, (1, 2)) == Target((1, 2, 3), (), (3,))
    assert build(foo, foo.isr, rules(), reassignment(foo, (1, 2))) == Change(
        leader=1, isr=(2, 1), replicas=(1, 2))
    assert reassignment(foo, (1, 2, 3, 4)) == Target((1, 2, 3, 4), (4,), ())
    assert build(foo, foo.isr, rules(), reassignment(foo, (1, 2, 3, 4))) == Change(
        replicas=(1, 2, 3, 4), adding=(4,))


def test_stopped_leader_is_demoted_after_reassignment_completes() -> None:
    """`testStoppedLeaderIsDemotedAfterReassignmentCompletesEvenIfNoNewEligibleLeaders`
    (`:734-796`): [0, 1] -> [2, 3] led by 0, no acceptable leader: the completion leaves
    the partition without one rather than led by a removed replica."""
    p = part((2, 3, 0, 1), (0, 1), 0, removing=(0, 1), adding=(2, 3))
    assert build(p, (0, 1, 2, 3), rules(acceptable=False)) == Change(
        leader=NO_LEADER, isr=(2, 3), replicas=(2, 3), removing=(), adding=())
