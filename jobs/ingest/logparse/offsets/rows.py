"""The rows of `offset_evidence` (`schemas.ingest.OFFSET_EVIDENCE_SCHEMA` after `cluster`):
one per offset line, where it was logged, by which broker, and what it says.

`broker_id` is the broker the line names as its writer (`broker_from` "line"), else its
file's (`owners.file_owners`: "file"), else null. `text` is the line as read: the proof a
`data_loss` row quotes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from jobs.ingest.logparse.offsets.facts import Ints, OffsetFact, ReplicaOffsets

LINE, FILE = "line", "file"


class EvidenceRow(NamedTuple):
    file: str
    line: int
    source: str  # file:line
    ts: int  # epoch microseconds (UTC); a line without a timestamp takes the one before it
    broker_id: int | None
    broker_from: str | None  # line | file | None
    kind: str
    topic: str | None
    partition: int | None
    topic_id: str | None
    leader_epoch: int | None
    offset: int | None
    log_end_offset: int | None
    high_watermark: int | None
    isr: Ints | None
    previous_isr: Ints | None
    leader: int | None
    previous_leader: int | None
    partition_epoch: int | None
    replica_offsets: ReplicaOffsets | None
    format: str | None
    text: str


def evidence_row(file: str, line: int, ts: int, fact: OffsetFact, text: str,
                 owners: Mapping[str, int]) -> EvidenceRow:
    broker, source = fact.broker_id, LINE
    if broker is None:
        broker = owners.get(file)
        source = FILE
    return EvidenceRow(
        file, line, f"{file}:{line}", ts, broker, None if broker is None else source,
        fact.kind, fact.topic, fact.partition, fact.topic_id, fact.leader_epoch, fact.offset,
        fact.log_end_offset, fact.high_watermark, fact.isr, fact.previous_isr, fact.leader,
        fact.previous_leader, fact.partition_epoch, fact.replica_offsets, fact.format, text)
