"""Publish the staged replay tables under --out, in the what-if's columns (`cluster`,
`variant`: `schemas.whatif.WHATIF_TABLES`), with the baseline read from an existing replay
output when `--baseline` names one.

Tables the workers wrote in the what-if's columns (variants sharing their work, each
storing only what differs from its base: `jobs.store.variant_rows`) are moved into place;
tables keyed by composite cluster (`--no-share`, a KRaft log's) are rewritten by Spark
with the key split into `cluster` and `variant`.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.store.filesystem import delete_path, path_exists, rename_path
from jobs.store.latest_state import read_state
from jobs.store.layout import partition_path, table_path
from jobs.store.tables import read_table, read_table_or_empty
from jobs.store.variant_rows import ALL_TABLES, read_variant_table
from schemas.tables import STATE_TABLES
from schemas.whatif import BASELINE, STORAGE_TABLES, VARIANT_SEPARATOR, WHATIF_TABLES


def split_variant(df: DataFrame) -> DataFrame:
    """Composite `cluster` -> `cluster`, `variant` (the separator never occurs in either)."""
    composite = F.col("cluster")
    return df.withColumn("variant", F.substring_index(composite, VARIANT_SEPARATOR, -1)) \
        .withColumn("cluster", F.substring_index(composite, VARIANT_SEPARATOR, 1))


def baseline_run(spark: SparkSession, baseline_dir: str) -> str:
    """The run of a replay output the what-if takes as its baseline: its latest run (by
    `run_summary.finished_at`)."""
    latest = read_table(spark, baseline_dir, "run_summary") \
        .orderBy(F.col("finished_at").desc(), F.col("run_id").desc()).select("run_id").first()
    if latest is None:
        raise ValueError(f"--baseline {baseline_dir} has no run_summary rows")
    return str(latest["run_id"])


def write_whatif_table(spark: SparkSession, df: DataFrame, out_dir: str, table: str,
                       run_id: str) -> None:
    """This run's partition of `table` replaced by `df` (an empty one when `df` has no
    rows: one file with the schema)."""
    schema = ALL_TABLES[table]
    partition = partition_path(out_dir, table, run_id)
    delete_path(partition)
    df.select(*schema.fieldNames()).write.mode("append").partitionBy("run_id") \
        .parquet(table_path(out_dir, table))
    if not path_exists(partition):
        body = T.StructType([f for f in schema.fields if f.name != "run_id"])
        spark.createDataFrame([], body).coalesce(1).write.mode("overwrite").parquet(partition)


def read_whatif_table(spark: SparkSession, out_dir: str, table: str, run_id: str) -> DataFrame:
    """A what-if table of the run, every variant's rows whole (`read_variant_table`)."""
    return read_variant_table(spark, out_dir, table, run_id)


def baseline_rows(spark: SparkSession, baseline_dir: str, source_run: str, table: str,
                  run_id: str) -> DataFrame:
    """The rows of a replay output's run as the what-if's baseline. A state table of a
    nightly output lists each run's changes: the whole state after the run is read through
    its chain of runs. A baseline written before a table existed contributes no rows."""
    rows = read_state(spark, baseline_dir, table, source_run) if table in STATE_TABLES \
        else read_table_or_empty(spark, baseline_dir, table) \
        .where(F.col("run_id") == F.lit(source_run))
    return rows.withColumn("variant", F.lit(BASELINE)).withColumn("run_id", F.lit(run_id))


def publish(spark: SparkSession, staging: str, out_dir: str, run_id: str,
            baseline_dir: str | None, variant_form: bool = False) -> None:
    """Every replay table under `out_dir` with its `variant` column; `variant_form`: the
    staged tables are in the what-if's columns already, with `whatif_sharing`."""
    source_run = baseline_run(spark, baseline_dir) if baseline_dir is not None else None
    for table in WHATIF_TABLES:
        base = None if source_run is None or baseline_dir is None \
            else baseline_rows(spark, baseline_dir, source_run, table, run_id)
        if variant_form:
            move_partition(staging, out_dir, table, run_id)
            if base is not None:
                base.select(*ALL_TABLES[table].fieldNames()).write.mode("append") \
                    .partitionBy("run_id").parquet(table_path(out_dir, table))
            continue
        df = split_variant(read_table(spark, staging, table).where(F.col("run_id") == run_id))
        write_whatif_table(spark, df if base is None else df.unionByName(base), out_dir,
                           table, run_id)
    for table in STORAGE_TABLES:  # without a share, no variant shares a row
        if variant_form:
            move_partition(staging, out_dir, table, run_id)
        else:
            write_whatif_table(spark, spark.createDataFrame([], ALL_TABLES[table]), out_dir,
                               table, run_id)


def move_partition(staging: str, out_dir: str, table: str, run_id: str) -> None:
    """The run's staged partition of `table` becomes its partition under `out_dir`."""
    target = partition_path(out_dir, table, run_id)
    delete_path(target)
    rename_path(partition_path(staging, table, run_id), target)


def baseline_problem(spark: SparkSession, baseline: str | None) -> str | None:
    """Why `--baseline` cannot stand for the baseline's replay, or None."""
    if baseline is None or path_exists(table_path(baseline, "partition_states")):
        return None
    return f"--baseline {baseline} holds no replay output (no partition_states)"
