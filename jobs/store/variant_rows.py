"""A what-if variant's whole tables (Spark), from the rows it stores and its base's.

A what-if (`jobs.whatif`) stores, per variant, only the rows that differ from its base's
(the baseline's, unless the baseline was read from another output with `--baseline`: then
the first variant's), as a nightly run stores only its changes (`jobs.store.latest_state`).
`whatif_sharing` has a row per (cluster, variant, replay group) whose rows the variant
takes from its base; a group is the bucket of topics `bucket_of(cluster, topic, buckets)`
(crc32 of `cluster \\0 topic`, modulo the run's bucket count). In such a group a variant's
rows of a table are:

* a per-event table (`schemas.whatif.SHARED_EVENT_KEYS`): the base's rows of the group
  whose key column (`seq`; `end_seq` for `partition_windows`) is below `before_seq`, or all
  of them when `before_seq` is null, plus the rows it stores;
* `partition_states`, `replica_states`: the base's rows of the group, less the partitions
  it stores rows for (in either table) or lists in `removed`, plus the rows it stores.

Every other table, and every group without a `whatif_sharing` row, holds the variant's rows
whole. So:

    from jobs.store.variant_rows import read_variant_table
    read_variant_table(spark, "out/whatif", "partition_windows", "sweep")  # every variant
    read_variant_table(spark, "out/whatif", "findings", "sweep", ["fail-broker-3"])

    from jobs.store.variant_rows_arrow import arrow_variant_table  # pyarrow only, no Spark
    arrow_variant_table("out/whatif", "partition_states", "sweep", ["baseline"])

Both return the table's columns (`schemas.whatif`), each variant's rows as its own plain
replay writes them. The what-if's own tables (`whatif_impact`, ...) read as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.store.filesystem import path_exists
from jobs.store.layout import table_path
from schemas.whatif import (
    IMPACT_TABLES,
    SHARED_EVENT_KEYS,
    SHARED_STATE_TABLES,
    STORAGE_TABLES,
    WHATIF_TABLES,
)

SHARING = "whatif_sharing"
ALL_TABLES = {**WHATIF_TABLES, **IMPACT_TABLES, **STORAGE_TABLES}
PARTITION = ["cluster", "variant", "topic", "partition"]
_BUCKET, _TAKER = "_bucket", "_taker"


def stored_rows(spark: SparkSession, out_dir: str, table: str, run_id: str,
                variants: Sequence[str] | None = None) -> DataFrame:
    """The rows of `table` the run stores (of `variants`, all by default), as stored."""
    schema = ALL_TABLES[table]
    if not path_exists(table_path(out_dir, table)):
        return spark.createDataFrame([], schema)
    # Spark puts the partition column (`run_id`) last: back to the contract's order.
    df = spark.read.schema(schema).parquet(table_path(out_dir, table)) \
        .where(F.col("run_id") == run_id).select(*schema.fieldNames())
    return df if variants is None else df.where(F.col("variant").isin(*variants))


def topic_bucket(buckets: int) -> Column:
    """`statemachine.replay.bucket_of(cluster, topic, buckets)` as a Spark expression."""
    key = F.concat(F.col("cluster"), F.lit("\x00"), F.col("topic")).cast("binary")
    return (F.crc32(key) % F.lit(buckets)).cast("int")


def read_variant_table(spark: SparkSession, out_dir: str, table: str, run_id: str,
                       variants: Sequence[str] | None = None) -> DataFrame:
    """`table` of the what-if run `run_id`, every variant's (or `variants`') rows whole."""
    own = stored_rows(spark, out_dir, table, run_id, variants)
    if table not in SHARED_EVENT_KEYS and table not in SHARED_STATE_TABLES:
        return own
    sharing = stored_rows(spark, out_dir, SHARING, run_id, variants)
    counts = [int(r[0]) for r in sharing.select("buckets").distinct().collect()]
    if not counts:
        return own
    if len(counts) > 1:
        raise ValueError(f"whatif_sharing of run {run_id} names bucket counts {counts}")
    takers = F.broadcast(sharing.select(
        "cluster", F.col("base").alias("variant"), F.col("variant").alias(_TAKER),
        F.col("bucket").alias(_BUCKET), "before_seq"))
    base = stored_rows(spark, out_dir, table, run_id) \
        .withColumn(_BUCKET, topic_bucket(counts[0])) \
        .join(takers, ["cluster", "variant", _BUCKET])
    if table in SHARED_EVENT_KEYS:
        key = F.col(SHARED_EVENT_KEYS[table])
        base = base.where(F.col("before_seq").isNull() | (key < F.col("before_seq")))
    else:
        base = base.join(overridden(spark, out_dir, run_id, sharing)
                         .withColumnRenamed("variant", _TAKER),
                         ["cluster", _TAKER, "topic", "partition"], "left_anti")
    taken = base.withColumn("variant", F.col(_TAKER)).select(*ALL_TABLES[table].fieldNames())
    return own.unionByName(taken)


def overridden(spark: SparkSession, out_dir: str, run_id: str,
               sharing: DataFrame) -> DataFrame:
    """(cluster, variant, topic, partition) of every partition whose state rows a variant
    stores itself or removed: the base's rows of those are not the variant's."""
    takers = sharing.select("cluster", "variant").distinct()
    stored = [stored_rows(spark, out_dir, t, run_id).select(*PARTITION)
              for t in SHARED_STATE_TABLES]
    removed = sharing.select("cluster", "variant", F.explode("removed").alias("p")) \
        .select("cluster", "variant", "p.topic", "p.partition")
    keys = stored[0].unionByName(stored[1]).join(F.broadcast(takers), ["cluster", "variant"])
    return keys.unionByName(removed).distinct()
