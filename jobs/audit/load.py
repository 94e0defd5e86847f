"""Load: `audit_checks` under the output directory, partitioned by `run_id` like the
replay's tables. Re-auditing a run replaces its partition; a run with nothing to report
gets an empty partition (one file with the schema), so the table always reads."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.store.layout import table_path
from schemas.audit import AUDIT_CHECKS, AUDIT_TABLE


def write_checks(spark: SparkSession, rows: DataFrame, out_dir: str, run_id: str,
                 count: int) -> str:
    """Write `rows` (check rows without `run_id`) as the run's partition; returns the
    table's path."""
    path = table_path(out_dir, AUDIT_TABLE)
    table = rows.withColumn("run_id", F.lit(run_id)).select(*AUDIT_CHECKS.fieldNames())
    if count == 0:
        body = [f for f in AUDIT_CHECKS.fields if f.name != "run_id"]
        empty = spark.createDataFrame([], T.StructType(body))
        empty.coalesce(1).write.mode("overwrite").parquet(f"{path}/run_id={run_id}")
        return path
    (table.orderBy("severity", "check", "cluster", "topic", "partition", "broker_id")
     .coalesce(1).write.mode("overwrite").option("partitionOverwriteMode", "dynamic")
     .partitionBy("run_id").parquet(path))
    return path


def read_checks(spark: SparkSession, out_dir: str) -> DataFrame:
    """`audit_checks` with its own schema (`run_id` stays a string)."""
    return spark.read.schema(AUDIT_CHECKS).parquet(table_path(out_dir, AUDIT_TABLE))
