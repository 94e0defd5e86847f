"""The compression codecs of a record batch's records (`CompressionType`): none, gzip,
snappy, lz4, zstd, decompressed with `gzip` and cramjam.

Kafka's snappy is snappy-java's `SnappyOutputStream`, the xerial framing: an 8-byte magic
(`\\x82SNAPPY\\x00`), two int32 (version, compatible version), then blocks of an int32 length
and raw snappy. Its lz4 is the LZ4 frame format (`Lz4BlockOutputStream`, KIP-57 for v1+
batches), and zstd the standard zstd frame (`ZstdOutputStreamNoFinalizer`).
"""

from __future__ import annotations

import gzip
import struct

import cramjam

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = len(XERIAL_MAGIC) + 8


def _xerial(data: bytes) -> bytes:
    if not data.startswith(XERIAL_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(data))  # a raw snappy block
    out, pos = bytearray(), _XERIAL_HEADER
    while pos < len(data):
        if pos + 4 > len(data):
            raise ValueError("snappy block length cut")
        (n,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if n < 0 or pos + n > len(data):
            raise ValueError(f"snappy block of {n} bytes past the end")
        out += bytes(cramjam.snappy.decompress_raw(data[pos:pos + n]))
        pos += n
    return bytes(out)


def decompress(codec: int, data: bytes) -> bytes:
    """The records section of a batch, decompressed; ValueError on anything wrong."""
    try:
        if codec == NONE:
            return data
        if codec == GZIP:
            return gzip.decompress(data)
        if codec == SNAPPY:
            return _xerial(data)
        if codec == LZ4:
            return bytes(cramjam.lz4.decompress(data))
        if codec == ZSTD:
            return bytes(cramjam.zstd.decompress(data))
    except (OSError, EOFError, cramjam.DecompressionError) as e:
        raise ValueError(f"{NAMES[codec]}: {e}") from e
    raise ValueError(f"compression codec {codec}")
