"""Telling KRaft inputs apart, and decoding them into rows and summaries.

A broker's data directory holds other topics' segments beside the metadata log's, in the
same record-batch format: a user record whose bytes happen to look like a metadata record
would be folded. So a log segment is read only from the metadata log's folder, a
`__cluster_metadata-N` folder or one whose `partition.metadata` names the metadata topic's
id (`Uuid.METADATA_TOPIC_ID`, `AAAAAAAAAAAAAAAAAAAAAQ`; `PartitionMetadata.encode` writes
`version: 0` and `topic_id: ..`), and recognised there by its first batch (magic 2 at byte
16, a batch length that fits, its CRC-32C when the whole batch is in the first bytes read)
or, empty, by its `.log` name. A snapshot is a file named as `Snapshots.filenameFromSnapshotId`
names one, `<20-digit offset>-<10-digit epoch>.checkpoint` (not the KRaft controller's
`bootstrap.checkpoint`, which holds the metadata version the cluster was formatted with, not
its history). A dump is told by `kafka-dump-log`'s own lines. A segment outside the
metadata log's folder (and any file named as one, `<20 digits>.log`) and any other
`.checkpoint` is skipped with its reason (`classify`); anything else is left to the
controller-log ingest.

The segments of one log are decoded in offset order with one `TransactionBuffer`, so a
metadata transaction may span them; a snapshot or a dump is decoded on its own.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Iterator
from typing import NamedTuple

import crc32c

from jobs.ingest.kraft import batches
from jobs.ingest.kraft.dumplog import looks_like, read_lines
from jobs.ingest.kraft.framing import control_record, metadata_record
from jobs.ingest.kraft.rows import NOOP, Entry, MetadataRow, Summary, row
from jobs.ingest.kraft.transactions import TransactionBuffer

SEGMENT, SNAPSHOT, DUMP_LOG = "segment", "snapshot", "dump_log"
# `Snapshots.filenameFromSnapshotId` (3.7.0 Snapshots.java:44-60): 20-digit offset, 10-digit
# epoch, `.checkpoint`; a segment is its 20-digit base offset and `.log` (`LogFileUtils`).
SNAPSHOT_NAME = re.compile(r"\d{20}-\d{10}\.checkpoint")
SEGMENT_NAME = re.compile(r"\d{20}\.log")
METADATA_FOLDER = re.compile(r"__cluster_metadata-\d+")
# `Uuid.METADATA_TOPIC_ID` (3.7.0 Uuid.java:44, `new Uuid(0L, 1L)`), as `toString` prints it.
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
PARTITION_METADATA = "partition.metadata"
HEAD_BYTES = 1 << 16  # what detection reads of a file
GZIP_MAGIC = b"\x1f\x8b"


class Input(NamedTuple):
    source: str  # display name
    kind: str
    data: bytes


def _is_segment(head: bytes) -> bool:
    if len(head) < batches.HEADER_SIZE or head.startswith(GZIP_MAGIC):
        return False
    base, length = struct.unpack_from(">qi", head, 0)
    if head[batches.MAGIC_OFFSET] != 2 or base < 0 or length < 49:
        return False
    end = batches.LOG_OVERHEAD + length
    if end > len(head):
        return True
    (crc,) = struct.unpack_from(">I", head, 17)
    return bool(crc32c.crc32c(head[batches.CRC_FROM:end]) == crc)


def names_metadata_topic(partition_metadata: bytes) -> bool:
    """Whether a folder's `partition.metadata` names the metadata topic's id."""
    text = partition_metadata.decode("utf-8", errors="replace")
    return any(line.strip() == f"topic_id: {METADATA_TOPIC_ID}" for line in text.splitlines())


def metadata_folder_by_name(path: str) -> bool:
    """Whether the file's folder is named as the metadata log's (`__cluster_metadata-N`)."""
    parts = path.rstrip("/").rsplit("/", 2)
    return len(parts) > 1 and METADATA_FOLDER.fullmatch(parts[-2]) is not None


def classify(path: str, head: bytes, metadata_folder: bool | None = None
             ) -> tuple[str | None, str | None]:
    """(kind, None) for a KRaft input; (None, why) for a file of a data directory that is
    not one of the metadata log's (skipped, and said); (None, None) for anything else (the
    controller-log ingest's). `metadata_folder`: whether the file's folder is the metadata
    log's (default: by its name; the caller may know from its `partition.metadata`)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    in_metadata = metadata_folder_by_name(path) if metadata_folder is None else metadata_folder
    if name.endswith(".checkpoint"):
        if SNAPSHOT_NAME.fullmatch(name):
            return SNAPSHOT, None
        return None, "not a snapshot name (<20-digit offset>-<10-digit epoch>.checkpoint)"
    segment_name = SEGMENT_NAME.fullmatch(name) is not None
    if _is_segment(head) or (segment_name and (not head or in_metadata)):
        if in_metadata:
            return SEGMENT, None
        return None, ("a log segment outside the metadata log's folder (__cluster_metadata-N, "
                      "or partition.metadata naming its topic id)")
    if head.startswith(GZIP_MAGIC):
        return None, None
    lines = head.decode("utf-8", errors="replace").splitlines()[:20]
    return (DUMP_LOG, None) if looks_like(lines) else (None, None)


