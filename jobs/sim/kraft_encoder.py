"""An encoder of Kafka's KRaft metadata log, written from the wire format (not from the
decoder): metadata records in their ApiMessageAndVersion framing, control records, record
batches v2 with every codec, log segments and snapshots.

Messages are encoded from the same field descriptions the decoder reads (`records.py`);
the tests that matter for the descriptions themselves hold hand-written bytes against them.
The ingest's tests write their inputs with it, and so does the KRaft simulator
(`jobs.sim.kraft_history`, `make kraft-sample`).
"""

from __future__ import annotations

import base64
import gzip
import struct
from collections.abc import Sequence
from typing import Any, NamedTuple

import cramjam
import crc32c

from jobs.ingest.kraft import records as R
from jobs.ingest.kraft.schema import Field, Message
from jobs.ingest.kraft.wire import uvarint_bytes, varint_bytes

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODECS = (NONE, GZIP, SNAPPY, LZ4, ZSTD)


# -- messages ------------------------------------------------------------------------------

def _compact(b: bytes | None) -> bytes:
    return b"\x00" if b is None else uvarint_bytes(len(b) + 1) + b


def _scalar(ftype: str, v: Any) -> bytes:
    fixed = {"int8": ">b", "int16": ">h", "uint16": ">H", "int32": ">i", "int64": ">q",
             "float64": ">d"}
    if ftype in fixed:
        return struct.pack(fixed[ftype], v)
    if ftype == "bool":
        return b"\x01" if v else b"\x00"
    if ftype == "uuid":
        return base64.urlsafe_b64decode(v + "==")
    if ftype == "string":
        return _compact(None if v is None else v.encode("utf-8"))
    if ftype in ("bytes", "records"):
        return _compact(None if v is None else base64.b64decode(v))
    raise ValueError(ftype)


def _value(f: Field, v: Any, version: int) -> bytes:
    if f.type.startswith("[]"):
        if v is None:
            return b"\x00"
        inner = f.type[2:]
        items = [_struct(f.fields, x, version) if f.fields else _scalar(inner, x) for x in v]
        return uvarint_bytes(len(v) + 1) + b"".join(items)
    if f.fields:
        return _struct(f.fields, v, version)
    return _scalar(f.type, v)


def _default(f: Field) -> Any:
    """The value Kafka writes for a field the caller left out."""
    if f.default == "null":
        return None
    if f.type.startswith("[]"):
        return []
    if f.fields:
        return {}
    if f.type == "uuid":
        return "A" * 22  # Uuid.ZERO_UUID
    if f.type == "bool":
        return f.default == "true"
    if f.type in ("string", "bytes", "records"):
        return f.default or ""
    return float(f.default or 0) if f.type == "float64" else int(f.default or 0)


def _struct(fields: tuple[Field, ...], values: dict[str, Any], version: int) -> bytes:
    out, tagged = bytearray(), []
    for f in fields:
        if not f.versions.has(version):
            continue
        if f.tagged and f.tagged.has(version):
            if f.name in values:
                tagged.append((f.tag, _value(f, values[f.name], version)))
            continue
        v = values.get(f.name, _default(f))
        out += _value(f, v, version)
    out += uvarint_bytes(len(tagged))
    for tag, body in sorted(tagged, key=lambda t: t[0] or 0):
        out += uvarint_bytes(tag or 0) + uvarint_bytes(len(body)) + body
    return bytes(out)


def message_bytes(msg: Message, version: int, values: dict[str, Any]) -> bytes:
    return _struct(msg.fields, values, version)


def metadata_value(name: str, version: int, values: dict[str, Any], api_key: int | None = None,
                   frame: int = 1) -> bytes:
    """A metadata record's value: frame version, api key, version, then the message."""
    msg = next(m for m in R.BY_API_KEY.values() if m.name == name)
    key = msg.api_key if api_key is None else api_key
    return (uvarint_bytes(frame) + uvarint_bytes(key) + uvarint_bytes(version)
            + message_bytes(msg, version, values))


CONTROL_TYPES = {"ABORT": 0, "COMMIT": 1, "LeaderChangeMessage": 2,
                 "SnapshotHeaderRecord": 3, "SnapshotFooterRecord": 4}


