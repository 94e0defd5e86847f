"""Writing the output tables: Parquet directories under `--out`, partitioned by `run_id`.

Re-running a run_id replaces that run's partition and never duplicates rows: a non-empty
write uses dynamic partition overwrite, and a table that has no rows in this run has its
`run_id=` partition replaced by an empty one (one file with the schema and no rows: an
empty dynamic overwrite would leave the old partition in place, and a table directory with
no file at all cannot be read without a schema).
"""

from __future__ import annotations

import contextlib
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from jobs.store.filesystem import remove_local_scratch
from schemas.tables import TABLES


def table_path(out_dir: str, table: str) -> str:
    return f"{out_dir.rstrip('/')}/{table}"


def _hadoop_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a live session has its gateway
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    return hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hpath


def delete_path(spark: SparkSession, path: str) -> None:
    """Recursive delete through Hadoop's FileSystem (works for local, HDFS, object stores)."""
    filesystem, hpath = _hadoop_path(spark, path)
    if filesystem.exists(hpath):
        filesystem.delete(hpath, True)


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
    if not remove_local_scratch(path, settle=stopped) and spark is not None:
        delete_path(spark, path)


def rename_path(spark: SparkSession, source: str, target: str) -> None:
    """Move a file or directory within one filesystem (the target must not exist)."""
    filesystem, hsource = _hadoop_path(spark, source)
    _, htarget = _hadoop_path(spark, target)
    if not filesystem.rename(hsource, htarget):
        raise OSError(f"could not rename {source} to {target}")


def hadoop_status(spark: SparkSession, path: str) -> Any | None:
    """Hadoop's FileStatus of `path` (`isDirectory()`, `isFile()`), or None when absent."""
    filesystem, hpath = _hadoop_path(spark, path)
    return filesystem.getFileStatus(hpath) if filesystem.exists(hpath) else None


def path_exists(spark: SparkSession, path: str) -> bool:
    filesystem, hpath = _hadoop_path(spark, path)
    return bool(filesystem.exists(hpath))


def read_text(spark: SparkSession, path: str) -> str:
    filesystem, hpath = _hadoop_path(spark, path)
    stream = filesystem.open(hpath)
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    try:
        return str(jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()


def write_text(spark: SparkSession, path: str, text: str) -> None:
    filesystem, hpath = _hadoop_path(spark, path)
    stream = filesystem.create(hpath, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def list_names(spark: SparkSession, path: str) -> list[str]:
    """The names of the entries of a directory (files and directories), sorted."""
    filesystem, hpath = _hadoop_path(spark, path)
    return sorted(str(status.getPath().getName()) for status in filesystem.listStatus(hpath))


def create_new_text(spark: SparkSession, path: str, text: str) -> bool:
    """Write `text` to a file that must not exist yet; False when it does. Hadoop's
    `create(overwrite=false)` is atomic on HDFS, so two callers cannot both succeed."""
    filesystem, hpath = _hadoop_path(spark, path)
    try:
        stream = filesystem.create(hpath, False)
    except Exception as exc:  # py4j wraps FileAlreadyExistsException
        if "FileAlreadyExists" in str(exc) or filesystem.exists(hpath):
            return False
        raise
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()
    return True


def body_schema(table: str) -> T.StructType:
    """A table's columns without its partition column `run_id`."""
    return T.StructType([f for f in TABLES[table].fields if f.name != "run_id"])


def write_empty_partition(spark: SparkSession, out_dir: str, table: str, run_id: str) -> None:
    """This run's partition of `table` holding no rows but one file with the schema, so
    that `spark.read.parquet(<out>/<table>)` works whatever the run found."""
    target = f"{table_path(out_dir, table)}/run_id={run_id}"
    spark.createDataFrame([], body_schema(table)).coalesce(1).write.mode("overwrite") \
        .parquet(target)


def ensure_run_partitions(spark: SparkSession, out_dir: str, run_id: str) -> None:
    """Every table has this run's partition, if only an empty one."""
    for table in TABLES:
        if not path_exists(spark, f"{table_path(out_dir, table)}/run_id={run_id}"):
            write_empty_partition(spark, out_dir, table, run_id)


def read_table(spark: SparkSession, out_dir: str, table: str) -> DataFrame:
    """A table with its own schema: `run_id` comes back as a string whatever it looks like
    (partition discovery alone would read `run_id=20261122` as an integer)."""
    return spark.read.schema(TABLES[table]).parquet(table_path(out_dir, table))


def read_table_or_empty(spark: SparkSession, out_dir: str, table: str) -> DataFrame:
    """`read_table`, with a table directory that was never written read as an empty table:
    no partition created in an excerpt, every replica deleted, or output written by an
    earlier release of this job before it had that table."""
    if path_exists(spark, table_path(out_dir, table)):
        return read_table(spark, out_dir, table)
    return spark.createDataFrame([], TABLES[table])


def write_table(
    spark: SparkSession, df: DataFrame | None, out_dir: str, table: str, run_id: str,
    rows: int, replace: bool,
) -> None:
    """Write `df` (already in the table's schema) as this run's rows of `table`.

    `replace`: this run's partition is replaced (the first write of a run); otherwise the
    rows are appended to it (a later micro-batch of the same run).
    """
    path = table_path(out_dir, table)
    if rows == 0 or df is None:
        if replace:
            write_empty_partition(spark, out_dir, table, run_id)
        return
    (
        df.write.mode("overwrite" if replace else "append")
        .option("partitionOverwriteMode", "dynamic")
        .partitionBy("run_id")
        .parquet(path)
    )


def write_arrow(
    spark: SparkSession, batches: list[pa.RecordBatch], out_dir: str, table: str, run_id: str
) -> int:
    """Write small driver-side tables (timelines, run summary) built as Arrow batches."""
    schema = TABLES[table]
    arrow = pa.Table.from_batches(batches) if batches else None
    rows = 0 if arrow is None else arrow.num_rows
    # One chunk: PySpark 4.3 loses the rows after an empty chunk of a many-chunk table
    # (a cluster without timeline rows gives an empty batch).
    df = spark.createDataFrame(arrow.combine_chunks(), schema=schema) if arrow and rows else None
    write_table(spark, df, out_dir, table, run_id, rows, replace=True)
    return rows
