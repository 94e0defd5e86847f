"""The `metadata_writes` table of a KRaft replay: every record the fold applied, as the
quorum leader wrote it, with the epochs Kafka's metadata image derived from it (no record
carries them: `PartitionRegistration.merge` bumps them).

`RecordingImage` is the fold's `MetadataImage` that keeps, for each record it applied, what
it wrote: a record the image refused (`metadata_record_rejected`) is not a write.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from statemachine.kraft.image import Change, MetadataImage
from statemachine.kraft.records import Ints, MetadataRecord


class MetadataWriteRow(NamedTuple):
    """A `metadata_writes` row (schemas.tables.METADATA_WRITES after cluster, run_id)."""

    seq: int | None
    ts: Any
    quorum_epoch: int | None
    record_type: str
    broker_id: int | None
    broker_epoch: int | None
    topic: str | None
    partition: int | None
    leader: int | None
    isr: Ints | None
    replicas: Ints | None
    adding_replicas: Ints | None
    removing_replicas: Ints | None
    elr: Ints | None
    leader_epoch: int | None
    partition_epoch: int | None
    fenced: bool | None
    in_controlled_shutdown: bool | None
    config_resource: str | None
    config_name: str | None
    config_value: str | None


class Applied(NamedTuple):
    """One applied record and what it changed: per partition written, (topic, partition,
    leader before, leader after, leader epoch, partition epoch); the topic it removed."""

    record: MetadataRecord
    parts: tuple[tuple[str, int, int, int, int, int], ...]
    removed: str | None


class RecordingImage(MetadataImage):
    """A `MetadataImage` that lists the records it applied (`applied`), in order."""

    def __init__(self, default_min_isr: int = 1) -> None:
        super().__init__(default_min_isr)
        self.applied: list[Applied] = []

    def apply(self, r: MetadataRecord) -> Change:
        change = super().apply(r)
        if change.rejected is None:
            parts = tuple((p.topic, p.partition, leader, p.leader, p.leader_epoch, p.zk_version)
                          for p, leader, _, _ in change.parts)
            removed = None if change.removed is None else change.removed.name
            self.applied.append(Applied(r, parts, removed))
        return change


def write_rows(applied: list[Applied]) -> list[MetadataWriteRow]:
    """One row per applied record, one per partition for a record that wrote several (a
    `ClearElrRecord` of every topic)."""
    out = []
    for a in applied:
        r = a.record
        for topic, partition, leader_epoch, partition_epoch in _targets(a):
            out.append(MetadataWriteRow(
                r.offset, r.ts, r.batch_leader_epoch, r.record_type, r.broker_id,
                r.broker_epoch, topic, partition, r.leader, r.isr, r.replicas,
                r.adding_replicas, r.removing_replicas, r.elr, leader_epoch, partition_epoch,
                r.fenced, r.in_controlled_shutdown, r.config_resource, r.config_name,
                r.config_value))
    return out


def _targets(a: Applied) -> list[tuple[str | None, int | None, int | None, int | None]]:
    if a.parts:
        return [(t, p, le, pe) for t, p, _, _, le, pe in a.parts]
    return [(a.removed or a.record.topic, a.record.partition, None, None)]