def control(kind: str, values: dict[str, Any] | None = None) -> tuple[bytes, bytes]:
    """(key, value) of a control record."""
    key = struct.pack(">hh", 0, CONTROL_TYPES[kind])
    if kind in ("ABORT", "COMMIT"):
        return key, struct.pack(">hi", 0, (values or {}).get("coordinatorEpoch", 0))
    msg = {"LeaderChangeMessage": R.LEADER_CHANGE_MESSAGE,
           "SnapshotHeaderRecord": R.SNAPSHOT_HEADER_RECORD,
           "SnapshotFooterRecord": R.SNAPSHOT_FOOTER_RECORD}[kind]
    vals = {"version": 0, **(values or {})}
    return key, message_bytes(msg, vals["version"], vals)


def control_rec(kind: str, values: dict[str, Any] | None = None) -> Rec:
    key, value = control(kind, values)
    return Rec(value, key)


# -- batches -------------------------------------------------------------------------------

class Rec(NamedTuple):
    value: bytes | None
    key: bytes | None = None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    timestamp_delta: int = 0


def _bytes_field(b: bytes | None) -> bytes:
    return varint_bytes(-1) if b is None else varint_bytes(len(b)) + b


def record_bytes(rec: Rec, offset_delta: int) -> bytes:
    body = (b"\x00" + varint_bytes(rec.timestamp_delta) + varint_bytes(offset_delta)
            + _bytes_field(rec.key) + _bytes_field(rec.value) + varint_bytes(len(rec.headers))
            + b"".join(_bytes_field(k.encode()) + _bytes_field(v) for k, v in rec.headers))
    return varint_bytes(len(body)) + body


def _xerial(raw: bytes, block: int = 32 * 1024) -> bytes:
    out = bytearray(b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1))
    for i in range(0, len(raw), block):
        chunk = bytes(cramjam.snappy.compress_raw(raw[i:i + block]))
        out += struct.pack(">i", len(chunk)) + chunk
    return bytes(out)


def compress(codec: int, raw: bytes) -> bytes:
    if codec == GZIP:
        return gzip.compress(raw)
    if codec == SNAPPY:
        return _xerial(raw)
    if codec == LZ4:
        return bytes(cramjam.lz4.compress(raw))
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(raw))
    return raw


def batch_bytes(base_offset: int, records: Sequence[Rec], *, leader_epoch: int = 1,
                timestamp: int = 1_700_000_000_000, codec: int = NONE,
                transactional: bool = False, control_batch: bool = False,
                producer_id: int = -1) -> bytes:
    """One record batch v2, its CRC-32C computed over the attributes onwards."""
    raw = b"".join(record_bytes(r, i) for i, r in enumerate(records))
    attributes = codec | (0x10 if transactional else 0) | (0x20 if control_batch else 0)
    max_ts = timestamp + max((r.timestamp_delta for r in records), default=0)
    after_crc = struct.pack(">hiqqqhii", attributes, len(records) - 1, timestamp, max_ts,
                            producer_id, -1, -1, len(records)) + compress(codec, raw)
    crc = crc32c.crc32c(after_crc)
    length = 4 + 1 + 4 + len(after_crc)  # leader epoch, magic, crc, rest
    return struct.pack(">qiibI", base_offset, length, leader_epoch, 2, crc) + after_crc


def snapshot_bytes(batches: Sequence[bytes], end_offset: int, timestamp: int) -> bytes:
    """A `.checkpoint`: a SnapshotHeader batch, the batches, a SnapshotFooter batch."""
    header = batch_bytes(0, [control_rec("SnapshotHeaderRecord",
                                         {"lastContainedLogTimestamp": timestamp})],
                         control_batch=True, timestamp=timestamp)
    footer = batch_bytes(end_offset, [control_rec("SnapshotFooterRecord")],
                         control_batch=True, timestamp=timestamp)
    return header + b"".join(batches) + footer


# -- a day of a cluster's metadata log -----------------------------------------------------

def meta(name: str, values: dict[str, Any], version: int = 0) -> Rec:
    return Rec(metadata_value(name, version, values))


