"""Flat rows for the Spark job: one split ("block") of a file's lines -> parsed rows. Pure
Python; `jobs.ingest` only moves these rows in and out of Arrow batches, and feeds the
sorted facts to the `Assembler`.

A block is numbered from line 0: Spark does not know how many lines came before a split,
so every block also yields one count row, from which the driver derives line offsets, the
timestamp carried into the block and the per-file summary. A broker's offset lines
(`jobs.ingest.logparse.offsets`) are EVIDENCE rows (their header line in `text`), and each broker a
block's lines name as their writer one WRITER row (`broker_id`), from which the driver
tells each file's broker (`offsets.owners`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from jobs.ingest.logparse import records as R
from jobs.ingest.logparse.assemble import Assembler
from jobs.ingest.logparse.envelope import Clock
from jobs.ingest.logparse.facts import Fact, Located
from jobs.ingest.logparse.offsets.facts import OffsetFact, ReplicaOffsets
from jobs.ingest.logparse.values import Ints

__all__ = ["Assembler", "Fact", "Located", "ParsedRow", "parse_block"]

FACT, UNPARSED, COUNT, EVIDENCE, WRITER = "F", "U", "C", "B", "W"


class ParsedRow(NamedTuple):
    """One row of parsing a block: a fact (FACT), an unparsed line (UNPARSED) or the block's
    line counts (COUNT); the fields the other kinds have are None."""

    rtype: str
    path: str
    block: int
    rline: int | None = None  # the record's first line, counted from the block's first
    fidx: int | None = None  # index of the fact within its record
    ts: int | None = None  # epoch microseconds as logged
    ts_fill: int | None = None  # the last timestamp seen: a line without one takes it
    observed_by: str | None = None
    # The fact (`Fact`'s fields, in order).
    kind: str | None = None
    topic: str | None = None
    partition: int | None = None
    broker_id: int | None = None
    from_state: str | None = None
    to_state: str | None = None
    leader: int | None = None
    leader_epoch: int | None = None
    isr: Ints | None = None
    zk_version: int | None = None
    replicas: Ints | None = None
    brokers: Ints | None = None
    controller_id: int | None = None
    controller_epoch: int | None = None
    outcome: str | None = None
    error: str | None = None
    detail: str | None = None
    # The unparsed line.
    text: str | None = None
    reason: str | None = None
    # The block's counts.
    n_lines: int | None = None
    n_extracted: int | None = None
    n_informational: int | None = None
    n_ignored: int | None = None
    n_unparsed: int | None = None
    first_ts: int | None = None
    last_ts: int | None = None
    # An offset line's own fields (`OffsetFact`'s beyond those a `Fact` has).
    offset: int | None = None
    log_end_offset: int | None = None
    high_watermark: int | None = None
    previous_isr: Ints | None = None
    previous_leader: int | None = None
    partition_epoch: int | None = None
    topic_id: str | None = None
    replica_offsets: ReplicaOffsets | None = None
    format: str | None = None


def _evidence(path: str, block: int, line: int, ts: int | None, ts_fill: int | None,
              fact: OffsetFact, text: str) -> ParsedRow:
    return ParsedRow(
        EVIDENCE, path, block, line, 0, ts, ts_fill, kind=fact.kind, topic=fact.topic,
        partition=fact.partition, broker_id=fact.broker_id, leader=fact.leader,
        leader_epoch=fact.leader_epoch, isr=fact.isr, text=text, offset=fact.offset,
        log_end_offset=fact.log_end_offset, high_watermark=fact.high_watermark,
        previous_isr=fact.previous_isr, previous_leader=fact.previous_leader,
        partition_epoch=fact.partition_epoch, topic_id=fact.topic_id,
        replica_offsets=fact.replica_offsets, format=fact.format)


FACT_FIELDS = Fact._fields
PARSED_COLUMNS: tuple[str, ...] = ParsedRow._fields


def parse_block(path: str, block: int, lines: Iterable[str], clock: Clock
                ) -> Iterator[ParsedRow]:
    counts = {R.EXTRACTED: 0, R.INFORMATIONAL: 0, R.IGNORED: 0, R.UNPARSED: 0}
    n_lines = 0
    first_ts: int | None = None
    last_ts: int | None = None
    writers: set[int] = set()
    for rec, ts, last_ts, first_seen in R.timed_records(lines, clock, first_line=0):
        first_ts = first_seen
        counts[rec.status] += rec.n_lines
        n_lines += rec.n_lines
        if rec.status == R.UNPARSED:
            yield ParsedRow(UNPARSED, path, block, rline=rec.line, ts=ts, ts_fill=last_ts,
                            observed_by=rec.observed_by, text=rec.text, reason=rec.reason)
        for i, f in enumerate(rec.facts):
            yield ParsedRow(FACT, path, block, rec.line, i, ts, last_ts, rec.observed_by, *f)
        for fact in rec.evidence:
            yield _evidence(path, block, rec.line, ts, last_ts, fact, rec.header)
        if rec.writer is not None:
            writers.add(rec.writer)
    for broker in sorted(writers):
        yield ParsedRow(WRITER, path, block, broker_id=broker)
    yield ParsedRow(COUNT, path, block, n_lines=n_lines, n_extracted=counts[R.EXTRACTED],
                    n_informational=counts[R.INFORMATIONAL], n_ignored=counts[R.IGNORED],
                    n_unparsed=counts[R.UNPARSED], first_ts=first_ts, last_ts=last_ts)


# The facts, once placed and sorted, as the assembly reads them.
SORTED_COLUMNS: tuple[str, ...] = ("file", "line", "fidx", "ts_eff", "observed_by",
                                   *FACT_FIELDS)
EVENT, OBSERVATION = "E", "O"
