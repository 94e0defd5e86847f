"""Kafka's two state machines as data (Kafka 3.7.1).

Each machine is one enum with Kafka's names and byte codes and one table of valid previous
states, as at the bottom of `ReplicaStateMachine.scala` / `PartitionStateMachine.scala`
(the replica machine has a second table for the releases before 2.3, picked by the release
profile). These tables are the only encoding of the graph: the machines
(`replica_machine`, `partition_machine`) look a transition up in them, and
`is_valid_transition` is Kafka's `isValidTransition` over them, for the tests and the
generated matrix of docs/core.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from typing import Final, TypeVar


class ReplicaState(IntEnum):
    NewReplica = 1
    OnlineReplica = 2
    OfflineReplica = 3
    ReplicaDeletionStarted = 4
    ReplicaDeletionSuccessful = 5
    ReplicaDeletionIneligible = 6
    NonExistentReplica = 7


class PartitionState(IntEnum):
    NewPartition = 0
    OnlinePartition = 1
    OfflinePartition = 2
    NonExistentPartition = 3


# Names by code, for the hot loop (an enum's `.name` is a descriptor call).
REPLICA_NAMES: Final[dict[int, str]] = {int(s): s.name for s in ReplicaState}
PARTITION_NAMES: Final[dict[int, str]] = {int(s): s.name for s in PartitionState}

_R = ReplicaState
_P = PartitionState

# Version note: Kafka <= 2.2 allowed ReplicaDeletionIneligible only from
# ReplicaDeletionStarted (KAFKA-8237 added OfflineReplica in 2.3).
REPLICA_VALID_PREVIOUS: Final[dict[ReplicaState, frozenset[ReplicaState]]] = {
    _R.NewReplica: frozenset({_R.NonExistentReplica}),
    _R.OnlineReplica: frozenset(
        {_R.NewReplica, _R.OnlineReplica, _R.OfflineReplica, _R.ReplicaDeletionIneligible}
    ),
    _R.OfflineReplica: frozenset(
        {_R.NewReplica, _R.OnlineReplica, _R.OfflineReplica, _R.ReplicaDeletionIneligible}
    ),
    _R.ReplicaDeletionStarted: frozenset({_R.OfflineReplica}),
    _R.ReplicaDeletionSuccessful: frozenset({_R.ReplicaDeletionStarted}),
    _R.ReplicaDeletionIneligible: frozenset({_R.OfflineReplica, _R.ReplicaDeletionStarted}),
    _R.NonExistentReplica: frozenset({_R.ReplicaDeletionSuccessful}),
}

# Version note: the same table before 2.3 (KafkaProfile.ineligible_from_offline false).
REPLICA_VALID_PREVIOUS_BEFORE_2_3: Final[dict[ReplicaState, frozenset[ReplicaState]]] = {
    **REPLICA_VALID_PREVIOUS,
    _R.ReplicaDeletionIneligible: frozenset({_R.ReplicaDeletionStarted}),
}

PARTITION_VALID_PREVIOUS: Final[dict[PartitionState, frozenset[PartitionState]]] = {
    _P.NewPartition: frozenset({_P.NonExistentPartition}),
    _P.OnlinePartition: frozenset({_P.NewPartition, _P.OnlinePartition, _P.OfflinePartition}),
    _P.OfflinePartition: frozenset({_P.NewPartition, _P.OnlinePartition, _P.OfflinePartition}),
    _P.NonExistentPartition: frozenset({_P.OfflinePartition}),
}


S = TypeVar("S", ReplicaState, PartitionState)


def is_valid_transition(table: Mapping[S, frozenset[S]], current: int, target: S) -> bool:
    """Kafka's `isValidTransition`: is `current` a valid previous state of `target`?"""
    return current in table[target]


def matrix_markdown(table: Mapping[S, frozenset[S]]) -> str:
    """The valid-transition matrix as a Markdown table (rows = current, columns = target),
    so the copy in docs/core.md is generated from the table above, never written by hand."""
    states = sorted(table)
    header = "| current \\ target | " + " | ".join(s.name for s in states) + " |"
    rule = "|---" * (len(states) + 1) + "|"
    rows: list[str] = [
        f"| {cur.name} | " + " | ".join("✓" if cur in table[tgt] else "·" for tgt in states)
        + " |"
        for cur in states
    ]
    return "\n".join([header, rule, *rows])
