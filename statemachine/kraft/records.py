"""One record of a KRaft `__cluster_metadata` log, as the KRaft fold reads it.

`MetadataRecord` mirrors the typed columns of the `metadata_records` table (docs/tables.md,
written by `jobs.ingest`), in the records' own conventions: a `PartitionChangeRecord` names
only what changed, so a list that is None, or `leader` -2 (`NO_LEADER_CHANGE`), means
"unchanged"; -1 is "no leader". `fenced` is True for a `FenceBrokerRecord`, False for an
`UnfenceBrokerRecord`, and a `BrokerRegistrationChangeRecord`'s 1 / -1 as True / False
(0, no change, as None). `ts` is epoch microseconds.

No record carries the epochs a change implies: the fold derives them as Kafka's metadata
image does (`statemachine.kraft.image`). Pure: no I/O, no pyspark.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

Ints = tuple[int, ...]

# Record type names, as `MetadataRecordType` and the control record types name them.
TOPIC: Final = "TopicRecord"
REMOVE_TOPIC: Final = "RemoveTopicRecord"
PARTITION: Final = "PartitionRecord"
PARTITION_CHANGE: Final = "PartitionChangeRecord"
REGISTER_BROKER: Final = "RegisterBrokerRecord"
UNREGISTER_BROKER: Final = "UnregisterBrokerRecord"
BROKER_REGISTRATION_CHANGE: Final = "BrokerRegistrationChangeRecord"
FENCE_BROKER: Final = "FenceBrokerRecord"
UNFENCE_BROKER: Final = "UnfenceBrokerRecord"
CONFIG: Final = "ConfigRecord"
NOOP: Final = "NoOpRecord"
CLEAR_ELR: Final = "ClearElrRecord"  # 4.x: clears the ELR of a topic's partitions, or all
LEADER_CHANGE: Final = "LeaderChangeMessage"  # control record: a new quorum leader
CONTROL_RECORD: Final = "ControlRecord"  # a control record dump text printed without kind
UNKNOWN: Final = "unknown"  # a record the ingest could not decode

# `MetadataRecord.transaction` (KIP-868 metadata transactions, 3.6+).
COMMITTED: Final = "committed"
ABORTED: Final = "aborted"
OPEN: Final = "open"

NO_LEADER: Final = -1
NO_LEADER_CHANGE: Final = -2
# `LeaderRecoveryState` byte values (`org.apache.kafka.metadata.LeaderRecoveryState`).
RECOVERED: Final = 0
RECOVERING: Final = 1

# ConfigRecord names the fold reads.
MIN_ISR: Final = "min.insync.replicas"
UNCLEAN: Final = "unclean.leader.election.enable"


class MetadataRecord(NamedTuple):
    """A row of `metadata_records` without `cluster`, `source`, the JSON and the detail."""

    offset: int | None
    batch_base_offset: int | None
    batch_leader_epoch: int | None  # the quorum leader epoch of the record's batch
    ts: Any  # epoch microseconds
    record_type: str
    record_version: int | None = None
    is_control: bool = False
    transaction: str | None = None  # committed | aborted | open | None (outside one)
    broker_id: int | None = None  # for a LeaderChangeMessage: the new quorum leader
    broker_epoch: int | None = None
    topic: str | None = None
    topic_id: str | None = None
    partition: int | None = None
    leader: int | None = None
    isr: Ints | None = None
    replicas: Ints | None = None
    adding_replicas: Ints | None = None
    removing_replicas: Ints | None = None
    elr: Ints | None = None
    last_known_elr: Ints | None = None
    leader_epoch: int | None = None
    partition_epoch: int | None = None
    leader_recovery_state: int | None = None
    fenced: bool | None = None
    in_controlled_shutdown: bool | None = None
    config_resource_type: str | None = None
    config_resource: str | None = None
    config_name: str | None = None
    config_value: str | None = None


_LISTS = frozenset(("isr", "replicas", "adding_replicas", "removing_replicas", "elr",
                    "last_known_elr"))


def record_of(row: Any) -> MetadataRecord:
    """The record held by `row`, any object with the table's column names as attributes
    (a `metadata_records` row, a pandas row tuple, ...); lists become tuples."""
    values: list[Any] = []
    for name in MetadataRecord._fields:
        v = getattr(row, name, None)
        values.append(tuple(int(x) for x in v) if name in _LISTS and v is not None else v)
    return MetadataRecord(*values)