def topic_id(n: int) -> str:
    return base64.urlsafe_b64encode(bytes([n]) * 16).decode().rstrip("=")


class DayLog(NamedTuple):
    segments: list[tuple[str, bytes]]  # (file name, bytes), in offset order
    noops: int
    records: int  # every record, NoOps and control records included


def _setup(brokers: int, topics: int, partitions: int) -> list[list[Rec]]:
    out = [[meta("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 19})]]
    for b in range(1, brokers + 1):
        out.append([meta("RegisterBrokerRecord", {"brokerId": b, "brokerEpoch": b,
                                                  "incarnationId": topic_id(200 + b),
                                                  "rack": None}, 3)])
        out.append([meta("UnfenceBrokerRecord", {"id": b, "epoch": b})])
    for t in range(topics):
        batch = [meta("TopicRecord", {"name": f"topic-{t}", "topicId": topic_id(t)})]
        for p in range(partitions):
            replicas = [(p + i) % brokers + 1 for i in range(3)]
            batch.append(meta("PartitionRecord", {
                "partitionId": p, "topicId": topic_id(t), "replicas": replicas,
                "isr": replicas, "leader": replicas[0], "leaderEpoch": 0,
                "partitionEpoch": 0, "directories": [topic_id(250)] * 3}, 2))
        out.append(batch)
    return out


def _fence(broker: int, epoch: int, fence: bool, topics: int) -> list[Rec]:
    """ISR shrinks (or expansions) of the broker's partition 0 replicas, then the fence."""
    isr = [b for b in (1, 2, 3) if b != broker] if fence else [1, 2, 3]
    changes = [meta("PartitionChangeRecord", {"partitionId": 0, "topicId": topic_id(t),
                                              "isr": isr}, 2) for t in range(topics)]
    flag = {"brokerId": broker, "brokerEpoch": epoch, "fenced": 1 if fence else -1}
    return [*changes, meta("BrokerRegistrationChangeRecord", flag, 2)]


def day_log(start_ms: int = 1_700_000_000_000, seconds: int = 86_400, brokers: int = 3,
            topics: int = 20, partitions: int = 6, segments: int = 4) -> DayLog:
    """A day of a quorum leader's log: its LeaderChange, the brokers and topics, a NoOp every
    500 ms, a broker fenced and unfenced every 10 minutes, a committed metadata transaction
    every hour that spans a segment roll when one falls inside it."""
    batches: list[tuple[int, list[Rec], bool]] = [(start_ms, [control_rec(
        "LeaderChangeMessage", {"leaderId": 1, "voters": [{"voterId": 1}],
                                "grantingVoters": [{"voterId": 1}]})], True)]
    batches += [(start_ms, recs, False) for recs in _setup(brokers, topics, partitions)]
    for tick in range(seconds * 2):
        ts = start_ms + tick * 500
        batches.append((ts, [meta("NoOpRecord", {})], False))
        if tick % 1200 == 600:  # every 10 minutes
            broker = tick // 1200 % brokers + 1
            batches.append((ts, _fence(broker, broker, tick // 1200 % 2 == 0, topics), False))
        if tick % 7200 == 3600:  # every hour: a transaction of three batches
            batches.append((ts, [meta("BeginTransactionRecord", {"name": "hourly"})], False))
            batches.append((ts, [meta("ConfigRecord", {
                "resourceType": 2, "resourceName": "topic-0", "name": "retention.ms",
                "value": str(tick)})], False))
            batches.append((ts, [meta("EndTransactionRecord", {})], False))
    return _segments(batches, segments)


def _segments(batches: list[tuple[int, list[Rec], bool]], n: int) -> DayLog:
    per = -(-len(batches) // n)
    out: list[tuple[str, bytes]] = []
    offset, noops, records = 0, 0, 0
    for i in range(0, len(batches), per):
        name, chunk = f"{offset:020d}.log", bytearray()
        for ts, recs, is_control in batches[i:i + per]:
            chunk += batch_bytes(offset, recs, timestamp=ts, control_batch=is_control)
            offset += len(recs)
            records += len(recs)
            noops += sum(r.value is not None and r.value[1:2] == b"\x14" for r in recs)
        out.append((name, bytes(chunk)))
    return DayLog(out, noops, records)
