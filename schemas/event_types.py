"""Event type names of the controller event log (docs/tables.md), one constant each.

Names follow Kafka's controller events. This module is pure Python so that the core
(`statemachine/`), the jobs and the ingest parser all share one spelling.
"""

from __future__ import annotations

from typing import Final

# Cluster scope: they change broker liveness or the controller.
BROKER_STARTUP: Final = "BrokerStartup"
BROKER_FAILURE: Final = "BrokerFailure"
CONTROLLED_SHUTDOWN: Final = "ControlledShutdown"
CONTROLLER_FAILOVER: Final = "ControllerFailover"

# Topic scope: they apply to every partition of a topic.
TOPIC_DELETION_REQUESTED: Final = "TopicDeletionRequested"
TOPIC_DELETION_COMPLETED: Final = "TopicDeletionCompleted"
TOPIC_CONFIG_CHANGED: Final = "TopicConfigChanged"

# Partition scope.
PARTITION_CREATED: Final = "PartitionCreated"
REASSIGNMENT_REQUESTED: Final = "ReassignmentRequested"
ISR_CHANGED: Final = "IsrChanged"
PREFERRED_LEADER_ELECTION: Final = "PreferredLeaderElection"
UNCLEAN_LEADER_ELECTION: Final = "UncleanLeaderElection"
STOP_REPLICA_RESPONSE: Final = "StopReplicaResponse"
# A partition's state as ZooKeeper held it, for a partition the log never saw created (the
# controller's own initialisation, `KafkaController.initializeControllerContext`).
PARTITION_SNAPSHOT: Final = "PartitionSnapshot"

CLUSTER_EVENTS: Final = frozenset(
    {BROKER_STARTUP, BROKER_FAILURE, CONTROLLED_SHUTDOWN, CONTROLLER_FAILOVER}
)
TOPIC_EVENTS: Final = frozenset(
    {TOPIC_DELETION_REQUESTED, TOPIC_DELETION_COMPLETED, TOPIC_CONFIG_CHANGED}
)
PARTITION_EVENTS: Final = frozenset(
    {
        PARTITION_CREATED,
        REASSIGNMENT_REQUESTED,
        ISR_CHANGED,
        PREFERRED_LEADER_ELECTION,
        UNCLEAN_LEADER_ELECTION,
        STOP_REPLICA_RESPONSE,
        PARTITION_SNAPSHOT,
    }
)
ALL_EVENTS: Final = CLUSTER_EVENTS | TOPIC_EVENTS | PARTITION_EVENTS

# Fields each event type needs besides seq, ts and event_type (checked by the validator).
REQUIRED_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    BROKER_STARTUP: ("broker_id",),
    BROKER_FAILURE: ("broker_id",),
    CONTROLLED_SHUTDOWN: ("broker_id",),
    CONTROLLER_FAILOVER: ("broker_id", "brokers"),
    TOPIC_DELETION_REQUESTED: ("topic",),
    TOPIC_DELETION_COMPLETED: ("topic",),
    TOPIC_CONFIG_CHANGED: ("topic", "unclean_leader_election"),
    PARTITION_CREATED: ("topic", "partition", "replicas"),
    REASSIGNMENT_REQUESTED: ("topic", "partition", "replicas"),
    ISR_CHANGED: ("topic", "partition", "isr"),
    PREFERRED_LEADER_ELECTION: ("topic", "partition"),
    UNCLEAN_LEADER_ELECTION: ("topic", "partition"),
    STOP_REPLICA_RESPONSE: ("topic", "partition", "broker_id"),
    PARTITION_SNAPSHOT: ("topic", "partition", "replicas"),
}

DEFAULT_CLUSTER: Final = "default"
