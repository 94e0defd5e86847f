"""Writing the output tables: Parquet directories under `--out`, partitioned by `run_id`.

Re-running a run_id replaces that run's partition and never duplicates rows: a non-empty
write uses dynamic partition overwrite, and a table that has no rows in this run has its
`run_id=` partition replaced by an empty one (one file with the schema and no rows: an
empty dynamic overwrite would leave the old partition in place, and a table directory with
no file at all cannot be read without a schema).
"""

from __future__ import annotations

import contextlib
from functools import cache

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pyarrow import fs as pafs
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from jobs.store.filesystem import delete_path, opened, path_exists, remove_local_scratch
from jobs.store.layout import RUN_PARTITIONING, partition_path, table_path
from schemas.arrow import arrow_schema
from schemas.tables import KRAFT_TABLES, TABLES

# Timestamps as INT96, as Spark's Parquet writer stores them by default
# (`spark.sql.parquet.outputTimestampType`): a table's files then read back alike with
# pyarrow whichever writer wrote them.
WRITE_OPTIONS = {"use_deprecated_int96_timestamps": True}


@cache
def file_schema(table: str) -> pa.Schema:
    """A table's columns as its files hold them: all but the partition column `run_id`."""
    schema = arrow_schema(TABLES.get(table) or KRAFT_TABLES[table])
    return pa.schema([f for f in schema if f.name != "run_id"])


def remove_scratch(spark: SparkSession | None, path: str) -> None:
    """Remove a scratch directory (`jobs.store.filesystem.scratch_path`) wherever it is. A
    streaming query still running (a signal stopped the command mid-run) is stopped first:
    its threads would go on writing into the checkpoint being removed."""
    stopped = False
    if spark is not None:
        with contextlib.suppress(Exception):  # the interrupted call may have broken py4j
            for query in spark.streams.active:
                stopped = True
                query.stop()
    if not remove_local_scratch(path, settle=stopped):
        delete_path(path)


def body_schema(table: str) -> T.StructType:
    """A table's columns without its partition column `run_id`."""
    return T.StructType([f for f in TABLES[table].fields if f.name != "run_id"])


def parquet_dataset(path: str, schema: pa.Schema,
                    partitioning: str | None = None) -> ds.Dataset | None:
    """The Parquet files under directory `path` as a pyarrow dataset of `schema` (hidden
    files skipped, as Spark skips them), or None when there is no such directory. INT96
    timestamps (Spark's default) read as microseconds: nanoseconds overflow past 2262."""
    filesystem, inner = opened(path)
    if filesystem.get_file_info(inner).type != pafs.FileType.Directory:
        return None
    fmt = ds.ParquetFileFormat(read_options={"coerce_int96_timestamp_unit": "us"})
    return ds.dataset(inner, schema=schema, format=fmt, filesystem=filesystem,
                      partitioning=partitioning)


def variant_table(out_dir: str, names: tuple[str, ...]) -> str | None:
    """The first of the tables `names` under `out_dir` whose files carry a `variant` column:
    `out_dir` is then a what-if's output (`jobs.whatif` writes every replay table once per
    variant), whose rows a reader of one cluster's replay would add up as one cluster."""
    for name in names:
        filesystem, inner = opened(table_path(out_dir, name))
        if filesystem.get_file_info(inner).type != pafs.FileType.Directory:
            continue
        found = ds.dataset(inner, format="parquet", filesystem=filesystem,
                           partitioning=RUN_PARTITIONING)
        if "variant" in found.schema.names:
            return name
    return None


def write_partition(out_dir: str, table: str, run_id: str, data: pa.Table | None,
                    schema: pa.Schema | None = None, part: str | None = None) -> int:
    """Replace this run's partition of `table` with `data` (every column of the table, in
    any order; `run_id`, if there, is left out: it is the directory): one Parquet file,
    written with pyarrow (no Spark job for a small table), with the schema and no rows
    when there are none, so that `spark.read.parquet(<out>/<table>)` works whatever the
    run found. `schema`: the file's columns when not the replay table's (a what-if
    table's). `part`: one task's share of the partition instead, `part-<part>.parquet`
    beside the other tasks' (written again whole when the task is retried). Returns the
    rows."""
    schema = file_schema(table) if schema is None else schema
    body = schema.empty_table() if data is None else data.select(schema.names).cast(schema)
    target = partition_path(out_dir, table, run_id)
    if part is None:
        delete_path(target)
    filesystem, directory = opened(target)
    filesystem.create_dir(directory, recursive=True)
    pq.write_table(body.combine_chunks(), f"{directory}/part-{part or '00000'}.parquet",
                   filesystem=filesystem, **WRITE_OPTIONS)
    return int(body.num_rows)


def write_empty_partition(out_dir: str, table: str, run_id: str) -> None:
    """This run's partition of `table` holding no rows but one file with the schema."""
    write_partition(out_dir, table, run_id, None)


def ensure_run_partitions(out_dir: str, run_id: str) -> None:
    """Every table has this run's partition, if only an empty one."""
    for table in TABLES:
        if not path_exists(partition_path(out_dir, table, run_id)):
            write_empty_partition(out_dir, table, run_id)


def read_table(spark: SparkSession, out_dir: str, table: str) -> DataFrame:
    """A table with its own schema: `run_id` comes back as a string whatever it looks like
    (partition discovery alone would read `run_id=20261122` as an integer)."""
    return spark.read.schema(TABLES[table]).parquet(table_path(out_dir, table))


def read_table_or_empty(spark: SparkSession, out_dir: str, table: str) -> DataFrame:
    """`read_table`, with a table directory that was never written read as an empty table:
    no partition created in an excerpt, every replica deleted, or output written by an
    earlier release of this job before it had that table."""
    if path_exists(table_path(out_dir, table)):
        return read_table(spark, out_dir, table)
    return spark.createDataFrame([], TABLES[table])


def write_arrow(batches: list[pa.RecordBatch], out_dir: str, table: str, run_id: str,
                part: str | None = None) -> int:
    """Write small driver-side tables (timelines, run summary, incidents, changes) built as
    Arrow batches of the whole table schema: this run's partition, replaced (or, with
    `part`, one task's file of it: `write_partition`)."""
    data = pa.Table.from_batches(batches) if batches else None
    return write_partition(out_dir, table, run_id, data, part=part)
