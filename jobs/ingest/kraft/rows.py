"""Decoded records into rows of `metadata_records` (`schemas.ingest.METADATA_RECORDS`), and
the counts of `metadata_summary` per input.

Besides the record's fields as JSON (Kafka's JSON names, as `kafka-dump-log` prints them),
a row carries typed columns for what a replay of the log reads. They keep the records'
own conventions: a `PartitionChangeRecord` names only what changed, so a null list or
`leader` -2 is "no change" (-1: no leader); `fenced` is true for `FenceBrokerRecord`,
false for `UnfenceBrokerRecord`, and `BrokerRegistrationChangeRecord`'s `fenced` 1 / -1 as
true / false (0, no change, as null).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import NamedTuple

from jobs.ingest.kraft.framing import UNKNOWN, Decoded
from jobs.ingest.kraft.schema import Value
from jobs.ingest.kraft.transactions import ABORTED, OPEN

NOOP = "NoOpRecord"
# ConfigRecord's resourceType (`org.apache.kafka.common.config.ConfigResource.Type`).
CONFIG_RESOURCE_TYPES = {2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS",
                         32: "GROUP"}


class Entry(NamedTuple):
    """One record as decoded, with its batch."""

    offset: int | None
    batch_base_offset: int | None
    batch_leader_epoch: int | None
    timestamp_ms: int | None
    control: bool
    decoded: Decoded


class MetadataRow(NamedTuple):
    """A row of `metadata_records` after its `cluster` column."""

    source: str
    offset: int | None
    batch_base_offset: int | None
    batch_leader_epoch: int | None
    ts: int | None  # epoch microseconds
    record_type: str
    record_version: int | None
    api_key: int | None
    is_control: bool
    transaction: str | None
    fields: str | None
    detail: str | None
    broker_id: int | None
    broker_epoch: int | None
    topic: str | None
    topic_id: str | None
    partition: int | None
    leader: int | None
    isr: list[int] | None
    replicas: list[int] | None
    adding_replicas: list[int] | None
    removing_replicas: list[int] | None
    elr: list[int] | None
    last_known_elr: list[int] | None
    leader_epoch: int | None
    partition_epoch: int | None
    leader_recovery_state: int | None
    fenced: bool | None
    in_controlled_shutdown: bool | None
    config_resource_type: str | None
    config_resource: str | None
    config_name: str | None
    config_value: str | None


TYPED = MetadataRow._fields[MetadataRow._fields.index("broker_id"):]
_BROKER_ID = ("brokerId", "id", "controllerId", "leaderId")
_BROKER_EPOCH = ("brokerEpoch", "epoch")


def _first(fields: dict[str, Value], names: tuple[str, ...]) -> Value:
    return next((fields[n] for n in names if n in fields), None)


def _flag(value: Value, yes: int, no: int | None) -> bool | None:
    return True if value == yes else False if no is not None and value == no else None


def _partition(kind: str, f: dict[str, Value], out: dict[str, Value]) -> None:
    change = kind == "PartitionChangeRecord"
    out.update(partition=f.get("partitionId"), leader=f.get("leader", -2 if change else None),
               isr=f.get("isr"), replicas=f.get("replicas"),
               adding_replicas=f.get("addingReplicas"),
               removing_replicas=f.get("removingReplicas"),
               elr=f.get("eligibleLeaderReplicas"),
               last_known_elr=f.get("lastKnownElr", f.get("lastKnownELR")),
               leader_epoch=f.get("leaderEpoch"), partition_epoch=f.get("partitionEpoch"),
               leader_recovery_state=f.get("leaderRecoveryState"))


def typed(kind: str, f: dict[str, Value]) -> dict[str, Value]:
    """The typed columns of a record of type `kind` with fields `f`."""
    out: dict[str, Value] = dict.fromkeys(TYPED)
    out["broker_id"] = _first(f, _BROKER_ID)
    out["broker_epoch"] = _first(f, _BROKER_EPOCH) if kind != "LeaderChangeMessage" else None
    out["topic_id"] = f.get("topicId")
    out["topic"] = f.get("name") if kind == "TopicRecord" else f.get("topicName")
    if kind in ("PartitionRecord", "PartitionChangeRecord"):
        _partition(kind, f, out)
    if kind in ("RegisterBrokerRecord", "FenceBrokerRecord", "UnfenceBrokerRecord"):
        out["fenced"] = f.get("fenced", kind != "UnfenceBrokerRecord")  # registers fenced
        out["in_controlled_shutdown"] = f.get("inControlledShutdown")
    elif kind == "BrokerRegistrationChangeRecord":
        out["fenced"] = _flag(f.get("fenced"), 1, -1)
        out["in_controlled_shutdown"] = _flag(f.get("inControlledShutdown"), 1, None)
    elif kind == "ConfigRecord":
        rtype = f.get("resourceType")
        out.update(config_resource_type=CONFIG_RESOURCE_TYPES.get(rtype, str(rtype))
                   if isinstance(rtype, int) else None,
                   config_resource=f.get("resourceName"), config_name=f.get("name"),
                   config_value=f.get("value"))
        if rtype == 2:
            out["topic"] = f.get("resourceName")
    return out


def row(source: str, e: Entry, transaction: str | None) -> MetadataRow:
    d = e.decoded
    fields = d.fields or {}
    cols = typed(d.record_type, fields) if d.record_type != UNKNOWN else dict.fromkeys(TYPED)
    return MetadataRow(
        source, e.offset, e.batch_base_offset, e.batch_leader_epoch,
        None if e.timestamp_ms is None else e.timestamp_ms * 1000, d.record_type, d.version,
        d.api_key, e.control, transaction,
        None if d.fields is None else json.dumps(d.fields, separators=(",", ":")),
        d.problem, **cols)


@dataclass
class Summary:
    """What one input held (a row of `metadata_summary`)."""

    source: str
    input_kind: str  # segment | snapshot | dump_log
    batches: int = 0
    records: int = 0  # every record decoded or not, NoOps and control records included
    rows: int = 0
    noops: int = 0
    aborted: int = 0
    open_transaction: int = 0
    unknown: int = 0
    corrupt_batches: int = 0
    unreadable_lines: int = 0  # dump text: lines that are not kafka-dump-log's
    error: str | None = None  # why the input stopped before its end, or its first bad line
    first_offset: int | None = None
    last_offset: int | None = None
    records_by_type: Counter[str] = field(default_factory=Counter)
    unknown_types: Counter[str] = field(default_factory=Counter)
    corrupt_reasons: list[str] = field(default_factory=list)

    def count(self, e: Entry) -> None:
        self.records += 1
        self.records_by_type[e.decoded.record_type] += 1
        if e.offset is not None:
            self.first_offset = e.offset if self.first_offset is None else self.first_offset
            self.last_offset = e.offset
        if e.decoded.record_type == UNKNOWN:
            self.unknown += 1
            self.unknown_types[_unknown_key(e.decoded)] += 1

    def nothing_read(self) -> str | None:
        """Why nothing of this input could be read (no record, and a problem), else None:
        an empty segment or snapshot is no problem, a file of bad lines is."""
        if self.records or not (self.error or self.unreadable_lines or self.corrupt_batches):
            return None
        return self.error or (self.corrupt_reasons[0] if self.corrupt_reasons else "unreadable")

    def as_dict(self) -> dict[str, object]:
        """Plain values (`dataclasses.asdict` would rebuild a Counter from its items)."""
        return {f.name: dict(v) if isinstance(v, Counter) else v
                for f in fields(self) for v in [getattr(self, f.name)]}

    def written(self, r: MetadataRow) -> None:
        self.rows += 1
        self.aborted += r.transaction == ABORTED
        self.open_transaction += r.transaction == OPEN


def _unknown_key(d: Decoded) -> str:
    """`api key 99 v0`, `api key 5 v9`, or the reason of a record with no api key."""
    if d.api_key is not None:
        return f"api key {d.api_key} v{d.version}"
    return d.problem or "unknown"
