"""`whatif_partition_diff`: one row per (variant, partition, field) whose final value in
`partition_states` differs from the baseline's (docs/whatif.md).

When every variant that takes rows takes them from the baseline, only the partitions that
can differ are compared: those a variant stores a row for, those it overrides in a group it
takes (stores replica rows for, or removed), and every partition of a group it does not
take; the rest are the baseline's own rows. Otherwise each variant is read whole.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.store.variant_rows import stored_rows, topic_bucket
from jobs.whatif.output import read_whatif_table
from jobs.whatif.stored_sums import BUCKET, KEY, TAKER, Sharing
from schemas.whatif import BASELINE, DIFF_FIELDS

CELL = ["cluster", "topic", "partition", "field"]


def _field_value(name: str) -> Column:
    col = F.col(name)
    if name == "isr":  # a set: printed sorted
        col = F.array_sort(col)
    if name in ("isr", "replicas"):
        return F.when(col.isNotNull(), F.concat(F.lit("["), F.array_join(col, ","), F.lit("]")))
    return col.cast("string")


def _cells(states: DataFrame) -> DataFrame:
    """(cluster, variant, topic, partition, field, value) of every DIFF_FIELDS field."""
    return states.select(*KEY, "topic", "partition", F.explode(F.array(*[
        F.struct(F.lit(name).alias("field"), _field_value(name).alias("value"))
        for name in DIFF_FIELDS])).alias("f")).select(*KEY, "topic", "partition", "f.*")


def _compared(cells: DataFrame, base: DataFrame, others: DataFrame, run_id: str) -> DataFrame:
    compared = cells.distinct().join(base, CELL, "left").join(others, [*KEY, *CELL[1:]], "left")
    return compared.where(~F.col("baseline").eqNullSafe(F.col("value"))) \
        .withColumn("run_id", F.lit(run_id)) \
        .select("cluster", "run_id", "variant", "topic", "partition", "field", "baseline",
                "value")


def _split(long: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(the baseline's cells, value as `baseline`; every other variant's cells)."""
    base = long.where(F.col("variant") == BASELINE).drop("variant") \
        .withColumnRenamed("value", "baseline")
    return base, long.where(F.col("variant") != BASELINE)


def whole_diff(states: DataFrame, keys: DataFrame, run_id: str) -> DataFrame:
    """The diff of every variant's whole `states`; a partition only one of the variant and
    the baseline has differs in every field."""
    base, others = _split(_cells(states))
    variants = F.broadcast(keys.select(*KEY).where(F.col("variant") != BASELINE))
    cells = others.select(*KEY, *CELL[1:]).unionByName(
        variants.join(base.select(*CELL), "cluster"))
    return _compared(cells, base, others, run_id)


def partition_diff(spark: SparkSession, out_dir: str, run_id: str, keys: DataFrame,
                   sharing: Sharing | None) -> DataFrame:
    """The diff, from the rows the variants store when they take rows from the baseline."""
    if sharing is None or sharing.bases != (BASELINE,):
        states = read_whatif_table(spark, out_dir, "partition_states", run_id)
        return whole_diff(states, keys, run_id)
    states = stored_rows(spark, out_dir, "partition_states", run_id)
    base, others = _split(_cells(states))
    variants = keys.select(*KEY).where(F.col("variant") != BASELINE)
    taken = sharing.rows.select("cluster", "variant", F.col("bucket").alias(BUCKET))
    not_taken = variants.crossJoin(spark.range(sharing.buckets)
                                   .select(F.col("id").cast("int").alias(BUCKET))) \
        .join(taken, [*KEY, BUCKET], "left_anti")
    base_cells = base.select(*CELL)
    of_groups = base_cells.withColumn(BUCKET, topic_bucket(sharing.buckets)) \
        .join(F.broadcast(not_taken), ["cluster", BUCKET]).drop(BUCKET)
    # An overridden partition the variant stores no partition row for (it removed it, or
    # stores replica rows only): the baseline's cells, which its own rows no longer hold.
    stored = states.where(F.col("variant") != BASELINE).select(*KEY, "topic", "partition")
    missing = sharing.overrides.select("cluster", F.col(TAKER).alias("variant"), "topic",
                                       "partition").join(stored, [*KEY, "topic", "partition"],
                                                         "left_anti")
    of_overrides = base_cells.join(missing, ["cluster", "topic", "partition"])
    cells = others.select(*KEY, *CELL[1:]).unionByName(of_groups) \
        .unionByName(of_overrides)
    return _compared(cells, base, others, run_id)
