"""Reassignment before KIP-455 (profiles 2.0 to 2.3): the checks of the old
`KafkaController.maybeTriggerPartitionReassignment`, with the controller source at the tags
of apache/kafka cited (`git show TAG:core/src/main/scala/kafka/controller/KafkaController.scala`).
The steps of the old `onPartitionReassignment` are in `test_profiles.py`."""

from __future__ import annotations

import pytest

from statemachine.context import ReplayConfig
from statemachine.profiles import profile_for
from tests.helpers.core import Log, at, final, kinds, pstate_row, replay_log

A, B, C, D = 1, 2, 3, 4


def _cfg(version: str) -> ReplayConfig:
    return ReplayConfig(kafka_version=version, scala_binary=profile_for(version).scala_binary)


def _topic() -> Log:
    log = Log()
    log.failover(0, [0, A, B, C, D])
    log.create("t", 0, [A, B])  # leader A, ISR [A, B], epoch 0
    return log


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.3"])
def test_a_reassignment_to_the_current_replicas_is_ignored_before_2_4(version: str) -> None:
    """KafkaController.scala at 2.0.0, lines 582-585 (2.3.0, lines 602-605):
    `assignedReplicas == newReplicas` logs "Partition ... to be reassigned is already
    assigned to replicas ... Ignoring request for partition reassignment" and only removes
    the partition from the reassignment: no write, no request."""
    log = _topic()
    seq = log.reassign("t", 0, [A, B])
    _, out = replay_log(log, _cfg(version))
    assert final(out, "t", 0)[:5] == ("OnlinePartition", A, (A, B), 0, 0)
    assert not at(out.leader_and_isr, seq) and not at(out.partition_state_writes, seq)


def test_from_2_4_the_same_reassignment_bumps_the_leader_epoch() -> None:
    """KafkaController.scala at 2.4.0, lines 707-736: `maybeTriggerPartitionReassignment`
    no longer compares, `onPartitionReassignment` (line 615) completes at once and
    `updateLeaderEpochAndSendRequest` bumps the epoch."""
    log = _topic()
    seq = log.reassign("t", 0, [A, B])
    _, out = replay_log(log, _cfg("2.4"))
    assert final(out, "t", 0).leader_epoch == 1
    assert at(out.leader_and_isr, seq)


def test_before_2_4_the_comparison_is_of_sequences() -> None:
    """The Seq equality of 2.0.0 line 582: the same replicas in another order are a
    reassignment (the preferred replica changes), which writes a new leader epoch."""
    log = _topic()
    seq = log.reassign("t", 0, [B, A])
    _, out = replay_log(log, _cfg("2.0"))
    assert pstate_row(out, "t", 0).replicas == (B, A)
    assert final(out, "t", 0).leader_epoch == 1 and at(out.leader_and_isr, seq)


def _expansion_then_failover() -> Log:
    """A pure expansion [A, B] -> [A, B, C] waits for C to join the ISR; then a new
    controller."""
    log = _topic()
    log.reassign("t", 0, [A, B, C])
    log.failover(A, [0, A, B, C, D])
    return log


def test_a_failover_before_2_4_drops_a_pure_expansion() -> None:
    """KafkaController.scala at 2.3.0, line 272: the new controller runs
    `maybeTriggerPartitionReassignment` over the znode's reassignments; ZK's assignment
    (RAR ++ OAR, step 1 at line 543) is already RAR = [A, B, C], so the check of lines
    602-605 drops it: C stays in the assignment and the reassignment is forgotten."""
    _, out = replay_log(_expansion_then_failover(), _cfg("2.3"))
    row = pstate_row(out, "t", 0)
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((A, B, C), (), ())


def test_a_failover_from_2_4_resumes_it() -> None:
    """KafkaController.scala at 2.4.0, lines 837-845: `initializePartitionReassignments`
    resumes every reassignment through `maybeResumeReassignments` (lines 442-448)."""
    _, out = replay_log(_expansion_then_failover(), _cfg("2.4"))
    row = pstate_row(out, "t", 0)
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((A, B, C), (C,), ())


def test_a_failover_before_2_4_resumes_a_move() -> None:
    """The same check with replicas to remove: ZK's AR (RAR ++ OAR) is not RAR, so the
    reassignment goes on (2.3.0, lines 606-613)."""
    log = _topic()
    log.reassign("t", 0, [C])
    log.failover(A, [0, A, B, C, D])
    _, out = replay_log(log, _cfg("2.3"))
    row = pstate_row(out, "t", 0)
    assert (row.replicas, row.adding_replicas, row.removing_replicas) == ((C, A, B), (C,), (A, B))


def _move_then_delete() -> Log:
    log = _topic()
    log.reassign("t", 0, [C])  # waits for C
    log.delete("t")  # queued, ineligible while the reassignment runs
    return log


@pytest.mark.parametrize(("version", "adding"), [("2.3", ()), ("2.4", (C,)), ("3.7", (C,))])
def test_a_failover_and_a_topic_queued_for_deletion(version: str, adding: tuple[int, ...]
                                                    ) -> None:
    """KafkaController.scala at 2.3.0, lines 590-593: at the failover (line 272)
    `maybeTriggerPartitionReassignment` skips a topic queued for deletion ("Skipping
    reassignment of ... since the topic is currently being deleted") and removes the
    partition from the reassignment; 2.4.0's `maybeResumeReassignments` (lines 442-448)
    resumes it whatever the topic."""
    log = _move_then_delete()
    log.failover(A, [0, A, B, C, D])
    _, out = replay_log(log, _cfg(version))
    assert pstate_row(out, "t", 0).adding_replicas == adding


@pytest.mark.parametrize(("version", "adding"), [("2.0", ()), ("2.4", (C,))])
def test_a_request_for_a_topic_queued_for_deletion(version: str, adding: tuple[int, ...]
                                                   ) -> None:
    """The same skip at a new znode (2.0.0, lines 1401-1408 put the new target in
    `partitionsBeingReassigned`, lines 570-573 skip and remove it): the running
    reassignment is forgotten. From 2.4 (lines 711-713) the request is refused with
    UNKNOWN_TOPIC_OR_PARTITION and the running one is left alone."""
    log = _move_then_delete()
    log.reassign("t", 0, [D])
    _, out = replay_log(log, _cfg(version))
    assert "reassignment_rejected" in kinds(out)
    assert pstate_row(out, "t", 0).adding_replicas == adding
