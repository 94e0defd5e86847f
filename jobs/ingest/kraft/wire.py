"""Reading Kafka's wire primitives from bytes (`org.apache.kafka.common.utils.ByteUtils`,
`org.apache.kafka.common.protocol.Readable`): big-endian fixed-width integers, unsigned
varints (the flexible versions' lengths and tags) and zigzag varints / varlongs (the fields
of a record inside a batch)."""

from __future__ import annotations

import base64
import struct

_I8, _I16, _U16 = struct.Struct(">b"), struct.Struct(">h"), struct.Struct(">H")
_I32, _U32, _I64 = struct.Struct(">i"), struct.Struct(">I"), struct.Struct(">q")
_F64 = struct.Struct(">d")


class Truncated(ValueError):
    """The bytes end before the value does."""


class Reader:
    """A cursor over `data[pos:end]`; every read raises `Truncated` past `end`."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise Truncated(f"{n} bytes wanted at position {self.pos}, {self.remaining()} left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def _fixed(self, s: struct.Struct) -> int:
        if self.pos + s.size > self.end:
            raise Truncated(f"{s.size} bytes wanted at position {self.pos}")
        (v,) = s.unpack_from(self.data, self.pos)
        self.pos += s.size
        return int(v)

    def int8(self) -> int:
        return self._fixed(_I8)

    def int16(self) -> int:
        return self._fixed(_I16)

    def uint16(self) -> int:
        return self._fixed(_U16)

    def int32(self) -> int:
        return self._fixed(_I32)

    def uint32(self) -> int:
        return self._fixed(_U32)

    def int64(self) -> int:
        return self._fixed(_I64)

    def float64(self) -> float:
        if self.pos + 8 > self.end:
            raise Truncated(f"8 bytes wanted at position {self.pos}")
        (v,) = _F64.unpack_from(self.data, self.pos)
        self.pos += 8
        return float(v)

    def uvarint(self) -> int:
        """Unsigned LEB128, at most 10 bytes (`ByteUtils.readUnsignedVarint/Varlong`)."""
        pos = self.pos
        if pos < self.end and self.data[pos] < 0x80:  # one byte: most lengths and tags
            self.pos = pos + 1
            return self.data[pos]
        value, shift, data = 0, 0, self.data
        while True:
            if pos >= self.end:
                raise Truncated(f"varint cut at position {pos}")
            b = data[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                self.pos = pos
                return value
            shift += 7
            if shift > 63:
                raise ValueError(f"varint longer than 10 bytes at position {self.pos}")

    def varint(self) -> int:
        """Zigzag-encoded signed varint or varlong (`ByteUtils.readVarint/readVarlong`)."""
        u = self.uvarint()
        return (u >> 1) ^ -(u & 1)

    def uuid(self) -> str:
        return uuid_text(self.take(16))


def uuid_text(raw: bytes) -> str:
    """Kafka's `Uuid.toString()`: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def uvarint_bytes(value: int) -> bytes:
    """The unsigned varint of `value` (what the decoders read back)."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def varint_bytes(value: int) -> bytes:
    """The zigzag varint of a signed 64-bit `value`."""
    return uvarint_bytes(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)
