"""`whatif_impact` and `whatif_partition_diff`, computed with Spark aggregations from the
tables the what-if has just published (no window is collected to the driver), and the
printed ranking (`jobs.whatif.ranking`). The definitions are in docs/whatif.md.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from jobs.store.ledger import BatchCounts, ClusterCounts
from jobs.whatif.facts import LogFacts
from jobs.whatif.matching import EditCounts
from jobs.whatif.output import read_whatif_table, write_whatif_table
from jobs.whatif.plan import VariantPlan, composite
from jobs.whatif.ranking import print_ranking
from schemas.state import CLUSTER_BUCKET
from schemas.whatif import BASELINE, DIFF_FIELDS, WHATIF_IMPACT
from statemachine.context import ReplayConfig
from statemachine.flows import NO_LONGER_APPLIES

KEY = ["cluster", "variant"]
BROADCAST_THRESHOLD = "spark.sql.autoBroadcastJoinThreshold"
KEYS_SCHEMA = ("cluster string, variant string, end_us long, events_dropped long, "
               "events_injected long, events_edited long, partitions_edited long, "
               "buckets_replayed long, events_shared long, no_edit boolean")
EDIT_COLUMNS = ("events_dropped", "events_injected", "events_edited", "partitions_edited",
                "buckets_replayed", "events_shared")
# The tables whose rows say what a variant did (`same_as_baseline`): the final states,
# the windows, the findings, the requests and the cluster timeline.
COMPARED_TABLES = ("partition_states", "replica_states", "partition_windows", "findings",
                   "leader_and_isr_requests", "update_metadata_requests",
                   "stop_replica_requests", "broker_timeline", "controller_timeline")
OFFLINE, UNDER_MIN_ISR = "offline", "under_min_isr"
UNCLEAN_FINDING = "unclean_leader_election"
NO_LEADER = -1
# Impact figure -> its difference column (the variant's minus the baseline's).
VERSUS_BASELINE = ("offline_partition_seconds", "max_partitions_offline_at_once",
                   "unclean_elections", "partitions_offline_at_end")
COUNT_COLUMNS = ("partitions_offline_at_end", "max_partitions_offline_at_once",
                 "unclean_elections", "topics_losing_only_isr", "leader_and_isr_requests",
                 "update_metadata_requests", "stop_replica_requests",
                 "events_no_longer_applying")
# The figures read from the controller's requests: a KRaft controller sends none (brokers
# fetch the metadata log), so on a KRaft log they do not apply and stay null, not 0.
REQUEST_COLUMNS = ("topics_losing_only_isr", "leader_and_isr_requests",
                   "update_metadata_requests", "stop_replica_requests")
SECONDS_COLUMNS = ("offline_partition_seconds", "under_min_isr_partition_seconds")


def replayed(counts: ClusterCounts | None) -> tuple[int | None, int | None]:
    """(groups of topics the variant folded itself, wholly or from a cut; events it took
    from the reference's fold): None for a baseline read from another output."""
    if counts is None:
        return None, None
    topic_groups = sum(1 for b in counts.buckets if b != CLUSTER_BUCKET)
    return topic_groups - counts.groups_shared, counts.events_shared


def keys_frame(spark: SparkSession, plans: list[VariantPlan], facts: LogFacts,
               counts: BatchCounts | None = None) -> DataFrame:
    """(cluster, variant, end_us, the variant's edit counts, what it replayed) of every
    variant and the baseline; end_us is the log's last event time in the cluster, where
    an open window is counted to."""
    by_name = {p.name: p for p in plans}
    by_name.setdefault(BASELINE, VariantPlan(BASELINE, (), ReplayConfig()))
    rows = []
    for c, f in sorted(facts.clusters.items()):
        for name, p in sorted(by_name.items()):
            n = p.counts.get(c, EditCounts())
            rows.append((c, name, f.end_ts, n.dropped, n.injected, n.edited, n.partitions,
                         *replayed((counts or {}).get(composite(c, name))),
                         p.no_edit and name != BASELINE))
    return spark.createDataFrame(rows, KEYS_SCHEMA)


def window_figures(windows: DataFrame, keys: DataFrame) -> DataFrame:
    """Partition-seconds per kind (an open window counts up to the log's end) and the
    partitions offline at the end. Summed as whole microseconds, then divided: a sum of
    doubles would depend on the order Spark adds them in."""
    ends = F.broadcast(keys)
    w = windows.join(ends, KEY)
    start = F.unix_micros("start_ts")
    end = F.when(F.col("end_seq").isNull(), F.col("end_us")) \
        .otherwise(F.unix_micros("end_ts"))
    micros = F.coalesce(F.greatest(F.lit(0), end - start), F.lit(0))
    kind = F.col("kind")
    return w.groupBy(*KEY).agg(
        (F.sum(F.when(kind == OFFLINE, micros)) / F.lit(1e6))
        .alias("offline_partition_seconds"),
        (F.sum(F.when(kind == UNDER_MIN_ISR, micros)) / F.lit(1e6))
        .alias("under_min_isr_partition_seconds"),
        F.count(F.when((kind == OFFLINE) & F.col("end_seq").isNull(), 1))
        .alias("partitions_offline_at_end"),
    )


def most_offline_at_once(windows: DataFrame) -> DataFrame:
    """The most partitions offline after any one event: +1 at each offline window's start
    seq, -1 at its end seq, summed per seq, running total in seq order, maximum."""
    offline = windows.where(F.col("kind") == OFFLINE)
    deltas = offline.select(*KEY, F.col("start_seq").alias("seq"), F.lit(1).alias("delta")) \
        .unionByName(offline.where(F.col("end_seq").isNotNull())
                     .select(*KEY, F.col("end_seq").alias("seq"), F.lit(-1).alias("delta")))
    per_seq = deltas.groupBy(*KEY, "seq").agg(F.sum("delta").alias("delta"))
    running = Window.partitionBy(*KEY).orderBy("seq") \
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    return per_seq.withColumn("open", F.sum("delta").over(running)) \
        .groupBy(*KEY).agg(F.max("open").alias("max_partitions_offline_at_once"))


def finding_figures(findings: DataFrame) -> DataFrame:
    by_kind = findings.groupBy(*KEY, "kind").agg(F.count(F.lit(1)).alias("n"))
    return by_kind.groupBy(*KEY).agg(
        F.map_from_entries(F.array_sort(F.collect_list(F.struct("kind", "n"))))
        .alias("findings_by_kind"),
        F.sum(F.when(F.col("kind") == UNCLEAN_FINDING, F.col("n"))).alias("unclean_elections"),
        F.sum(F.when(F.col("kind") == NO_LONGER_APPLIES, F.col("n")))
        .alias("events_no_longer_applying"),
    )


def only_isr_topics(update_metadata: DataFrame) -> DataFrame:
    """Topics with a partition the controller published with no leader and a one-broker
    ISR: the controller never removes the last ISR member (`removeReplicasFromIsr`), so
    that is a partition offline because its only in-sync replica is gone."""
    lost = update_metadata.where(F.col("topic").isNotNull()
                                 & (F.col("leader") == NO_LEADER) & (F.size("isr") == 1))
    return lost.groupBy(*KEY).agg(F.countDistinct("topic").alias("topics_losing_only_isr"))


def request_counts(spark: SparkSession, out_dir: str, run_id: str) -> list[DataFrame]:
    return [read_whatif_table(spark, out_dir, table, run_id).groupBy(*KEY)
            .agg(F.count(F.lit(1)).alias(table))
            for table in ("leader_and_isr_requests", "update_metadata_requests",
                          "stop_replica_requests")]


def figures(spark: SparkSession, out_dir: str, run_id: str, keys: DataFrame,
            requests: bool = True) -> DataFrame:
    """Every figure per (cluster, variant), zeros where a variant has no rows; without
    `requests` (a KRaft log), the REQUEST_COLUMNS null."""
    windows = read_whatif_table(spark, out_dir, "partition_windows", run_id)
    parts = [window_figures(windows, keys), most_offline_at_once(windows),
             finding_figures(read_whatif_table(spark, out_dir, "findings", run_id))]
    if requests:
        parts += [only_isr_topics(read_whatif_table(spark, out_dir,
                                                    "update_metadata_requests", run_id)),
                  *request_counts(spark, out_dir, run_id)]
    # Every part has one row per (cluster, variant) at most: small enough to broadcast.
    joined = reduce(lambda left, right: left.join(F.broadcast(right), KEY, "left"), parts,
                    keys.select(*KEY, *EDIT_COLUMNS, "no_edit"))
    empty_map = F.create_map().cast("map<string,bigint>")
    return joined.select(
        *KEY, *EDIT_COLUMNS, "no_edit",
        *[(F.coalesce(F.col(c), F.lit(0)) if requests or c not in REQUEST_COLUMNS
           else F.lit(None)).cast("long").alias(c) for c in COUNT_COLUMNS],
        *[F.coalesce(F.col(c), F.lit(0.0)).cast("double").alias(c) for c in SECONDS_COLUMNS],
        F.coalesce(F.col("findings_by_kind"), empty_map).alias("findings_by_kind"),
    )


def _fingerprint(df: DataFrame, table: str) -> DataFrame:
    """Per (cluster, variant): the table's rows and the sum of their hashes (order-free;
    as decimals, which a sum of longs would overflow)."""
    columns = [c for c in df.columns if c not in ("cluster", "variant", "run_id")]
    return df.groupBy(*KEY).agg(
        F.count(F.lit(1)).alias(f"_n_{table}"),
        F.sum(F.xxhash64(*columns).cast("decimal(38,0)")).alias(f"_h_{table}"))


def same_as_baseline(spark: SparkSession, out_dir: str, run_id: str,
                     keys: DataFrame) -> DataFrame:
    """(cluster, variant, same_as_baseline): true for a variant whose rows of every
    COMPARED_TABLES table are the baseline's (by count and hash), false for the baseline."""
    parts = [_fingerprint(read_whatif_table(spark, out_dir, t, run_id), t)
             for t in COMPARED_TABLES]
    wide = reduce(lambda left, right: left.join(F.broadcast(right), KEY, "left"), parts,
                  keys.select(*KEY))
    prints = [c for c in wide.columns if c.startswith("_")]
    base = wide.where(F.col("variant") == BASELINE) \
        .select("cluster", *[F.col(c).alias(f"_base{c}") for c in prints])
    same = reduce(lambda a, b: a & b,
                  [F.col(c).eqNullSafe(F.col(f"_base{c}")) for c in prints],
                  F.col("variant") != BASELINE)
    return wide.join(base, "cluster", "left") \
        .select(*KEY, F.coalesce(same, F.lit(False)).alias("same_as_baseline"))


def ranked(figs: DataFrame, run_id: str) -> DataFrame:
    """The impact rows: rank within the cluster (most offline partition-seconds first, then
    most offline at once, then the name) and the differences from the baseline."""
    base = figs.where(F.col("variant") == BASELINE) \
        .select("cluster", *[F.col(c).alias(f"_base_{c}") for c in VERSUS_BASELINE])
    order = Window.partitionBy("cluster").orderBy(
        F.col("offline_partition_seconds").desc(),
        F.col("max_partitions_offline_at_once").desc(), F.col("variant"))
    versus: list[Column] = [(F.col(c) - F.col(f"_base_{c}")).alias(f"{c}_vs_baseline")
                            for c in VERSUS_BASELINE]
    return figs.join(base, "cluster", "left") \
        .withColumn("rank", F.row_number().over(order).cast("int")) \
        .withColumn("run_id", F.lit(run_id)) \
        .select(*[c for c in WHATIF_IMPACT.fieldNames()
                  if not c.endswith("_vs_baseline")], *versus) \
        .select(*WHATIF_IMPACT.fieldNames())


def _field_value(name: str) -> Column:
    col = F.col(name)
    if name == "isr":  # a set: printed sorted
        col = F.array_sort(col)
    if name in ("isr", "replicas"):
        return F.when(col.isNotNull(), F.concat(F.lit("["), F.array_join(col, ","), F.lit("]")))
    return col.cast("string")


def partition_diff(states: DataFrame, keys: DataFrame, run_id: str) -> DataFrame:
    """One row per (variant, partition, field) whose final value differs from the
    baseline's; a partition only one of them has differs in every field."""
    long = states.select(*KEY, "topic", "partition", F.explode(F.array(*[
        F.struct(F.lit(name).alias("field"), _field_value(name).alias("value"))
        for name in DIFF_FIELDS])).alias("f")).select(*KEY, "topic", "partition", "f.*")
    base = long.where(F.col("variant") == BASELINE).drop("variant") \
        .withColumnRenamed("value", "baseline")
    others = long.where(F.col("variant") != BASELINE)
    variants = F.broadcast(keys.select(*KEY).where(F.col("variant") != BASELINE))
    cells = others.select(*KEY, "topic", "partition", "field").unionByName(
        variants.join(base.select("cluster", "topic", "partition", "field"), "cluster")
    ).distinct()
    compared = cells.join(base, ["cluster", "topic", "partition", "field"], "left") \
        .join(others, [*KEY, "topic", "partition", "field"], "left")
    return compared.where(~F.col("baseline").eqNullSafe(F.col("value"))) \
        .withColumn("run_id", F.lit(run_id)) \
        .select("cluster", "run_id", "variant", "topic", "partition", "field", "baseline",
                "value")


def impact_stage(spark: SparkSession, out_dir: str, run_id: str, plans: list[VariantPlan],
                 facts: LogFacts, counts: BatchCounts | None = None,
                 requests: bool = True) -> None:
    """The impact and diff tables, then the ranking. Spark's own choice of broadcast joins
    is off meanwhile: a filtered or exploded table can look small to the planner and be
    gigabytes when built on the driver ("Not enough memory to build and broadcast the
    table"); only the frames of one row per (cluster, variant) are broadcast, by hint."""
    threshold = spark.conf.get(BROADCAST_THRESHOLD) or "10MB"
    spark.conf.set(BROADCAST_THRESHOLD, "-1")
    try:
        _impact_tables(spark, out_dir, run_id, plans, facts, counts, requests)
    finally:
        spark.conf.set(BROADCAST_THRESHOLD, threshold)
    written = read_whatif_table(spark, out_dir, "whatif_impact", run_id).collect()
    print_ranking([r.asDict() for r in written])


def _impact_tables(spark: SparkSession, out_dir: str, run_id: str, plans: list[VariantPlan],
                   facts: LogFacts, counts: BatchCounts | None, requests: bool) -> None:
    keys = keys_frame(spark, plans, facts, counts)
    figs = figures(spark, out_dir, run_id, keys, requests) \
        .join(same_as_baseline(spark, out_dir, run_id, keys), KEY, "left")
    impact = ranked(figs, run_id)
    write_whatif_table(spark, impact, out_dir, "whatif_impact", run_id)
    states = read_whatif_table(spark, out_dir, "partition_states", run_id)
    write_whatif_table(spark, partition_diff(states, keys, run_id), out_dir,
                       "whatif_partition_diff", run_id)
