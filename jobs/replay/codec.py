"""Rows of the core <-> the binary payloads of the tagged output <-> Arrow batches of a table.

A group's rows for one table are serialised once, in the Python worker that folded them, as
an Arrow IPC stream of the table's columns after (cluster, run_id). The stateful UDF thus
returns a handful of rows per group whatever the number of output rows (the per-group
pandas->Arrow conversion is what costs milliseconds: about 2.6 ms per group for
`applyInPandasWithState`, measured: docs/replay-job.md), and the decoder in
`mapInArrow` does no per-row Python work: it reads each payload back as Arrow and prepends
the two constant columns. Timestamps travel as microseconds since the epoch (UTC).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from operator import itemgetter
from typing import Any

import pyarrow as pa
from pyspark.sql import types as T

from schemas.tables import TABLES


def arrow_type(dtype: T.DataType) -> pa.DataType:
    """The Arrow type Spark expects from `mapInArrow` for a (flat) table column."""
    if isinstance(dtype, T.StringType):
        return pa.string()
    if isinstance(dtype, T.LongType):
        return pa.int64()
    if isinstance(dtype, T.IntegerType):
        return pa.int32()
    if isinstance(dtype, T.BooleanType):
        return pa.bool_()
    if isinstance(dtype, T.DoubleType):
        return pa.float64()
    if isinstance(dtype, T.TimestampType):
        return pa.timestamp("us", tz="UTC")
    if isinstance(dtype, T.BinaryType):
        return pa.binary()
    if isinstance(dtype, T.ArrayType):
        return pa.list_(arrow_type(dtype.elementType))
    if isinstance(dtype, T.MapType):
        return pa.map_(arrow_type(dtype.keyType), arrow_type(dtype.valueType))
    raise TypeError(f"no Arrow type for {dtype!r}")


def arrow_schema(table: str) -> pa.Schema:
    return pa.schema([pa.field(f.name, arrow_type(f.dataType)) for f in TABLES[table].fields])


# LZ4 frames: the rows are very repetitive (214 MB of state_changes on the bench log become
# 41 MB for 0.13 s of CPU), and the persisted batch that every table's job scans holds them.
IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")


@cache
def body_schema(table: str) -> pa.Schema:
    """The columns of `table` a payload carries: all but the leading cluster and run_id."""
    schema = arrow_schema(table)
    assert schema.names[:2] == ["cluster", "run_id"], schema.names
    return pa.schema(list(schema)[2:])


def _arrays(schema: pa.Schema, cols: Sequence[Sequence[Any]]) -> list[pa.Array]:
    arrays = []
    for field, col in zip(schema, cols, strict=True):
        if pa.types.is_timestamp(field.type):
            arrays.append(pa.array(col, pa.int64()).cast(field.type))
        else:
            arrays.append(pa.array(col, field.type))
    return arrays


def encode(table: str, rows: Sequence[Sequence[Any]]) -> bytes:
    """A group's row tuples of `table` (columns after cluster, run_id) as one IPC payload."""
    schema = body_schema(table)
    cols = [list(map(itemgetter(i), rows)) for i in range(len(schema))]
    batch = pa.RecordBatch.from_arrays(_arrays(schema, cols), schema=schema)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema, options=IPC_OPTIONS) as writer:
        writer.write_batch(batch)
    return bytes(sink.getvalue())


def decode(payload: bytes) -> pa.Table:
    """One payload back as Arrow: the body columns of its table."""
    with pa.ipc.open_stream(payload) as reader:
        return reader.read_all()


def to_record_batch(
    table: str, cluster_col: list[str], run_id: str, cols: Sequence[Sequence[Any]]
) -> pa.RecordBatch:
    """Build one Arrow batch of `table` from its body columns (after cluster, run_id)."""
    schema = arrow_schema(table)
    n = len(cluster_col)
    arrays = [pa.array(cluster_col, pa.string()), pa.array([run_id] * n, pa.string())]
    arrays += _arrays(body_schema(table), cols)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def rows_to_record_batch(
    table: str, cluster: str, run_id: str, rows: Sequence[Sequence[Any]]
) -> pa.RecordBatch:
    """Driver-side tables (the timelines): rows of one cluster straight to Arrow."""
    width = len(arrow_schema(table)) - 2
    cols: Sequence[Sequence[Any]] = list(zip(*rows, strict=True)) if rows else [()] * width
    return to_record_batch(table, [cluster] * len(rows), run_id, cols)


# Rows per Arrow batch handed back to Spark: bounds the buffers of one batch when a group
# has millions of rows (slices are zero-copy).
DECODE_BATCH_ROWS = 131_072


def decoder(table: str, run_id: str) -> Any:
    """A `mapInArrow` function: (cluster, payload) batches -> batches of `table`."""
    schema = arrow_schema(table)

    def decode_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            clusters = batch.column("cluster").to_pylist()
            payloads = batch.column("payload")
            for i, cluster in enumerate(clusters):
                with pa.ipc.open_stream(payloads[i].as_buffer()) as reader:
                    for body in reader:
                        for start in range(0, body.num_rows, DECODE_BATCH_ROWS):
                            part = body.slice(start, DECODE_BATCH_ROWS)
                            n = part.num_rows
                            yield pa.RecordBatch.from_arrays(
                                [pa.repeat(cluster, n).cast(pa.string()),
                                 pa.repeat(run_id, n).cast(pa.string()), *part.columns],
                                schema=schema,
                            )

    return decode_batches
