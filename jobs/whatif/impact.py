"""`whatif_impact` and `whatif_partition_diff`, computed with Spark aggregations from the
tables the what-if has just published (no window is collected to the driver), and the
printed ranking (`jobs.whatif.ranking`). The definitions are in docs/whatif.md.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from jobs.store.ledger import BatchCounts, ClusterCounts
from jobs.store.variant_rows import ALL_TABLES, stored_rows
from jobs.whatif.facts import LogFacts
from jobs.whatif.matching import EditCounts
from jobs.whatif.output import read_whatif_table, write_whatif_table
from jobs.whatif.partition_diff import partition_diff
from jobs.whatif.plan import VariantPlan, composite
from jobs.whatif.ranking import print_ranking
from jobs.whatif.stored_sums import GROUP, Sharing, Values, read_sharing, whole_sums
from schemas.state import CLUSTER_BUCKET
from schemas.whatif import BASELINE, WHATIF_IMPACT
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
LOW_BITS = 2**32 - 1  # the low half of a 64-bit hash
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


def _fingerprint(table: str) -> list[Column]:
    """A row's count and 64-bit hash (over the table's columns but the keys), to sum per
    variant. A sum of the hashes would overflow a long, and a sum of decimal(38,0) costs a
    Java BigDecimal per row (most of the impact stage's time on a large sweep), so the hash
    is summed as two longs: its high 32 bits (signed) and its low 32 bits (unsigned), which
    add up without overflow over fewer than 2**31 rows a variant; `_hash_sum` makes the
    exact sum of the hashes of them."""
    columns = [c for c in ALL_TABLES[table].fieldNames()
               if c not in ("cluster", "variant", "run_id")]
    h = F.xxhash64(*columns)
    return [F.lit(1).cast("long").alias("_n"), F.shiftright(h, 32).alias("_hh"),
            h.bitwiseAND(F.lit(LOW_BITS)).alias("_hl")]


def _hash_sums() -> list[Column]:
    """The aggregations of the two halves of `_fingerprint`'s hash."""
    return [F.sum("_hh").alias("_hh"), F.sum("_hl").alias("_hl")]


def _hash_sum() -> Column:
    """The sum of the hashes, exactly (high half * 2**32 + low half), as a decimal."""
    high = F.col("_hh").cast("decimal(38,0)") * F.lit(LOW_BITS + 1).cast("decimal(38,0)")
    return (high + F.col("_hl").cast("decimal(38,0)")).cast("decimal(38,0)")


def _printed(sums: DataFrame, table: str) -> list[Column]:
    """A table's fingerprint columns of a per-variant frame (none when it has no row)."""
    has = F.col("_n") > 0
    return [F.when(has, F.col("_n")).alias(f"_n_{table}"),
            F.when(has, _hash_sum()).alias(f"_h_{table}")]


def window_values(ends: DataFrame) -> Values:
    """Per window: its figures at its start seq (partition-seconds per kind, an open window
    counted to the log's end, summed as whole microseconds: a sum of doubles would depend
    on the order Spark adds them in) and, for an offline window, +1 offline at its start
    seq and -1 at its end seq."""
    def values(rows: DataFrame) -> DataFrame:
        w = rows.join(F.broadcast(ends), "cluster")
        start = F.unix_micros("start_ts")
        end = F.when(F.col("end_seq").isNull(), F.col("end_us")) \
            .otherwise(F.unix_micros("end_ts"))
        micros = F.coalesce(F.greatest(F.lit(0), end - start), F.lit(0))
        kind, offline = F.col("kind"), F.col("kind") == OFFLINE
        one = F.lit(1).cast("long")
        opened = F.struct(F.col("start_seq").alias("seq"),
                          F.when(offline, micros).alias("offline_us"),
                          F.when(kind == UNDER_MIN_ISR, micros).alias("under_us"),
                          F.when(offline & F.col("end_seq").isNull(), one).alias("open_at_end"),
                          F.when(offline, one).alias("delta"), F.when(offline, one).alias("marks"),
                          *_fingerprint("partition_windows"))
        closed = F.struct(F.col("end_seq").alias("seq"), *[F.lit(None).cast("long").alias(c)
                          for c in ("offline_us", "under_us", "open_at_end")],
                          (-one).alias("delta"), one.alias("marks"), F.lit(0).cast("long")
                          .alias("_n"), *[F.lit(0).cast("long").alias(c)
                                          for c in ("_hh", "_hl")])
        both = F.array(opened, F.when(offline & F.col("end_seq").isNotNull(), closed))
        return w.select(*GROUP, F.explode(F.filter(both, lambda x: x.isNotNull())).alias("x")) \
            .select(*GROUP, "x.*")
    return values


def window_figures(rows: DataFrame, ends: DataFrame, sharing: Sharing | None) -> DataFrame:
    """Partition-seconds per kind, the partitions offline at the end, and the most
    partitions offline after any one event: the running total, in seq order, of the +1s and
    -1s at the seqs where offline windows open and close, at its highest."""
    per_seq = whole_sums(rows, "partition_windows", sharing, window_values(ends), ["seq"])
    running = Window.partitionBy(*KEY).orderBy("seq") \
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    # One pass: the running total over every seq, its highest where an offline window
    # opens or closes (a seq where only other windows open adds nothing to it).
    sums = per_seq.withColumn("open", F.sum("delta").over(running)).groupBy(*KEY).agg(
        F.max(F.when(F.col("marks") > 0, F.col("open")))
        .alias("max_partitions_offline_at_once"),
        (F.sum("offline_us") / F.lit(1e6)).alias("offline_partition_seconds"),
        (F.sum("under_us") / F.lit(1e6)).alias("under_min_isr_partition_seconds"),
        F.sum("open_at_end").alias("partitions_offline_at_end"),
        F.sum("_n").alias("_n"), *_hash_sums())
    return sums.select(*KEY, "offline_partition_seconds", "under_min_isr_partition_seconds",
                       "partitions_offline_at_end", "max_partitions_offline_at_once",
                       *_printed(sums, "partition_windows"))


def finding_figures(rows: DataFrame, sharing: Sharing | None) -> DataFrame:
    by_kind = whole_sums(rows, "findings", sharing,
                         lambda r: r.select(*GROUP, "kind", *_fingerprint("findings")),
                         ["kind"]).withColumnRenamed("_n", "n")
    sums = by_kind.groupBy(*KEY).agg(
        F.map_from_entries(F.array_sort(F.collect_list(F.struct("kind", "n"))))
        .alias("findings_by_kind"),
        F.sum(F.when(F.col("kind") == UNCLEAN_FINDING, F.col("n"))).alias("unclean_elections"),
        F.sum(F.when(F.col("kind") == NO_LONGER_APPLIES, F.col("n")))
        .alias("events_no_longer_applying"),
        F.sum("n").alias("_n"), *_hash_sums())
    return sums.select(*KEY, "findings_by_kind", "unclean_elections",
                       "events_no_longer_applying", *_printed(sums, "findings"))


def update_metadata_figures(rows: DataFrame, sharing: Sharing | None) -> DataFrame:
    """The requests, and the topics with a partition the controller published with no
    leader and a one-broker ISR: the controller never removes the last ISR member
    (`removeReplicasFromIsr`), so that is a partition offline because its only in-sync
    replica is gone."""
    table = "update_metadata_requests"
    lost = F.col("topic").isNotNull() & (F.col("leader") == NO_LEADER) & (F.size("isr") == 1)
    by_topic = whole_sums(rows, table, sharing, lambda r: r.select(
        *GROUP, "topic", F.when(lost, F.lit(1).cast("long")).alias("lost"),
        *_fingerprint(table)), ["topic"])
    sums = by_topic.groupBy(*KEY).agg(
        F.count(F.when(F.col("lost") > 0, 1)).alias("topics_losing_only_isr"),
        F.sum("_n").alias("_n"), *_hash_sums())
    return sums.select(*KEY, "topics_losing_only_isr", F.col("_n").alias(table),
                       *_printed(sums, table))


def fingerprints(rows: DataFrame, table: str, sharing: Sharing | None) -> DataFrame:
    """Per variant: its whole rows of `table`, counted (named as the table) and hashed."""
    sums = whole_sums(rows, table, sharing,
                      lambda r: r.select(*GROUP, *_fingerprint(table)))
    return sums.select(*KEY, F.col("_n").alias(table), *_printed(sums, table))


def table_figures(spark: SparkSession, out_dir: str, run_id: str, keys: DataFrame,
                  sharing: Sharing | None) -> DataFrame:
    """Every figure and every COMPARED_TABLES fingerprint per (cluster, variant), each
    table's stored rows read once."""
    def stored(table: str) -> DataFrame:
        return stored_rows(spark, out_dir, table, run_id)

    ends = keys.select("cluster", "end_us").distinct()
    parts = [window_figures(stored("partition_windows"), ends, sharing),
             finding_figures(stored("findings"), sharing),
             update_metadata_figures(stored("update_metadata_requests"), sharing),
             *[fingerprints(stored(t), t, sharing) for t in COMPARED_TABLES
               if t not in ("partition_windows", "findings", "update_metadata_requests")]]
    # Every part has one row per (cluster, variant) at most: small enough to broadcast.
    return reduce(lambda left, right: left.join(F.broadcast(right), KEY, "left"), parts,
                  keys.select(*KEY, *EDIT_COLUMNS, "no_edit"))


def figures(wide: DataFrame, requests: bool = True) -> DataFrame:
    """Every figure per (cluster, variant), zeros where a variant has no rows, and
    `same_as_baseline`; without `requests` (a KRaft log), the REQUEST_COLUMNS null."""
    empty_map = F.create_map().cast("map<string,bigint>")
    # A few rows per cluster: one task for the windows over a cluster's variants.
    return wide.repartition(1, "cluster").select(
        *KEY, *EDIT_COLUMNS, "no_edit",
        *[(F.coalesce(F.col(c), F.lit(0)) if requests or c not in REQUEST_COLUMNS
           else F.lit(None)).cast("long").alias(c) for c in COUNT_COLUMNS],
        *[F.coalesce(F.col(c), F.lit(0.0)).cast("double").alias(c) for c in SECONDS_COLUMNS],
        F.coalesce(F.col("findings_by_kind"), empty_map).alias("findings_by_kind"),
        same_as_baseline(wide).alias("same_as_baseline"))


def same_as_baseline(wide: DataFrame) -> Column:
    """True for a variant whose rows of every COMPARED_TABLES table are the baseline's (by
    count and hash), false for the baseline."""
    prints = [c for c in wide.columns if c.startswith("_n_") or c.startswith("_h_")]
    cluster = Window.partitionBy("cluster")
    same = reduce(lambda a, b: a & b, [F.col(c).eqNullSafe(F.first(
        F.when(F.col("variant") == BASELINE, F.col(c)), ignorenulls=True).over(cluster))
        for c in prints], F.col("variant") != BASELINE)
    return F.coalesce(same, F.lit(False))


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
    sharing = read_sharing(spark, out_dir, run_id)
    if sharing is not None:  # the state tables' sums and the diff use it
        sharing.overrides.cache()
    figs = figures(table_figures(spark, out_dir, run_id, keys, sharing), requests).cache()
    try:
        write_whatif_table(spark, ranked(figs, run_id), out_dir, "whatif_impact", run_id)
        figs.unpersist()
        write_whatif_table(spark, partition_diff(spark, out_dir, run_id, keys, sharing),
                           out_dir, "whatif_partition_diff", run_id)
    finally:
        figs.unpersist()
        if sharing is not None:
            sharing.overrides.unpersist()
