"""Rows of the core -> Arrow batches of a table's files (`file_batch`, written by the worker
that folded them: `jobs.store.staging`); a group's counts <-> the payload of its counts row;
and a group's rows as one binary payload (an Arrow IPC stream of the table's columns after
(cluster, run_id)), for a caller without a staging area (the tests, the core's benchmark).
Timestamps travel as microseconds since the epoch (UTC).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from typing import Any, NamedTuple

import pyarrow as pa

from schemas.arrow import arrow_schema
from schemas.state import GROUP_COUNTS_SCHEMA
from schemas.tables import TABLES

# A `mapInArrow` function: Arrow batches in, Arrow batches out.
ArrowMap = Callable[[Iterable[pa.RecordBatch]], Iterator[pa.RecordBatch]]


@cache
def table_schema(table: str) -> pa.Schema:
    """The Arrow schema of `table` (every column of every table is nullable)."""
    return arrow_schema(TABLES[table])


# LZ4 frames: the rows are very repetitive (214 MB of state_changes on the bench log become
# 41 MB for 0.13 s of CPU), and the persisted batch that every table's job scans holds them.
IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")


@cache
def body_schema(table: str) -> pa.Schema:
    """The columns of `table` a payload carries: all but the leading cluster and run_id."""
    schema = table_schema(table)
    assert schema.names[:2] == ["cluster", "run_id"], schema.names
    return pa.schema(list(schema)[2:])


def rows_batch(schema: pa.Schema, rows: Sequence[Sequence[Any]]) -> pa.RecordBatch:
    """Row tuples (NamedTuples of the core) -> one Arrow batch of `schema`, converted in one
    pass by Arrow as a struct array (timestamps given as microseconds): a third cheaper
    than transposing the rows into Python lists and converting column by column (measured
    on the bench log's output rows)."""
    return pa.RecordBatch.from_struct_array(pa.array(rows, type=pa.struct(list(schema))))


def _encode(schema: pa.Schema, rows: Sequence[Sequence[Any]]) -> bytes:
    batch = rows_batch(schema, rows)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema, options=IPC_OPTIONS) as writer:
        writer.write_batch(batch)
    return bytes(sink.getvalue())


def encode(table: str, rows: Sequence[Sequence[Any]]) -> bytes:
    """A group's row tuples of `table` (columns after cluster, run_id) as one IPC payload."""
    return _encode(body_schema(table), rows)


def file_batch(table: str, cluster: str, rows: Sequence[Sequence[Any]],
               body: pa.RecordBatch | None = None) -> pa.RecordBatch:
    """A group's row tuples of `table` as the table's files hold them: the cluster, then
    the body columns (`run_id` is the partition directory). `body`: the rows already
    converted (`rows_batch`), as for rows several clusters share."""
    if body is None:
        body = rows_batch(body_schema(table), rows)
    return body.add_column(0, table_schema(table)[0],
                           pa.repeat(cluster, len(rows)).cast(pa.string()))


def decode(payload: bytes) -> pa.Table:
    """One payload back as Arrow: the body columns of its table (or the group's counts)."""
    with pa.ipc.open_stream(payload) as reader:
        return reader.read_all()


class GroupCounts(NamedTuple):
    """The payload of a group's COUNTS_TAG row: GROUP_COUNTS_SCHEMA, field for field."""

    rows_read: int
    rows_applied: int
    rows_duplicate: int
    rows_quarantined: int
    rows_late: int
    findings_by_kind: str  # JSON {kind: count}
    partitions_by_state: str  # JSON {state: count}
    offline_partitions: str  # JSON [[topic, partition], ...]
    watermark: int  # the highest seq the group has applied after the batch
    last_ts: int  # the latest event time (microseconds) it read, -1 for none


COUNTS_ARROW = arrow_schema(GROUP_COUNTS_SCHEMA)
assert GroupCounts._fields == tuple(COUNTS_ARROW.names)


def encode_counts(counts: GroupCounts) -> bytes:
    return _encode(COUNTS_ARROW, [counts])


def decode_counts(payload: bytes) -> GroupCounts:
    [row] = decode(payload).to_pylist()
    return GroupCounts(**row)


def rows_to_record_batch(
    table: str, cluster: str, run_id: str, rows: Sequence[Sequence[Any]]
) -> pa.RecordBatch:
    """Driver-side tables (the timelines, the run summary): rows of one cluster straight to
    Arrow, the same one-pass conversion as the workers' (`rows_batch`)."""
    body = rows_batch(body_schema(table), rows)
    keys = [pa.repeat(value, len(rows)).cast(pa.string()) for value in (cluster, run_id)]
    return pa.RecordBatch.from_arrays([*keys, *body.columns], schema=table_schema(table))
