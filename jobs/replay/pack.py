"""Pack the keyed event rows of each input batch into one row per group, before the
stateful operator (a stateless `mapInArrow`, so it runs on the stream).

`applyInPandasWithState` moves every input row through its own per-row state machinery
and a pandas conversion; measured on a 200k-event log, that path alone cost about as much
as the core's fold. Packed, the operator sees a few rows per (group, input partition)
whose `payload` is the group's rows as an Arrow IPC stream cut from the input batch by
Arrow itself: a row becomes Python objects once, in the group that folds it (`unpack`),
instead of once to be pickled here and again when unpickled there.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from schemas.arrow import arrow_schema
from schemas.state import LIST_COLUMNS, PACKED_SCHEMA, ROW_COLUMNS
from statemachine.replay import gc_paused

PACKED_ARROW = arrow_schema(PACKED_SCHEMA)

Row = tuple[Any, ...]  # (reason, *event fields): ROW_COLUMNS


class PackKey(NamedTuple):
    cluster: str
    bucket: int
    wake: bool


def parse_list(text: str | None) -> tuple[int | None, ...] | None:
    """A broker-id list sent as JSON text ("[1,2]") -> (1, 2); null elements and a null
    list survive (the validator has already given such rows a reason)."""
    if text is None:
        return None
    try:
        return tuple(map(int, text[1:-1].split(",")))  # common case: half json's cost
    except ValueError:
        return tuple(json.loads(text))  # "[]" and lists with nulls


def _ipc(table: pa.Table) -> bytes:
    # Not compressed: Spark's shuffle compresses its blocks (LZ4) anyway.
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue())


def _wake_horizons(wake: pa.Table) -> dict[PackKey, int | None]:
    """The wake rows of a batch (a few per run): their keys and highest horizon."""
    horizons: dict[PackKey, int | None] = {}
    for cluster, bucket, horizon in zip(wake.column("cluster").to_pylist(),
                                        wake.column("bucket").to_pylist(),
                                        wake.column("horizon").to_pylist(), strict=True):
        key = PackKey(cluster, bucket, True)
        known = horizons.get(key)
        horizons[key] = horizon if known is None else max(known, horizon or known)
    return horizons


def pack_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Rows of one batch (REPLAY_INPUT_SCHEMA) -> one packed row per (cluster, bucket, wake):
    payload = the group's ROW_COLUMNS as an Arrow IPC stream, cut from the batch by Arrow
    (sorted by key, sliced), so no row becomes a Python object here; wake rows carry none,
    only the highest horizon among them."""
    table = pa.Table.from_batches([batch])
    is_wake = table.column("wake")
    events = table.filter(pc.invert(is_wake)).sort_by([("cluster", "ascending"),
                                                        ("bucket", "ascending")])
    # Groups in sorted order: without threads, group_by lists them as they first appear.
    groups = events.select(["cluster", "bucket"]).group_by(
        ["cluster", "bucket"], use_threads=False).aggregate([([], "count_all")])
    body = events.select(list(ROW_COLUMNS))
    out: dict[str, list[Any]] = {name: [] for name in PACKED_ARROW.names}
    start = 0
    for cluster, bucket, rows in zip(groups.column("cluster").to_pylist(),
                                     groups.column("bucket").to_pylist(),
                                     groups.column("count_all").to_pylist(), strict=True):
        for name, value in zip(PACKED_ARROW.names,
                               (cluster, bucket, False, rows, _ipc(body.slice(start, rows)),
                                None), strict=True):
            out[name].append(value)
        start += rows
    for key, horizon in _wake_horizons(table.filter(is_wake)).items():
        for name, value in zip(PACKED_ARROW.names, (*key, 0, None, horizon), strict=True):
            out[name].append(value)
    return pa.RecordBatch.from_pydict(out, schema=PACKED_ARROW)


def pack(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        if batch.num_rows:
            with gc_paused():
                packed = pack_batch(batch)
            yield packed


def _column(table: pa.Table, name: str) -> list[Any]:
    values: list[Any] = table.column(name).to_pylist()
    if name in LIST_COLUMNS:
        return [parse_list(v) for v in values]
    return values


def unpack(payload: bytes) -> list[Row]:
    """A packed payload -> its rows as (reason, *event fields) tuples."""
    with pa.ipc.open_stream(payload) as reader:
        table = reader.read_all()
    return list(zip(*[_column(table, c) for c in ROW_COLUMNS], strict=True))
