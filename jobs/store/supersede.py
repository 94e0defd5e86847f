"""State tables of a split run: a later micro-batch's rows replace the earlier rows of the
partitions it changed.

A run is normally one micro-batch. Spark splits it only when it re-executes a batch that a
crashed run planned; the new files then follow in a second batch of the same run. Every
batch lists the state of each partition it changed (`partition_states`, with all its
`replica_states` rows), so appending the second batch's state rows would list a partition
twice. Instead, the run's partition of a state table is rewritten: the earlier rows of the
partitions this batch did not list, plus this batch's rows. The rewrite goes through a staging
directory (the earlier rows are read from the directory being replaced), then is swapped in.
It costs a read and a write of the run's state rows, and only split runs pay it.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.store.filesystem import delete_path, path_exists, rename_path
from jobs.store.latest_state_arrow import STATE_KEY
from jobs.store.layout import OutLayout, partition_path
from schemas.tables import TABLES


def supersede_state_rows(
    spark: SparkSession, df: DataFrame, out_dir: str, table: str, run_id: str,
    changed: DataFrame,
) -> dict[str, int]:
    """Make this run's partition of `table` hold `df` (rows of the partitions in `changed`,
    this batch's `partition_states` rows) plus the earlier rows of every other partition.
    Returns the rows now in the partition, per cluster."""
    current = partition_path(out_dir, table, run_id)
    staging = OutLayout(out_dir).superseding(table)
    schema = TABLES[table]
    body = T.StructType([f for f in schema.fields if f.name != "run_id"])
    merged = df
    if path_exists(current):
        keys = changed.select(*STATE_KEY).distinct()
        kept = (
            spark.read.schema(body).parquet(current)
            .join(keys, STATE_KEY, "left_anti")
            .withColumn("run_id", F.lit(run_id))
            .select(*schema.fieldNames())
        )
        merged = kept.unionByName(df)
    delete_path(staging)
    merged.write.mode("overwrite").partitionBy("run_id").parquet(staging)
    staged = f"{staging}/run_id={run_id}"
    delete_path(current)
    if not path_exists(staged):  # no rows at all: the run has no partition
        delete_path(staging)
        return {}
    rename_path(staged, current)
    delete_path(staging)
    counts = spark.read.schema(body).parquet(current).groupBy("cluster").count().collect()
    return {r["cluster"]: int(r["count"]) for r in counts}
