"""Output rows of the core, one NamedTuple per table (the tables are described in
docs/tables.md), without `cluster` and `run_id`, which the job prepends. Field order is the
table's column order after those two; `tests/schemas/test_schemas.py` checks it against
`schemas.tables`.

Lists are tuples here (hashable, cheap); the job turns them into arrays.
"""

from __future__ import annotations

from typing import Any, NamedTuple

Ints = tuple[int, ...]


class PartitionStateRow(NamedTuple):
    topic: str
    partition: int
    state: str
    leader: int | None  # None: no leadership info (never elected, or deleted)
    leader_epoch: int | None
    isr: Ints | None
    replicas: Ints
    adding_replicas: Ints
    removing_replicas: Ints
    zk_version: int | None
    controller_epoch: int | None  # epoch of the controller that last wrote the state
    leader_recovery_state: str | None
    queued_for_deletion: bool
    last_seq: int


class ReplicaStateRow(NamedTuple):
    topic: str
    partition: int
    broker_id: int
    state: str


# `StateChangeRow.outcome`: what became of an attempted transition.
APPLIED = "applied"  # the state is now `to_state`
# The transition matrix refused it (Kafka's `logInvalidTransition`: an IllegalStateException
# "... should be in ... states before moving to ..."): the state stays `from_state`.
REJECTED = "rejected"
# The controller attempted it and it failed (Kafka's `logFailedStateChange` with a
# StateChangeFailedException: no leader electable, no live replica, ...): the state stays
# `from_state`.
FAILED = "failed"
OUTCOMES = (APPLIED, REJECTED, FAILED)


class StateChangeRow(NamedTuple):
    seq: int
    ts: Any
    step: int  # order of the transition within (seq, topic, partition)
    topic: str
    partition: int
    broker_id: int | None  # None for the partition machine
    machine: str  # "replica" | "partition"
    from_state: str
    to_state: str  # the target state, as Kafka's log names it
    outcome: str  # APPLIED | REJECTED | FAILED: the state after is to_state only if applied
    reason: str | None  # why rejected or failed (Kafka's exception message); None if applied


class PartitionStateWriteRow(NamedTuple):
    """A write of the partition's state znode (`/brokers/topics/<t>/partitions/<p>/state`):
    the leader and ISR as stored, whether or not a request carried them."""

    seq: int
    ts: Any
    write: int  # order of the write within (seq, topic, partition)
    topic: str
    partition: int
    leader: int
    leader_epoch: int
    isr: Ints
    leader_recovery_state: str
    zk_version: int
    controller_epoch: int
    cause: str  # one of WRITE_CAUSES


# `PartitionStateWriteRow.cause`: which controller step wrote the znode.
WRITE_CAUSES = (
    "initialization",  # NewPartition -> OnlinePartition: the first leader and ISR
    "election",  # an OnlinePartition election (offline, preferred, reassignment, shutdown)
    "isr_shrink",  # a replica to OfflineReplica removed from the ISR
    "isr_change",  # an ISR change from the leader (IsrChanged / AlterPartition)
    "reassignment",  # the leader epoch bump of a reassignment step
)


class LeaderAndIsrRow(NamedTuple):
    seq: int
    ts: Any
    batch: int  # order of the controller batch within (seq, topic, partition)
    controller_epoch: int  # request level: the sending controller's epoch
    broker_id: int  # recipient
    topic: str
    partition: int
    state_controller_epoch: int  # partition level: epoch that wrote the state
    leader: int
    leader_epoch: int
    isr: Ints
    zk_version: int
    replicas: Ints
    adding_replicas: Ints
    removing_replicas: Ints
    is_new: bool
    leader_recovery_state: str


class UpdateMetadataRow(NamedTuple):
    seq: int
    ts: Any
    batch: int
    controller_epoch: int
    topic: str
    partition: int
    state_controller_epoch: int
    leader: int
    leader_epoch: int
    isr: Ints
    zk_version: int
    replicas: Ints
    offline_replicas: Ints
    # None: every live or shutting-down broker at `seq` (join broker_timeline); otherwise the
    # explicit recipients (the full UM a starting broker gets).
    to_brokers: Ints | None


class StopReplicaRow(NamedTuple):
    seq: int
    ts: Any
    batch: int
    controller_epoch: int
    broker_id: int
    topic: str
    partition: int
    delete_partition: bool
    leader_epoch: int | None  # None before IBP 2.6: StopReplica v0-v2 carry no epochs


class FindingRow(NamedTuple):
    seq: int | None
    ts: Any
    topic: str | None
    partition: int | None
    broker_id: int | None
    kind: str
    detail: str
    source: str | None


class BrokerIntervalRow(NamedTuple):
    broker_id: int
    status: str  # live | shutting_down | dead
    seq_from: int
    seq_to: int | None  # None: still open at the end of the log
    ts_from: Any
    ts_to: Any


class ControllerRow(NamedTuple):
    controller_id: int
    controller_epoch: int
    seq: int
    ts: Any
    live_brokers: Ints


class PartitionWindowRow(NamedTuple):
    """A window during which a partition met one of `statemachine.windows`' conditions."""

    topic: str
    partition: int
    kind: str  # offline | under_replicated | under_min_isr | reassigning | deleting
    start_seq: int
    start_ts: Any
    end_seq: int | None  # None: still open at the end of the replay
    end_ts: Any
    seconds: float | None  # (end_ts - start_ts) / 1e6 once closed
    cause_event: str | None  # the event type that opened it
    cause_broker: int | None  # its broker (None for topic and partition events)
    end_event: str | None  # the event type that closed it
    end_broker: int | None  # its broker, by the rule of `cause_broker`
    incident_id: int | None  # offline and under_min_isr: the seq that opened it


class TopicSeconds(NamedTuple):
    """One topic's share of an incident (`IncidentRow.worst_topics`)."""

    topic: str
    offline_partition_seconds: float
    under_min_isr_partition_seconds: float


class BrokerShare(NamedTuple):
    """One broker's part of an incident (`IncidentRow.brokers`): the windows that name it
    as the broker their partition lost, their partition-seconds, and how long after the
    incident's start its last window closed (None while one is open)."""

    broker_id: int
    partitions: int
    offline_partition_seconds: float
    under_min_isr_partition_seconds: float
    seconds: float | None


class IncidentRow(NamedTuple):
    """A controller event that opened `offline` or `under_min_isr` windows, with its
    windows rolled up (`statemachine.incidents`). Times are microseconds."""

    incident_id: int  # the seq of that event: with the cluster, the incident's name
    cause_event: str | None
    cause_broker: int | None
    cause_seq: int
    start_ts: Any
    end_ts: Any  # when its last window closed; None while one is open
    end_seq: int | None
    seconds: float | None
    peak_partitions_offline: int
    partitions_affected: int
    topics_affected: int
    offline_partition_seconds: float
    under_min_isr_partition_seconds: float
    unclean_elections: int  # unclean leader elections of its partitions inside it
    recovery_event: str | None  # the event that closed its last window
    recovery_broker: int | None
    worst_topics: tuple[TopicSeconds, ...]
    # Every broker its windows name, by broker id: one event (a BrokerChange, a failover)
    # may lose several brokers at once.
    brokers: tuple[BrokerShare, ...] = ()
