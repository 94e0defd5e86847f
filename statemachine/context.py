"""Everything one replay carries around: settings, the cluster at the current event, the
mutable topic view, the output lists, and the per-(seq, partition) step and batch counters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from statemachine.cluster import ClusterState, ClusterTimeline
from statemachine.events import Event
from statemachine.model import Topic
from statemachine.rows import (
    FindingRow,
    LeaderAndIsrRow,
    PartitionStateRow,
    ReplicaStateRow,
    StateChangeRow,
    StopReplicaRow,
    UpdateMetadataRow,
)


@dataclass(frozen=True, slots=True)
class ReplayConfig:
    """Cluster settings the controller reads (Kafka defaults)."""

    # Broker default of unclean.leader.election.enable; a topic override wins.
    unclean_leader_election_enable: bool = False
    # delete.topic.enable: when false, deletion requests are ignored (§7.9).
    delete_topic_enable: bool = True


@dataclass(slots=True)
class Outputs:
    """Rows for every table the core feeds, plus the counts the run summary needs."""

    partition_states: list[PartitionStateRow] = field(default_factory=list)
    replica_states: list[ReplicaStateRow] = field(default_factory=list)
    state_changes: list[StateChangeRow] = field(default_factory=list)
    leader_and_isr: list[LeaderAndIsrRow] = field(default_factory=list)
    update_metadata: list[UpdateMetadataRow] = field(default_factory=list)
    stop_replica: list[StopReplicaRow] = field(default_factory=list)
    findings: list[FindingRow] = field(default_factory=list)
    late: list[Event] = field(default_factory=list)
    applied: int = 0
