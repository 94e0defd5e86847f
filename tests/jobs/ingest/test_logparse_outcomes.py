"""The outcome of a transition Kafka logged: `applied`, `rejected` (the transition matrix
refused it: `logInvalidTransition`'s IllegalStateException) or `failed` (attempted, failed:
a StateChangeFailedException), the convention of the replay's `state_changes`."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.ingest.logparse import pipeline
from jobs.ingest.logparse.outcomes import failure_outcome
from tests.helpers import INGEST_FIXTURES

# 2.6.0 `PartitionStateMachine.logFailedStateChange` / `logInvalidTransition`, and
# 0.8.2's `ReplicaStateMachine` (`Initiated state change ... failed`), as they print.
FAILED_ELECTION = (
    "[2021-03-01 10:02:00,002] ERROR [Controller id=1 epoch=9] Controller 1 epoch 9 failed to "
    "change state for partition t-1 from OfflinePartition to OnlinePartition "
    "(state.change.logger)\n"
    "kafka.common.StateChangeFailedException: Failed to elect leader for partition t-1 under "
    "strategy OfflinePartitionLeaderElectionStrategy(false)\n")
INVALID_PARTITION = (
    "[2021-03-01 10:02:00,002] ERROR [Controller id=1 epoch=9] Controller 1 epoch 9 failed to "
    "change state for partition t-1 from NewPartition to NonExistentPartition "
    "(state.change.logger)\n"
    "java.lang.IllegalStateException: Partition t-1 should be in one of OfflinePartition "
    "states before moving to NonExistentPartition state. Instead it is in NewPartition state\n")
INVALID_REPLICA_082 = (
    "[2015-01-01 00:00:00,000] ERROR Controller 1 epoch 1 initiated state change of replica 2 "
    "for partition [t,0] from OnlineReplica to ReplicaDeletionStarted failed "
    "(state.change.logger)\n"
    "java.lang.IllegalStateException: Replica [Topic=t,Partition=0,Replica=2] should be in the "
    "OfflineReplica states before moving to ReplicaDeletionStarted state. Instead it is in "
    "OnlineReplica state\n")
# The headers alone, as an excerpt that stops before the exception quotes them.
BARE_FAILED = FAILED_ELECTION.splitlines()[0] + "\n"
BARE_INVALID = INVALID_PARTITION.splitlines()[0] + "\n"


@pytest.mark.parametrize(("text", "outcome"), [
    (FAILED_ELECTION, "failed"),
    (INVALID_PARTITION, "rejected"),
    (INVALID_REPLICA_082, "rejected"),
    (BARE_FAILED, "failed"),  # Offline -> Online: the matrix allows it
    (BARE_INVALID, "rejected"),  # New -> NonExistent: the matrix refuses it
])
def test_a_failed_transition_line_reads_rejected_or_failed(
        tmp_path: Path, text: str, outcome: str) -> None:
    (tmp_path / "state-change.log").write_text(text)
    r = pipeline.ingest([str(tmp_path)])
    assert r.unparsed == []
    (o,) = r.observations
    assert o.kind in ("partition_transition", "replica_transition")
    assert o.outcome == outcome
    if "\n" in text.rstrip("\n"):
        assert o.detail == text.splitlines()[1]


def test_failure_outcome() -> None:
    assert failure_outcome("partition_transition", "OnlinePartition", "OnlinePartition",
                           "kafka.common.StateChangeFailedException: Failed to elect") == "failed"
    # A ZooKeeper error on a transition the matrix allows is a failure, not a refusal.
    assert failure_outcome("partition_transition", "NewPartition", "OnlinePartition",
                           "org.apache.zookeeper.KeeperException$NodeExistsException: "
                           "KeeperErrorCode = NodeExists") == "failed"
    assert failure_outcome("replica_transition", "ReplicaDeletionSuccessful",
                           "ReplicaDeletionIneligible", None) == "rejected"
    assert failure_outcome("replica_transition", "NonExistentReplica", "OfflineReplica",
                           None) == "rejected"
    assert failure_outcome("replica_transition", "NewReplica", "OfflineReplica",
                           None) == "failed"
    # States the matrix does not know (a garbled excerpt) are no refusal.
    assert failure_outcome("partition_transition", "Weird", "OnlinePartition", None) == "failed"


def test_applied_transitions_and_other_kinds() -> None:
    r = pipeline.ingest([str(INGEST_FIXTURES / "outcomes-ak2.6")])
    outcomes = {(o.kind, o.outcome) for o in r.observations}
    assert outcomes == {("failover_brokers", None), ("live_brokers", None),
                        ("partition_transition", "applied"),
                        ("partition_transition", "failed"), ("isr_shrink", None)}