def detect(path: str, head: bytes, metadata_folder: bool | None = None) -> str | None:
    """The kind of KRaft input a file is, from its name, folder and first bytes; None: not
    one (`classify` says why a skipped file is skipped)."""
    return classify(path, head, metadata_folder)[0]


class Decoder:
    """Decodes inputs in order into rows, keeping one summary per input."""

    def __init__(self) -> None:
        self.summaries: dict[str, Summary] = {}
        self.buffer: TransactionBuffer[tuple[Summary, str, Entry]] = TransactionBuffer()

    def _emit(self, ready: list[tuple[tuple[Summary, str, Entry], str | None]]
              ) -> Iterator[MetadataRow]:
        for (summary, source, entry), state in ready:
            r = row(source, entry, state)
            summary.written(r)
            yield r

    def _entry(self, summary: Summary, source: str, e: Entry) -> Iterator[MetadataRow]:
        summary.count(e)
        if e.decoded.record_type == NOOP:
            summary.noops += 1
            return
        yield from self._emit(self.buffer.feed((summary, source, e), e.decoded.record_type,
                                               e.control))

    def _binary(self, summary: Summary, data: bytes) -> Iterator[MetadataRow]:
        for item in batches.read_batches(data):
            if isinstance(item, batches.Corrupt):
                summary.corrupt_batches += 1
                where = f"batch at position {item.position}"
                if item.base_offset is not None:
                    where += f" (base offset {item.base_offset})"
                reason = f"{where}: {item.reason}"
                summary.error = summary.error or (reason if item.fatal else None)
                summary.corrupt_reasons.append(reason)
                continue
            b, recs = item
            summary.batches += 1
            for rec in recs:
                decoded = (control_record(rec.key, rec.value) if b.control
                           else metadata_record(rec.value))
                e = Entry(rec.offset, b.base_offset, b.leader_epoch, rec.timestamp, b.control,
                          decoded)
                yield from self._entry(summary, summary.source, e)

    def _text(self, summary: Summary, data: bytes) -> Iterator[MetadataRow]:
        text = data.decode("utf-8", errors="replace").splitlines()
        for line in read_lines(text):
            if line.batch is not None:
                summary.batches += 1
            elif line.entry is not None:
                yield from self._entry(summary, f"{summary.source}:{line.number}", line.entry)
            elif line.problem:
                summary.unreadable_lines += 1
                summary.error = summary.error or f"line {line.number}: {line.problem}"

    def decode(self, item: Input) -> Iterator[MetadataRow]:
        summary = self.summaries[item.source] = Summary(item.source, item.kind)
        if item.kind != SEGMENT:
            yield from self.flush()  # a snapshot or a dump does not continue a segment
        if item.kind == DUMP_LOG:
            yield from self._text(summary, item.data)
        else:
            yield from self._binary(summary, item.data)
        if item.kind != SEGMENT:
            yield from self.flush()
        if item.kind == SNAPSHOT:
            _check_snapshot(summary)

    def flush(self) -> Iterator[MetadataRow]:
        """The records of a transaction still open (`open`)."""
        yield from self._emit(self.buffer.finish())


def _check_snapshot(s: Summary) -> None:
    """A snapshot opens with a SnapshotHeader and closes with a SnapshotFooter
    (`RecordsSnapshotWriter`): without the footer it was cut short."""
    if s.error is None and not s.records_by_type["SnapshotFooterRecord"]:
        s.error = "no SnapshotFooter: the snapshot is incomplete"


def decode_all(inputs: Iterable[Input]) -> tuple[list[MetadataRow], list[Summary]]:
    """Rows and summaries of inputs given in order (the segments of a log by base offset)."""
    d = Decoder()
    out: list[MetadataRow] = []
    for item in inputs:
        out.extend(d.decode(item))
    out.extend(d.flush())
    return out, list(d.summaries.values())
