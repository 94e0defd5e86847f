"""Sums over every variant's whole rows of a what-if table, from one read of the rows the run
stores (`jobs.store.variant_rows` says how a variant's whole rows are made of the rows it
stores and its base's).

A sum is additive over rows: a variant's sum over its whole rows is the sum over the rows it
stores plus, for every replay group it takes from its base, the base's sum over the rows of
the group it takes. Those base sums are computed once per (group, cut), not once per variant
that takes them: a sweep whose variants all leave the baseline at the same seq aggregates
the baseline's rows once, where reading every variant whole would copy them per variant.
For a state table the base's rows of the partitions a variant overrides (stores or removed)
are subtracted again.

Spark only aggregates on the executors; the driver collects the run's bucket count and the
bases' names (a few values), never a table's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.store.variant_rows import PARTITION, SHARING, stored_rows, topic_bucket
from schemas.whatif import SHARED_EVENT_KEYS, SHARED_STATE_TABLES

KEY = ["cluster", "variant"]
BUCKET, CUT, TAKER, _OWN = "_bucket", "_cut", "_taker", "_own"
# What `values` keeps of each row: the sums are per GROUP, then per taker.
GROUP = [*KEY, BUCKET, CUT]
# The cut of a group taken whole (`before_seq` null): every row of the base's is taken.
WHOLE = 2**63 - 1
# A table's rows (with BUCKET, CUT) -> GROUP, the `by` columns and the columns to sum.
Values = Callable[[DataFrame], DataFrame]


@dataclass(frozen=True)
class Sharing:
    """The run's `whatif_sharing` rows, as the sums need them."""

    rows: DataFrame
    buckets: int
    bases: tuple[str, ...]  # the variants others take rows from
    # (cluster, variant: the base, topic, partition, _taker) of every partition a variant
    # overrides in a group it takes (`overridden_partitions`).
    overrides: DataFrame

    def takers(self, by_cut: bool) -> DataFrame:
        """(cluster, base as variant, bucket, cut, taker): `by_cut` for a per-event table,
        whose rows a variant takes below its cut; a state table's are taken whole."""
        cut = F.coalesce(F.col("before_seq"), F.lit(WHOLE)) if by_cut else F.lit(WHOLE)
        return self.rows.select("cluster", F.col("base").alias("variant"),
                                F.col("bucket").alias(BUCKET), cut.cast("long").alias(CUT),
                                F.col("variant").alias(TAKER))


def read_sharing(spark: SparkSession, out_dir: str, run_id: str) -> Sharing | None:
    """The run's sharing, or None when no variant takes a row from another."""
    rows = stored_rows(spark, out_dir, SHARING, run_id)
    found = rows.select("buckets", "base").distinct().collect()
    counts = sorted({int(r["buckets"]) for r in found})
    if not counts:
        return None
    if len(counts) > 1:
        raise ValueError(f"whatif_sharing of run {run_id} names bucket counts {counts}")
    return Sharing(rows, counts[0], tuple(sorted({str(r["base"]) for r in found})),
                   overridden_partitions(spark, out_dir, run_id, rows, counts[0]))


def overridden_partitions(spark: SparkSession, out_dir: str, run_id: str, sharing: DataFrame,
                          buckets: int) -> DataFrame:
    """(cluster, variant: the base, topic, partition, _taker) of every partition a variant
    overrides in a group it takes from its base: it stores rows for it in a state table,
    or removed it. The base's rows of these are not the taker's."""
    stored = [stored_rows(spark, out_dir, t, run_id).select(*PARTITION)
              for t in SHARED_STATE_TABLES]
    keys = stored[0].unionByName(stored[1]) \
        .withColumnRenamed("variant", TAKER).withColumn(BUCKET, topic_bucket(buckets))
    takers = F.broadcast(sharing.select("cluster", F.col("variant").alias(TAKER),
                                        F.col("bucket").alias(BUCKET), "base"))
    kept = keys.join(takers, ["cluster", TAKER, BUCKET]) \
        .select("cluster", F.col("base").alias("variant"), "topic", "partition", TAKER)
    removed = sharing.select("cluster", F.col("base").alias("variant"),
                             F.col("variant").alias(TAKER), F.explode("removed").alias("p")) \
        .select("cluster", "variant", "p.topic", "p.partition", TAKER)
    return kept.unionByName(removed).distinct()


def _tagged(rows: DataFrame, sharing: Sharing, key: str | None) -> DataFrame:
    """Every stored row once as its own variant's (BUCKET, CUT null), and a base's row
    again once per distinct cut of its group that takes it (BUCKET, CUT set)."""
    takers = sharing.takers(key is not None)
    cuts = takers.select(*KEY, BUCKET, CUT).distinct().withColumn(_OWN, F.lit(False))
    own = takers.select(*KEY, BUCKET).distinct() \
        .withColumn(CUT, F.lit(None).cast("long")).withColumn(_OWN, F.lit(True))
    bucket = F.when(F.col("variant").isin(*sharing.bases), topic_bucket(sharing.buckets))
    tagged = rows.withColumn(BUCKET, bucket) \
        .join(F.broadcast(cuts.unionByName(own)), [*KEY, BUCKET], "left")
    own_row = F.col(_OWN).isNull() | F.col(_OWN)
    taken = F.col(CUT) == F.lit(WHOLE)
    if key is not None:
        taken = taken | (F.col(key) < F.col(CUT))
    return tagged.where(own_row | taken) \
        .withColumn(BUCKET, F.when(~own_row, F.col(BUCKET))) \
        .withColumn(CUT, F.when(~own_row, F.col(CUT))).drop(_OWN)


def _untagged(rows: DataFrame) -> DataFrame:
    return rows.withColumn(BUCKET, F.lit(None).cast("int")) \
        .withColumn(CUT, F.lit(None).cast("long"))


def _summed(frame: DataFrame, groups: Sequence[str], columns: Sequence[str]) -> DataFrame:
    return frame.groupBy(*groups).agg(*[F.sum(c).alias(c) for c in columns])


def whole_sums(rows: DataFrame, table: str, sharing: Sharing | None, values: Values,
               by: Sequence[str] = ()) -> DataFrame:
    """Per (cluster, variant, *by): the sums of what `values` makes of each row, over every
    variant's whole rows of `table` (`rows`: its stored rows, read once). `values` keeps
    GROUP and `by` and adds the columns to sum. A variant with no row has no result row."""
    key = SHARED_EVENT_KEYS.get(table)
    if sharing is None or (key is None and table not in SHARED_STATE_TABLES):
        made = values(_untagged(rows))
        columns = [c for c in made.columns if c not in (*GROUP, *by)]
        return _summed(made, [*KEY, *by], columns)
    made = values(_tagged(rows, sharing, key))
    columns = [c for c in made.columns if c not in (*GROUP, *by)]
    per_cut = _summed(made, [*GROUP, *by], columns)
    if key is None:  # a state table: less the base's rows of the partitions overridden
        overridden = rows.join(sharing.overrides, ["cluster", "variant", "topic", "partition"]) \
            .withColumn("variant", F.col(TAKER)).drop(TAKER)
        negated = values(_untagged(overridden))
        per_cut = per_cut.unionByName(_summed(
            negated.select(*GROUP, *by, *[(-F.col(c)).alias(c) for c in columns]),
            [*GROUP, *by], columns))
    targeted = per_cut.join(F.broadcast(sharing.takers(key is not None)), GROUP, "left") \
        .withColumn("variant", F.coalesce(F.col(TAKER), F.col("variant")))
    return _summed(targeted, [*KEY, *by], columns)
