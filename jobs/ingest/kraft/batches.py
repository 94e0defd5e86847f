"""Record batches v2 (`org.apache.kafka.common.record.DefaultRecordBatch`), the unit of a
log segment and of a snapshot.

Header (61 bytes, big-endian): baseOffset int64, batchLength int32 (the bytes after it),
partitionLeaderEpoch int32, magic int8 (2), crc uint32 (CRC-32C of everything after it),
attributes int16 (bits 0-2 compression, 3 timestamp type, 4 transactional, 5 control, 6 delete
horizon), lastOffsetDelta int32, baseTimestamp int64, maxTimestamp int64, producerId int64,
producerEpoch int16, baseSequence int32, recordCount int32. Then the records, compressed
together when the codec is not none; each (`DefaultRecord`) is a zigzag varint length, then
attributes int8, timestampDelta varlong, offsetDelta varint, key and value (varint length,
-1 = null), and headers (a varint count of key / value pairs).

A batch whose CRC, magic or records do not check out is reported (`Corrupt`) and skipped;
a truncated batch ends the input, as Kafka's `FileRecords` reads up to the last whole batch.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

import crc32c

from jobs.ingest.kraft.codecs import NAMES, decompress
from jobs.ingest.kraft.wire import Reader

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LOG_OVERHEAD = 12  # baseOffset and batchLength
MAGIC_OFFSET = 16
CRC_FROM = 21  # the CRC covers the attributes onwards
TRANSACTIONAL, CONTROL = 0x10, 0x20


class Batch(NamedTuple):
    base_offset: int
    length: int
    leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int
    position: int  # in the file

    @property
    def compression(self) -> str:
        return NAMES.get(self.attributes & 0x07, str(self.attributes & 0x07))

    @property
    def transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL)

    @property
    def control(self) -> bool:
        return bool(self.attributes & CONTROL)


class Record(NamedTuple):
    offset: int
    timestamp: int  # ms
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


class Corrupt(NamedTuple):
    position: int
    base_offset: int | None
    reason: str
    fatal: bool  # nothing after it can be read


def _bytes(r: Reader) -> bytes | None:
    n = r.varint()
    return None if n < 0 else r.take(n)


def _record(r: Reader, batch: Batch) -> Record:
    length = r.varint()
    body = Reader(r.data, r.pos, r.pos + length)
    r.take(length)
    body.int8()  # attributes: unused
    ts = batch.base_timestamp + body.varint()
    offset = batch.base_offset + body.varint()
    key, value = _bytes(body), _bytes(body)
    headers = []
    for _ in range(body.varint()):
        hkey = _bytes(body)
        headers.append(((hkey or b"").decode("utf-8"), _bytes(body)))
    if body.remaining():
        raise ValueError(f"record at offset {offset}: {body.remaining()} bytes left over")
    return Record(offset, ts, key, value, tuple(headers))


def records(batch: Batch, data: bytes) -> list[Record]:
    """The records of `batch`, whose bytes start at `batch.position` of `data`."""
    start = batch.position + HEADER_SIZE
    raw = decompress(batch.attributes & 0x07,
                     data[start:batch.position + LOG_OVERHEAD + batch.length])
    r = Reader(raw)
    out = [_record(r, batch) for _ in range(batch.record_count)]
    if r.remaining():
        raise ValueError(f"{r.remaining()} bytes after the {batch.record_count} records")
    return out


def read_batches(data: bytes) -> Iterator[tuple[Batch, list[Record]] | Corrupt]:
    """Every batch of a segment or snapshot file, with its records, in file order."""
    pos, size = 0, len(data)
    while pos < size:
        if size - pos < HEADER_SIZE:
            yield Corrupt(pos, None, f"truncated: {size - pos} bytes after the last batch", True)
            return
        b = Batch._make((*HEADER.unpack_from(data, pos), pos))
        end = pos + LOG_OVERHEAD + b.length
        if b.length < HEADER_SIZE - LOG_OVERHEAD:
            yield Corrupt(pos, b.base_offset, f"batch length {b.length}", True)
            return
        if end > size:
            yield Corrupt(pos, b.base_offset,
                          f"truncated: batch of {b.length + LOG_OVERHEAD} bytes, "
                          f"{size - pos} in the file", True)
            return
        pos = end
        if b.magic != 2:
            yield Corrupt(b.position, b.base_offset, f"magic {b.magic}", False)
            continue
        crc = crc32c.crc32c(data[b.position + CRC_FROM:end])
        if crc != b.crc:
            yield Corrupt(b.position, b.base_offset,
                          f"CRC-32C mismatch (stored {b.crc}, computed {crc})", False)
            continue
        try:
            yield b, records(b, data)
        except (ValueError, UnicodeDecodeError) as e:
            yield Corrupt(b.position, b.base_offset, f"records: {e}", False)
