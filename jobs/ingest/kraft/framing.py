"""A metadata record's value: the ApiMessageAndVersion framing of
`org.apache.kafka.server.common.serialization.AbstractApiMessageSerde` (frame version 1,
api key and record version as unsigned varints, then the record), and the control records
of a control batch (`ControlRecordType`: a key of version and type as two int16, a value
that is the message itself, or for a transaction marker `EndTransactionMarker`'s version
and coordinator epoch)."""

from __future__ import annotations

from typing import NamedTuple

from jobs.ingest.kraft import records as R
from jobs.ingest.kraft.legacy import LEGACY
from jobs.ingest.kraft.schema import Message, Value, decode
from jobs.ingest.kraft.wire import Reader

FRAME_VERSION = 1
UNKNOWN = "unknown"

# ControlRecordType id -> the message its value holds (ABORT and COMMIT: EndTxnMarker).
CONTROL_MESSAGES: dict[int, Message] = {
    2: R.LEADER_CHANGE_MESSAGE, 3: R.SNAPSHOT_HEADER_RECORD, 4: R.SNAPSHOT_FOOTER_RECORD,
    5: R.KRAFT_VERSION_RECORD, 6: R.VOTERS_RECORD,
}
END_TXN_MARKER = "EndTxnMarker"
TXN_MARKERS = {0: "ABORT", 1: "COMMIT"}


class Decoded(NamedTuple):
    record_type: str  # the schema's name (`PartitionChangeRecord`), or `unknown`
    api_key: int | None  # metadata records only
    version: int | None
    fields: dict[str, Value] | None
    problem: str | None  # why the record is `unknown`


def _unknown(api_key: int | None, version: int | None, why: str) -> Decoded:
    return Decoded(UNKNOWN, api_key, version, None, why)


def _read(msg: Message, version: int, value: bytes, at: int) -> dict[str, Value]:
    return decode(msg, version, Reader(value, at))


def metadata_record(value: bytes | None) -> Decoded:
    if value is None:
        return _unknown(None, None, "record without a value")
    r = Reader(value)
    try:
        frame, api_key, version = r.uvarint(), r.uvarint(), r.uvarint()
    except ValueError as e:
        return _unknown(None, None, f"framing: {e}")
    if frame != FRAME_VERSION:
        return _unknown(api_key, version, f"frame version {frame}")
    msg = R.BY_API_KEY.get(api_key)
    if msg is None:
        return _unknown(api_key, version, f"api key {api_key}")
    if not msg.versions.has(version):
        return _unknown(api_key, version, f"{msg.name} version {version}")
    try:
        return Decoded(msg.name, api_key, version, _read(msg, version, value, r.pos), None)
    except (ValueError, UnicodeDecodeError) as e:
        for old in LEGACY.get(api_key, ()):
            try:
                return Decoded(msg.name, api_key, version, _read(old, version, value, r.pos),
                               None)
            except (ValueError, UnicodeDecodeError):
                pass
        return _unknown(api_key, version, f"{msg.name} v{version}: {e}")


def control_record(key: bytes | None, value: bytes | None) -> Decoded:
    if key is None or len(key) < 4:
        return _unknown(None, None, "control record without its type")
    ctype = Reader(key, 2).int16()
    if value is None:
        return _unknown(None, None, f"control record type {ctype} without a value")
    try:
        if ctype in TXN_MARKERS:
            r = Reader(value)
            version, epoch = r.int16(), r.int32()
            return Decoded(END_TXN_MARKER, None, version,
                           {"controlType": TXN_MARKERS[ctype], "coordinatorEpoch": epoch}, None)
        msg = CONTROL_MESSAGES.get(ctype)
        if msg is None:
            return _unknown(None, None, f"control record type {ctype}")
        version = Reader(value).int16()  # every control message starts with its version
        if not msg.versions.has(version):
            return _unknown(None, version, f"{msg.name} version {version}")
        return Decoded(msg.name, None, version, _read(msg, version, value, 0), None)
    except (ValueError, UnicodeDecodeError) as e:
        return _unknown(None, None, f"control record type {ctype}: {e}")
