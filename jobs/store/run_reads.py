"""Small reads of the run's committed tables on the driver, for the roll-ups written after
the stream (`incidents`, `changes`): a few columns of one run's partition, filtered by
column values, read with pyarrow (no Spark job). Timestamps come back as UTC microseconds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from jobs.store.layout import partition_path
from jobs.store.tables import file_schema, parquet_dataset

TIME_COLUMNS = frozenset({"ts", "start_ts", "end_ts", "ts_from", "ts_to"})
# Column -> the values a row may hold there (every condition must hold).
Where = Mapping[str, Sequence[Any]]
Columns = dict[str, list[Any]]


def run_table(out_dir: str, table: str, run_id: str, columns: Sequence[str],
              where: Where | None = None) -> pa.Table:
    """`columns` of the rows of `table` written by `run_id` that pass `where`, as an Arrow
    table (timestamps as UTC microseconds)."""
    schema = file_schema(table)
    partition = parquet_dataset(partition_path(out_dir, table, run_id), schema)
    if partition is None:
        return pa.schema([_as_read(schema.field(c)) for c in columns]).empty_table()
    found = partition.to_table(columns=list(columns), filter=_condition(where or {}))
    return pa.table(_as_micros(found, columns), names=list(columns))


def run_batches(out_dir: str, table: str, run_id: str, columns: Sequence[str],
                where: Where | None = None) -> Iterator[pa.RecordBatch]:
    """`run_table` as a stream of record batches (timestamps as UTC microseconds): a reader
    that keeps only aggregates holds one batch at a time, however many rows the run wrote."""
    schema = file_schema(table)
    partition = parquet_dataset(partition_path(out_dir, table, run_id), schema)
    if partition is None:
        return
    for found in partition.to_batches(columns=list(columns), filter=_condition(where or {})):
        yield pa.record_batch(_as_micros(found, columns), names=list(columns))


def _as_micros(found: pa.Table | pa.RecordBatch, columns: Sequence[str]) -> list[Any]:
    """`columns` of `found`, timestamps as UTC microseconds."""
    return [pc.cast(found.column(c), pa.int64()) if c in TIME_COLUMNS else found.column(c)
            for c in columns]


def _condition(where: Where) -> pc.Expression | None:
    condition = None
    for column, values in where.items():
        test = pc.field(column).isin(list(values))
        condition = test if condition is None else condition & test
    return condition


def _as_read(f: pa.Field) -> pa.Field:
    return f.with_type(pa.int64()) if f.name in TIME_COLUMNS else f


def _arrow(out_dir: str, table: str, run_id: str, columns: Sequence[str],
           where: Where) -> Columns:
    found = run_table(out_dir, table, run_id, columns, where)
    return {c: found.column(c).to_pylist() for c in columns}


def run_columns(out_dir: str, table: str, run_id: str,
                columns: Sequence[str], where: Where | None = None) -> Columns:
    """`columns` of the rows of `table` written by `run_id` that pass `where`."""
    return _arrow(out_dir, table, run_id, columns, where or {})


def run_rows(out_dir: str, table: str, run_id: str,
             columns: Sequence[str], where: Where | None = None) -> list[tuple[Any, ...]]:
    """`run_columns` as rows, in `columns` order."""
    got = run_columns(out_dir, table, run_id, columns, where)
    return list(zip(*(got[c] for c in columns), strict=True))


def run_row_count(out_dir: str, table: str, run_id: str) -> int:
    """The rows of `table` written by `run_id`, from the files' footers (no row is read)."""
    partition = parquet_dataset(partition_path(out_dir, table, run_id), file_schema(table))
    return 0 if partition is None else int(partition.count_rows())
