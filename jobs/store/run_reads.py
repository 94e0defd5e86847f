"""Small reads of the run's committed tables on the driver, for the roll-ups written after
the stream (`incidents`, `changes`): a few columns of one run's partition, filtered by
column values. pyarrow reads them where it can open `--out` (no Spark job); else Spark.
Timestamps come back as UTC microseconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from pyarrow import fs as pafs
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jobs.store.filesystem import arrow_filesystem
from jobs.store.staging import file_schema
from jobs.store.tables import read_table, table_path

TIME_COLUMNS = frozenset({"ts", "start_ts", "end_ts", "ts_from", "ts_to"})
# Column -> the values a row may hold there (every condition must hold).
Where = Mapping[str, Sequence[Any]]
Columns = dict[str, list[Any]]


def _arrow(out_dir: str, table: str, run_id: str, columns: Sequence[str],
           where: Where) -> Columns | None:
    opened = arrow_filesystem(f"{table_path(out_dir, table)}/run_id={run_id}")
    if opened is None:
        return None
    filesystem, partition = opened
    if filesystem.get_file_info(partition).type == pafs.FileType.NotFound:
        return {c: [] for c in columns}
    condition = None
    for column, values in where.items():
        test = pc.field(column).isin(list(values))
        condition = test if condition is None else condition & test
    # INT96 timestamps (Spark's default) read as microseconds: nanoseconds overflow past 2262.
    fmt = ds.ParquetFileFormat(read_options={"coerce_int96_timestamp_unit": "us"})
    found = ds.dataset(partition, schema=file_schema(table), format=fmt,
                       filesystem=filesystem).to_table(columns=list(columns), filter=condition)
    return {c: (pc.cast(found.column(c), pa.int64()) if c in TIME_COLUMNS
                else found.column(c)).to_pylist() for c in columns}


def _spark(spark: SparkSession, out_dir: str, table: str, run_id: str,
           columns: Sequence[str], where: Where) -> Columns:
    df = read_table(spark, out_dir, table).where(F.col("run_id") == run_id)
    for column, values in where.items():
        df = df.where(F.col(column).isin(list(values)))
    rows = df.select(*[F.unix_micros(c).alias(c) if c in TIME_COLUMNS else F.col(c)
                       for c in columns]).collect()
    return {c: [r[i] for r in rows] for i, c in enumerate(columns)}


def run_columns(spark: SparkSession, out_dir: str, table: str, run_id: str,
                columns: Sequence[str], where: Where | None = None) -> Columns:
    """`columns` of the rows of `table` written by `run_id` that pass `where`."""
    got = _arrow(out_dir, table, run_id, columns, where or {})
    return got if got is not None else _spark(spark, out_dir, table, run_id, columns,
                                              where or {})


def run_rows(spark: SparkSession, out_dir: str, table: str, run_id: str,
             columns: Sequence[str], where: Where | None = None) -> list[tuple[Any, ...]]:
    """`run_columns` as rows, in `columns` order."""
    got = run_columns(spark, out_dir, table, run_id, columns, where)
    return list(zip(*(got[c] for c in columns), strict=True))
