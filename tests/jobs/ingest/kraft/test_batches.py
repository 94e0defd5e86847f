"""Record batches v2 written by the test encoder in the exact wire format, read back:
header fields, every codec, transactional and control batches, headers, and a corrupt or
truncated batch reported rather than raised."""

from __future__ import annotations

import struct

import cramjam
import crc32c
import pytest

from jobs.ingest.kraft.batches import Batch, Corrupt, read_batches
from jobs.ingest.kraft.codecs import SNAPPY, ZSTD, decompress
from jobs.ingest.kraft.wire import Reader, uvarint_bytes, varint_bytes
from jobs.sim.kraft_encoder import CODECS, Rec, batch_bytes

CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")


def _only(data: bytes) -> tuple[Batch, list]:
    items = list(read_batches(data))
    assert len(items) == 1 and not isinstance(items[0], Corrupt), items
    return items[0]


def test_header_fields_sit_where_defaultrecordbatch_puts_them() -> None:
    data = batch_bytes(42, [Rec(b"a"), Rec(b"b", timestamp_delta=7)], leader_epoch=9,
                       timestamp=1_000, producer_id=5)
    # Offsets of DefaultRecordBatch: magic at 16, attributes at 21, record count at 57.
    assert data[16] == 2
    assert struct.unpack_from(">q", data, 0)[0] == 42
    assert struct.unpack_from(">i", data, 57)[0] == 2
    batch, recs = _only(data)
    assert (batch.base_offset, batch.leader_epoch, batch.last_offset_delta,
            batch.base_timestamp, batch.max_timestamp, batch.producer_id,
            batch.record_count) == (42, 9, 1, 1_000, 1_007, 5, 2)
    assert batch.length == len(data) - 12
    assert [(r.offset, r.timestamp, r.value) for r in recs] == [(42, 1_000, b"a"),
                                                                 (43, 1_007, b"b")]


@pytest.mark.parametrize("codec", CODECS, ids=CODEC_NAMES)
def test_every_codec_round_trips(codec: int) -> None:
    values = [bytes([i % 251]) * (i * 37 % 900) for i in range(200)]  # ~90 kB: many blocks
    batch, recs = _only(batch_bytes(0, [Rec(v) for v in values], codec=codec))
    assert batch.compression == CODEC_NAMES[codec]
    assert [r.value for r in recs] == values
    assert [r.offset for r in recs] == list(range(200))


def test_transactional_and_control_flags_keys_and_headers() -> None:
    rec = Rec(None, key=b"\x00\x00\x00\x01", headers=(("h1", b"v"), ("h2", None)))
    batch, recs = _only(batch_bytes(3, [rec], transactional=True, control_batch=True))
    assert batch.transactional and batch.control
    assert recs[0].key == b"\x00\x00\x00\x01" and recs[0].value is None
    assert recs[0].headers == (("h1", b"v"), ("h2", None))


def test_a_bad_crc_is_reported_and_the_next_batch_still_read() -> None:
    first = bytearray(batch_bytes(0, [Rec(b"x")]))
    first[-1] ^= 0xFF  # the record's last byte
    items = list(read_batches(bytes(first) + batch_bytes(1, [Rec(b"y")])))
    assert isinstance(items[0], Corrupt) and not items[0].fatal
    assert "CRC-32C mismatch" in items[0].reason and items[0].base_offset == 0
    assert not isinstance(items[1], Corrupt) and items[1][1][0].value == b"y"


def test_a_truncated_batch_ends_the_input_with_its_reason() -> None:
    whole = batch_bytes(0, [Rec(b"x")]) + batch_bytes(1, [Rec(b"y" * 50)])
    items = list(read_batches(whole[:-10]))
    assert not isinstance(items[0], Corrupt)
    assert isinstance(items[1], Corrupt) and items[1].fatal
    assert items[1].reason.startswith("truncated") and items[1].base_offset == 1
    tail = list(read_batches(whole[:20]))
    assert len(tail) == 1 and isinstance(tail[0], Corrupt) and tail[0].fatal


def test_records_that_overrun_their_batch_are_a_corrupt_batch() -> None:
    data = bytearray(batch_bytes(0, [Rec(b"x")]))
    struct.pack_into(">i", data, 57, 3)  # claims 3 records, holds 1; CRC made good again
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    (item,) = read_batches(bytes(data))
    assert isinstance(item, Corrupt) and item.reason.startswith("records:")


@pytest.mark.parametrize("value", [0, 1, -1, 63, -64, 64, 2**31 - 1, -(2**31), 2**62, -(2**63)])
def test_zigzag_varints_read_back(value: int) -> None:
    assert Reader(varint_bytes(value)).varint() == value


def test_unsigned_varint_of_300_is_kafkas_two_bytes() -> None:
    assert uvarint_bytes(300) == b"\xac\x02"
    assert Reader(b"\xac\x02").uvarint() == 300


@pytest.mark.parametrize("codec,magic", [(1, b"\x1f\x8b"), (2, b"\x82SNAPPY\x00"),
                                         (3, b"\x04\x22\x4d\x18"), (4, b"\x28\xb5\x2f\xfd")],
                         ids=CODEC_NAMES[1:])
def test_the_encoder_writes_kafkas_framings(codec: int, magic: bytes) -> None:
    # gzip; snappy-java's xerial stream; the LZ4 frame (magic 0x184D2204, little-endian);
    # the zstd frame (0xFD2FB528).
    data = batch_bytes(0, [Rec(b"v" * 100)], codec=codec)
    assert data[61:61 + len(magic)] == magic


def test_a_streamed_zstd_frame_without_its_content_size_is_read() -> None:
    # zstd-jni's ZstdOutputStream does not know the size up front: the frame header
    # descriptor (the byte after the magic) says no content size.
    c = cramjam.zstd.Compressor()
    c.compress(b"kraft" * 1000)
    frame = bytes(c.finish())
    assert frame[4] & 0xE0 == 0  # Frame_Content_Size_flag 0, Single_Segment_flag 0
    assert decompress(ZSTD, frame) == b"kraft" * 1000


def test_raw_snappy_without_the_xerial_header_is_read_too() -> None:
    assert decompress(SNAPPY, bytes(cramjam.snappy.compress_raw(b"x" * 500))) == b"x" * 500
