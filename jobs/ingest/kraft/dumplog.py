"""The text of `kafka-dump-log.sh --cluster-metadata-decoder` (`kafka.tools.DumpLogSegments`,
3.0 to 4.x), read back into the records it prints.

Per batch one line of `key: value` pairs (`baseOffset: 7 lastOffset: 8 count: 2 ...
partitionLeaderEpoch: 2 isTransactional: false isControl: false [deleteHorizonMs: ..]
position: 701 CreateTime: 1614382712158 size: 159 magic: 2 compresscodec: NONE crc: ..
isvalid: true`), then one line per record: `| offset: 7 CreateTime: .. keySize: -1 valueSize:
.. sequence: -1 headerKeys: [] payload: {"type":"TOPIC_RECORD","version":0,"data":{..}}`, or
with `--skip-record-metadata` only ` payload: {..}` (the offset is then the batch's base
offset plus the record's place in it, the time the batch's). A control batch's records print
`endTxnMarker: COMMIT coordinatorEpoch: 0`, `SnapshotHeader {..}` / `SnapshotFooter {..}`
(3.3+), `KRaftVersion {..}` / `KRaftVoters {..}` (3.9+) or `controlType: LEADER_CHANGE(2)`
(the leader itself is not printed), and nothing at all with `--skip-record-metadata` (an empty
line: `ControlRecord`). A record the decoder failed on prints `Error at N, skipping. ..`.
`Dumping FILE`, `Starting offset:` (3.0-3.2) / `Log starting offset:`, `Snapshot end
offset:` and `KRaft bootstrap snapshot` lines frame the files. Record lines pasted without
their batch lines are records too (`_without_batch`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from jobs.ingest.kraft import records as R
from jobs.ingest.kraft.framing import END_TXN_MARKER, UNKNOWN, Decoded
from jobs.ingest.kraft.make_records import constant
from jobs.ingest.kraft.rows import Entry
from jobs.ingest.kraft.schema import Value

_PAIR = re.compile(r"(\w+): (\S+)")
_CONTROL_JSON = re.compile(r"\b(SnapshotHeader|SnapshotFooter|KRaftVersion|KRaftVoters) (\{.*\})")
_CONTROL_NAMES = {"SnapshotHeader": "SnapshotHeaderRecord",
                  "SnapshotFooter": "SnapshotFooterRecord",
                  "KRaftVersion": "KRaftVersionRecord", "KRaftVoters": "VotersRecord"}
_CONTROL_TYPES = {"LEADER_CHANGE": "LeaderChangeMessage",
                  "SNAPSHOT_HEADER": "SnapshotHeaderRecord",
                  "SNAPSHOT_FOOTER": "SnapshotFooterRecord",
                  "KRAFT_VERSION": "KRaftVersionRecord", "KRAFT_VOTERS": "VotersRecord"}
CONTROL_RECORD = "ControlRecord"  # a control record printed without its kind
# What a control record's line prints where a metadata record's prints its payload.
_CONTROL_MARK = re.compile(r"\b((endTxnMarker|controlType): |(SnapshotHeader|SnapshotFooter|"
                           r"KRaftVersion|KRaftVoters) \{)")
# `type` as printed (MetadataRecordType's name) -> (schema name, api key).
TYPES = {constant(m.name): (m.name, key) for key, m in R.BY_API_KEY.items()}
FRAMING = ("Dumping ", "Starting offset:", "Log starting offset:", "Snapshot end offset:",
           "KRaft bootstrap snapshot")


class TextBatch(NamedTuple):
    base_offset: int
    leader_epoch: int | None
    timestamp_ms: int | None
    control: bool
    record_count: int | None


class Line(NamedTuple):
    number: int  # 1-based
    entry: Entry | None  # a record
    batch: TextBatch | None  # a batch line
    problem: str | None  # a line that is neither (kept for the summary)


def looks_like(lines: Iterable[str]) -> bool:
    """Whether the first lines of a text are `kafka-dump-log` output."""
    return any(x.startswith(FRAMING) or x.startswith(("baseOffset: ", "| offset: "))
               for x in lines)


def _int(pairs: dict[str, str], key: str) -> int | None:
    v = pairs.get(key)
    return int(v) if v is not None and re.fullmatch(r"-?\d+", v) else None


def _batch(text: str) -> TextBatch:
    pairs = dict(_PAIR.findall(text))
    ts = _int(pairs, "CreateTime")
    return TextBatch(_int(pairs, "baseOffset") or 0, _int(pairs, "partitionLeaderEpoch"),
                     ts if ts is not None else _int(pairs, "LogAppendTime"),
                     pairs.get("isControl") == "true", _int(pairs, "count"))


def _payload(text: str) -> Decoded:
    if text.startswith("Error at"):
        return Decoded(UNKNOWN, None, None, None, text)
    try:
        obj = json.loads(text)
        name, key = TYPES.get(obj["type"], (None, None))
        if name is None:
            return Decoded(UNKNOWN, None, obj.get("version"), None, f"type {obj['type']}")
        data: dict[str, Value] = obj["data"]
        return Decoded(name, key, obj["version"], data, None)
    except (ValueError, KeyError, TypeError) as e:
        return Decoded(UNKNOWN, None, None, None, f"payload: {e}")


def _control(text: str) -> Decoded:
    if m := _CONTROL_JSON.search(text):
        data: dict[str, Value] = json.loads(m.group(2))
        version = data.get("version")
        return Decoded(_CONTROL_NAMES[m.group(1)], None,
                       version if isinstance(version, int) else None, data, None)
    if m := re.search(r"endTxnMarker: (\w+) coordinatorEpoch: (-?\d+)", text):
        return Decoded(END_TXN_MARKER, None, None,
                       {"controlType": m.group(1), "coordinatorEpoch": int(m.group(2))}, None)
    if m := re.search(r"controlType: (\w+)\((-?\d+)\)", text):
        name = _CONTROL_TYPES.get(m.group(1))
        return Decoded(name or UNKNOWN, None, None, None,
                       "not printed by kafka-dump-log" if name else f"control type {m.group(0)}")
    return Decoded(CONTROL_RECORD, None, None, None, "kind not printed by kafka-dump-log")


def _record(text: str, batch: TextBatch, index: int) -> Entry:
    head, _, payload = text.partition("payload: ")
    pairs = dict(_PAIR.findall(head))
    offset = _int(pairs, "offset")
    ts = _int(pairs, "CreateTime")
    decoded = _control(head) if batch.control else _payload(payload.strip())
    return Entry(batch.base_offset + index if offset is None else offset, batch.base_offset,
                 batch.leader_epoch, batch.timestamp_ms if ts is None else ts, batch.control,
                 decoded)


def _without_batch(text: str, before: Entry | None) -> Entry | None:
    """A record line whose batch line is not in the text (a dump pasted into an issue or a
    post often keeps only `| offset: N CreateTime: T ... payload: {..}`): the line gives
    its offset and time, not its batch's quorum epoch. A control record is told by what
    `DumpLogSegments` prints for one instead of a payload. Its batch is inferred: the
    record line `before` it, of the same kind, at the offset just below and the same
    CreateTime, is of its batch (the raft `BatchBuilder` writes every record of a batch
    with the batch's append time, timestamp delta 0); else it opens one. Two batches
    appended in the same millisecond read as one. None when the line has no offset."""
    head, _, payload = text.partition("payload: ")
    pairs = dict(_PAIR.findall(head))
    offset = _int(pairs, "offset")
    if offset is None:
        return None
    ts = _int(pairs, "CreateTime")
    ts = ts if ts is not None else _int(pairs, "LogAppendTime")
    control = not payload and bool(_CONTROL_MARK.search(head))
    decoded = _control(head) if control else _payload(payload.strip())
    base = offset
    if (before is not None and before.offset == offset - 1 and before.timestamp_ms == ts
            and before.control == control and before.batch_base_offset is not None):
        base = before.batch_base_offset
    return Entry(offset, base, None, ts, control, decoded)


def read_lines(lines: Iterable[str]) -> Iterator[Line]:
    """Every batch and record line of a dump, in order; other lines as problems, except the
    framing lines and empty lines between batches. Record lines before any batch line are
    records too (`_without_batch`)."""
    batch: TextBatch | None = None
    index = 0
    alone: Entry | None = None  # the last record line read without a batch line
    for n, raw in enumerate(lines, 1):
        text = raw.rstrip("\r\n")
        stripped = text.strip()
        if stripped.startswith("baseOffset: "):
            batch, index = _batch(stripped), 0
            yield Line(n, None, batch, None)
        elif batch is None and stripped.startswith(("| offset: ", "offset: ")):
            alone = _without_batch(stripped, alone)
            yield (Line(n, alone, None, None) if alone is not None
                   else Line(n, None, None, "a record line without its offset"))
        elif batch is not None and (stripped.startswith(("|", "payload: ", "offset: "))
                                    or (not stripped and batch.control)):
            if batch.record_count is not None and index >= batch.record_count:
                if not stripped:
                    continue  # the blank line after a batch's records
                yield Line(n, None, None, f"record {index + 1} of a batch of {batch.record_count}")
            yield Line(n, _record(stripped, batch, index), None, None)
            index += 1
        elif stripped.startswith("Found ") and "invalid bytes" in stripped:
            yield Line(n, None, None, stripped)  # the tool's word for a truncated file
        elif stripped and not stripped.startswith(FRAMING):
            yield Line(n, None, None, "not a kafka-dump-log line")
