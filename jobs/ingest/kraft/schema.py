"""Kafka's message schemas in a compact form, and the one decoder that reads any of them.

A message (a metadata record, a control record's value) is described as its fields, each
one line of text as Kafka's schema JSON gives it (`records.py` holds them):

    "name type versions [null:V] [tag:N@V] [=default]"

`name` is the field's JSON name (Kafka's, first letter lower case, as `kafka-dump-log`
prints it), `type` one of Kafka's (`int32`, `uuid`, `[]int32`, `[]Endpoint`, ...), `versions`
`0+`, `1-2` or `0`; `null:V` the versions where it may be null, `tag:N@V` a tagged field (tag
N, in versions V); `=default` its default (`null`, a number, `true`). A struct or an array of
structs comes as `(line, (field lines...))`.

Decoding follows Kafka's flexible versions (KIP-482, every metadata record's versions are
flexible): compact strings, bytes and arrays (length + 1 as an unsigned varint, 0 = null),
then per struct the tagged fields (count, then tag, size and value each). A tagged field
absent from the bytes is absent from the result: Kafka writes a tagged field only when it
differs from its default (`PartitionChangeRecord`'s `leader` -2, no change).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from functools import cache
from typing import NamedTuple

from jobs.ingest.kraft.wire import Reader

FieldSpec = str | tuple[str, tuple["FieldSpec", ...]]
Value = object


class Versions(NamedTuple):
    low: int
    high: int | None  # None: and every later version

    def has(self, v: int) -> bool:
        return self.low <= v and (self.high is None or v <= self.high)

    @classmethod
    def parse(cls, text: str) -> Versions:
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        low, _, high = text.partition("-")
        return cls(int(low), int(high or low))


class Field(NamedTuple):
    name: str
    type: str
    versions: Versions
    nullable: Versions | None
    tag: int | None
    tagged: Versions | None
    default: str | None
    fields: tuple[Field, ...]  # of a struct or an array of structs


class Message(NamedTuple):
    api_key: int  # -1 for the control records' messages, which have none
    name: str
    versions: Versions
    fields: tuple[Field, ...]


def field(spec: FieldSpec) -> Field:
    line, children = (spec, ()) if isinstance(spec, str) else spec
    name, ftype, versions, *rest = line.split()
    nullable = tagged = None
    tag = default = None
    for word in rest:
        if word.startswith("null:"):
            nullable = Versions.parse(word[5:])
        elif word.startswith("tag:"):
            n, _, v = word[4:].partition("@")
            tag, tagged = int(n), Versions.parse(v)
        elif word.startswith("="):
            default = word[1:]
        else:
            raise ValueError(f"{line!r}: unknown attribute {word!r}")
    return Field(name, ftype, Versions.parse(versions), nullable, tag, tagged, default,
                 tuple(field(c) for c in children))


def message(api_key: int, name: str, versions: str, *specs: FieldSpec) -> Message:
    return Message(api_key, name, Versions.parse(versions), tuple(field(s) for s in specs))


# -- decoding ------------------------------------------------------------------------------

Read = Callable[[Reader], Value]

_SCALARS: dict[str, Read] = {
    "int8": Reader.int8, "int16": Reader.int16, "uint16": Reader.uint16,
    "int32": Reader.int32, "int64": Reader.int64, "float64": Reader.float64,
    "uuid": Reader.uuid, "bool": lambda r: r.int8() != 0,
    "string": lambda r: _compact(r, lambda b: b.decode("utf-8")),
    "bytes": lambda r: _compact(r, lambda b: base64.b64encode(b).decode("ascii")),
    "records": lambda r: _compact(r, lambda b: base64.b64encode(b).decode("ascii")),
}


def _compact(r: Reader, convert: Callable[[bytes], str]) -> str | None:
    n = r.uvarint()
    return None if n == 0 else convert(r.take(n - 1))


def _array(item: Read) -> Read:
    def read(r: Reader) -> list[Value] | None:
        n = r.uvarint()
        if n == 0:
            return None
        if n - 1 > r.remaining():  # every element takes at least one byte
            raise ValueError(f"array of {n - 1} in {r.remaining()} bytes")
        return [item(r) for _ in range(n - 1)]
    return read


def _reader(f: Field, version: int) -> Read:
    if f.type.startswith("[]"):
        inner = f.type[2:]
        return _array(_SCALARS[inner] if inner in _SCALARS else _struct(f.fields, version))
    if f.type in _SCALARS:
        return _SCALARS[f.type]
    return _struct(f.fields, version)  # a struct field: present (Kafka writes it whole)


def _struct(fields: tuple[Field, ...], version: int) -> Callable[[Reader], dict[str, Value]]:
    plain = [(f.name, _reader(f, version)) for f in fields
             if f.versions.has(version) and not (f.tagged and f.tagged.has(version))]
    tagged = {f.tag: (f.name, _reader(f, version)) for f in fields
              if f.versions.has(version) and f.tagged and f.tagged.has(version)}

    def read(r: Reader) -> dict[str, Value]:
        out: dict[str, Value] = {name: rd(r) for name, rd in plain}
        for _ in range(r.uvarint()):
            tag, size = r.uvarint(), r.uvarint()
            body = r.take(size)
            if tag in tagged:
                name, rd = tagged[tag]
                sub = Reader(body)
                out[name] = rd(sub)
            # an unknown tag is skipped, as Kafka keeps it only as raw bytes
        return out
    return read


@cache
def _decoder(msg: Message, version: int) -> Callable[[Reader], dict[str, Value]]:
    return _struct(msg.fields, version)


def decode(msg: Message, version: int, r: Reader) -> dict[str, Value]:
    """The fields of `msg` at `version` read from `r` (which must hold nothing after it)."""
    out = _decoder(msg, version)(r)
    if r.remaining():
        raise ValueError(f"{r.remaining()} bytes left after {msg.name} v{version}")
    return out
