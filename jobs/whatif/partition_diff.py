"""`whatif_partition_diff`: one row per (variant, partition, field) whose final value in
`partition_states` differs from the baseline's (docs/whatif.md).

Each (variant, partition) that can differ is joined once with the baseline's row of the
partition, both as the DIFF_FIELDS values printed, and only the fields that differ are
exploded into rows: a cell per field before the joins would shuffle five rows per partition.

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

PARTITION = ["cluster", "topic", "partition"]
PAIR = [*KEY, "topic", "partition"]  # a variant's partition
BASE, VALUE = "_base", "_value"  # the DIFF_FIELDS values of the baseline's row, the variant's


def _field_value(name: str) -> Column:
    col = F.col(name)
    if name == "isr":  # a set: printed sorted
        col = F.array_sort(col)
    if name in ("isr", "replicas"):
        return F.when(col.isNotNull(), F.concat(F.lit("["), F.array_join(col, ","), F.lit("]")))
    return col.cast("string")


def _values(states: DataFrame, name: str) -> DataFrame:
    """(cluster, variant, topic, partition, `name`: the DIFF_FIELDS values, as printed)."""
    return states.select(*PAIR, F.array(*[_field_value(f) for f in DIFF_FIELDS]).alias(name))


def _compared(pairs: DataFrame, base: DataFrame, others: DataFrame, run_id: str) -> DataFrame:
    """The differing fields of every (variant, partition) of `pairs`; a side with no row
    has every field null, so a partition only one side has differs in every field it has."""
    joined = pairs.distinct().join(base, PARTITION, "left").join(others, PAIR, "left")
    fields = F.array(*[F.struct(F.lit(name).alias("field"), F.col(BASE)[i].alias("baseline"),
                                F.col(VALUE)[i].alias("value"))
                       for i, name in enumerate(DIFF_FIELDS)])
    differing = F.filter(fields, lambda f: ~f["baseline"].eqNullSafe(f["value"]))
    return joined.select(*PAIR, F.explode(differing).alias("f")) \
        .withColumn("run_id", F.lit(run_id)) \
        .select("cluster", "run_id", "variant", "topic", "partition", "f.field", "f.baseline",
                "f.value")


def _split(states: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(the baseline's values by partition, as BASE; every other variant's, as VALUE)."""
    base = _values(states.where(F.col("variant") == BASELINE), BASE).drop("variant")
    return base, _values(states.where(F.col("variant") != BASELINE), VALUE)


def whole_diff(states: DataFrame, keys: DataFrame, run_id: str) -> DataFrame:
    """The diff of every variant's whole `states`: its partitions and the baseline's."""
    base, others = _split(states)
    variants = F.broadcast(keys.select(*KEY).where(F.col("variant") != BASELINE))
    pairs = others.select(*PAIR).unionByName(
        variants.join(base.select(*PARTITION), "cluster").select(*PAIR))
    return _compared(pairs, base, others, run_id)


def partition_diff(spark: SparkSession, out_dir: str, run_id: str, keys: DataFrame,
                   sharing: Sharing | None) -> DataFrame:
    """The diff, from the rows the variants store when they take rows from the baseline."""
    if sharing is None or sharing.bases != (BASELINE,):
        states = read_whatif_table(spark, out_dir, "partition_states", run_id)
        return whole_diff(states, keys, run_id)
    states = stored_rows(spark, out_dir, "partition_states", run_id)
    base, others = _split(states)
    variants = keys.select(*KEY).where(F.col("variant") != BASELINE)
    taken = sharing.rows.select("cluster", "variant", F.col("bucket").alias(BUCKET))
    not_taken = variants.crossJoin(spark.range(sharing.buckets)
                                   .select(F.col("id").cast("int").alias(BUCKET))) \
        .join(taken, [*KEY, BUCKET], "left_anti")
    base_partitions = base.select(*PARTITION)
    of_groups = base_partitions.withColumn(BUCKET, topic_bucket(sharing.buckets)) \
        .join(F.broadcast(not_taken), ["cluster", BUCKET]).select(*PAIR)
    # An overridden partition the variant stores no partition row for (it removed it, or
    # stores replica rows only): the baseline's row, which its own rows no longer hold.
    missing = sharing.overrides.select("cluster", F.col(TAKER).alias("variant"), "topic",
                                       "partition").join(others.select(*PAIR), PAIR,
                                                         "left_anti")
    of_overrides = base_partitions.join(missing, PARTITION).select(*PAIR)
    pairs = others.select(*PAIR).unionByName(of_groups).unionByName(of_overrides)
    return _compared(pairs, base, others, run_id)
