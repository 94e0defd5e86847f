"""Metadata records decoded from their schemas: bytes written by hand from the wire format
for the records a replay reads (PartitionChangeRecord's tagged fields, its leader -2, the
ELR of version 2; LeaderChangeMessage), every record type and version round-tripped through
the test encoder, the FeatureLevelRecord of 3.0-3.2, and what is unknown."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from jobs.ingest.kraft import records as R
from jobs.ingest.kraft.framing import UNKNOWN, control_record, metadata_record
from jobs.ingest.kraft.rows import typed
from jobs.ingest.kraft.schema import Field, Message
from jobs.ingest.kraft.wire import uuid_text
from jobs.sim.kraft_encoder import control, metadata_value

TOPIC_ID = bytes(range(16))


def _i32s(*xs: int) -> bytes:
    return bytes([len(xs) + 1]) + b"".join(struct.pack(">i", x) for x in xs)


def _tag(tag: int, body: bytes) -> bytes:
    return bytes([tag, len(body)]) + body


def _change(version: int, *tags: bytes) -> bytes:
    # frame 1, api key 5, version; partitionId, topicId; the tagged fields.
    return (bytes([1, 5, version]) + struct.pack(">i", 3) + TOPIC_ID + bytes([len(tags)])
            + b"".join(tags))


def test_partition_change_by_hand_carries_only_what_changed() -> None:
    d = metadata_record(_change(0, _tag(0, _i32s(1, 2)), _tag(1, struct.pack(">i", 2))))
    assert (d.record_type, d.api_key, d.version, d.problem) == (
        "PartitionChangeRecord", 5, 0, None)
    assert d.fields == {"partitionId": 3, "topicId": uuid_text(TOPIC_ID), "isr": [1, 2],
                        "leader": 2}
    cols = typed(d.record_type, d.fields)
    assert (cols["partition"], cols["leader"], cols["isr"], cols["replicas"]) == (
        3, 2, [1, 2], None)


def test_partition_change_without_a_leader_means_no_change() -> None:
    d = metadata_record(_change(0, _tag(0, _i32s(1))))
    assert d.fields is not None and "leader" not in d.fields
    assert typed(d.record_type, d.fields)["leader"] == -2  # -2: the leader did not change


def test_partition_change_v2_carries_the_eligible_leader_replicas() -> None:
    d = metadata_record(_change(2, _tag(0, _i32s(3)), _tag(1, struct.pack(">i", -1)),
                                _tag(6, _i32s(1, 2)), _tag(7, _i32s())))
    assert d.fields is not None
    cols = typed(d.record_type, d.fields)
    assert (cols["leader"], cols["isr"], cols["elr"], cols["last_known_elr"]) == (
        -1, [3], [1, 2], [])


def test_elr_tags_are_not_read_in_version_0() -> None:
    # Tags 6 and 7 exist from version 2 (3.7): an older record's unknown tags are skipped.
    d = metadata_record(_change(0, _tag(6, _i32s(1, 2))))
    assert d.fields == {"partitionId": 3, "topicId": uuid_text(TOPIC_ID)}


def test_leader_change_message_by_hand() -> None:
    voter = struct.pack(">i", 1) + b"\x00"  # voterId, no tagged fields
    value = struct.pack(">hi", 0, 1) + b"\x02" + voter + b"\x02" + voter + b"\x00"
    d = control_record(struct.pack(">hh", 0, 2), value)
    assert d.record_type == "LeaderChangeMessage"
    assert d.fields == {"version": 0, "leaderId": 1, "voters": [{"voterId": 1}],
                        "grantingVoters": [{"voterId": 1}]}
    assert typed(d.record_type, d.fields)["broker_id"] == 1


@pytest.mark.parametrize("kind", ["ABORT", "COMMIT"])
def test_transaction_markers(kind: str) -> None:
    d = control_record(*control(kind, {"coordinatorEpoch": 4}))
    assert (d.record_type, d.fields) == ("EndTxnMarker",
                                         {"controlType": kind, "coordinatorEpoch": 4})


def test_snapshot_header_and_footer() -> None:
    h = control_record(*control("SnapshotHeaderRecord", {"lastContainedLogTimestamp": 77}))
    f = control_record(*control("SnapshotFooterRecord"))
    assert (h.record_type, h.fields) == ("SnapshotHeaderRecord",
                                         {"version": 0, "lastContainedLogTimestamp": 77})
    assert f.record_type == "SnapshotFooterRecord"


def _sample(f: Field, version: int, i: int) -> Any:
    """A value of every field type, different per field."""
    if f.type.startswith("[]"):
        inner = Field(f.name, f.type[2:], f.versions, None, None, None, None, f.fields)
        return [_sample(inner, version, i), _sample(inner, version, i + 1)]
    if f.fields:
        return {c.name: _sample(c, version, i + n) for n, c in enumerate(f.fields)
                if c.versions.has(version)}
    return {"bool": i % 2 == 1, "uuid": uuid_text(bytes([i % 256]) * 16), "string": f"s{i}",
            "bytes": "AAEC", "float64": i + 0.5, "uint16": 65_000 + i,
            "int8": i % 100}.get(f.type, i)


def _all_versions() -> list[tuple[Message, int]]:
    return [(m, v) for m in R.BY_API_KEY.values()
            for v in range(m.versions.low, (m.versions.high or m.versions.low) + 1)]


@pytest.mark.parametrize("msg,version", _all_versions(),
                         ids=[f"{m.name}-v{v}" for m, v in _all_versions()])
def test_every_record_type_and_version_round_trips(msg: Message, version: int) -> None:
    values = {f.name: _sample(f, version, n) for n, f in enumerate(msg.fields)
              if f.versions.has(version)}
    d = metadata_record(metadata_value(msg.name, version, values))
    assert (d.record_type, d.version, d.problem) == (msg.name, version, None)
    assert d.fields == values


def test_feature_level_record_of_3_0_to_3_2() -> None:
    name = b"metadata.version"
    old = bytes([1, 12, 0, len(name) + 1]) + name + struct.pack(">hh", 1, 5) + b"\x00"
    d = metadata_record(old)
    assert d.fields == {"name": "metadata.version", "minFeatureLevel": 1, "maxFeatureLevel": 5}
    new = metadata_value("FeatureLevelRecord", 0, {"name": "metadata.version",
                                                   "featureLevel": 14})
    assert metadata_record(new).fields == {"name": "metadata.version", "featureLevel": 14}


@pytest.mark.parametrize("value,problem", [
    (bytes([1, 99, 0]), "api key 99"),
    (bytes([1, 5, 9]) + b"\x00" * 21, "PartitionChangeRecord version 9"),
    (bytes([2, 5, 0]), "frame version 2"),
    (bytes([1, 5, 0, 0, 0]), "PartitionChangeRecord v0: "),
    (b"\x81", "framing: "),
])
def test_unknown_types_versions_and_bad_bytes_are_unknown(value: bytes, problem: str) -> None:
    d = metadata_record(value)
    assert d.record_type == UNKNOWN and d.problem is not None
    assert d.problem.startswith(problem)
