"""The variants inside the one Spark query: every event row once per variant, under a
composite cluster key, minus the variant's drops, with the variant's seqs; the injected
events as a second file source; and the variants' cluster timelines, built on the driver.

A variant is one more part of the grouping key, like a cluster: the replay groups by
(`<cluster>\\u241f<variant>`, bucket), so the variants replay side by side on the executors
over one read of the log, and `jobs.engine.group_fn` never knows it runs a what-if.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.common.instants import instant
from jobs.engine.timeline import LogScan, log_scan
from jobs.whatif.plan import VariantPlan
from jobs.whatif.scenario import DROP_FIELDS
from schemas import event_types as ET
from schemas.events import EVENT_COLUMNS, EVENT_SCHEMA
from statemachine.context import ReplayConfig
from statemachine.events import Event

VARIANTS_SCHEMA = T.StructType([
    T.StructField("cluster", T.StringType(), False),
    T.StructField("variant", T.StringType(), False),
    T.StructField("composite", T.StringType(), False),
    T.StructField("points", T.ArrayType(T.LongType(), False), False),
])
LONG_FIELDS = frozenset({"seq", "seq_from", "seq_to", "ts_from", "ts_to"})
# Bound field -> (the column it bounds, True for a lower bound).
BOUNDS = {"seq_from": ("seq", True), "seq_to": ("seq", False), "ts_from": ("ts", True),
          "ts_to": ("ts", False)}


def variants_frame(spark: SparkSession, plans: list[VariantPlan],
                   clusters: list[str]) -> DataFrame:
    """One row per (cluster, variant): its composite key and its renumbering points."""
    rows = [(c, p.name, p.composite(c), p.points.get(c, [])) for c in clusters for p in plans]
    return spark.createDataFrame(rows, VARIANTS_SCHEMA)


# A drop entry as a row of the drops frame: `d_<field>` null when the entry leaves the field
# out (times as microseconds).
DROPS_SCHEMA = T.StructType([
    T.StructField("d_variant", T.StringType(), False),
    *[T.StructField(f"d_{name}", T.LongType() if name in LONG_FIELDS else
                    T.IntegerType() if kind is int else T.StringType(), True)
      for name, kind in DROP_FIELDS.items()],
])
FAILOVERS_SCHEMA = T.StructType([
    T.StructField("f_variant", T.StringType(), False),
    T.StructField("f_cluster", T.StringType(), False),
    T.StructField("f_seq", T.LongType(), False),
    T.StructField("f_broker_id", T.IntegerType(), False),
    T.StructField("f_brokers", T.ArrayType(T.IntegerType(), False), False),
])


def drops_frame(spark: SparkSession, plans: list[VariantPlan]) -> DataFrame | None:
    """One row per (variant, drop entry); None when no variant drops anything."""
    rows = [(p.name, *[d.get(name) for name in DROP_FIELDS]) for p in plans for d in p.drops]
    return spark.createDataFrame(rows, DROPS_SCHEMA) if rows else None


def _entry_matches() -> Column:
    """A row matches its variant's entry when every field the entry gives is equal (or
    within the bounds); a field compared with the row's null never matches, as in
    `jobs.whatif.plan.drop_matches` (null, not true, and the anti join keeps the row)."""
    ts_us = F.unix_micros(F.col("ts"))
    condition = F.col("variant") == F.col("d_variant")
    for name in DROP_FIELDS:
        given = F.col(f"d_{name}")
        if name in BOUNDS:
            column, above = BOUNDS[name]
            value = ts_us if column == "ts" else F.col(column)
            test = value >= given if above else value <= given
        else:
            test = F.col(name) == given
        condition = condition & (given.isNull() | test)
    return condition


def edit_events(events: DataFrame, variants: DataFrame, drops: DataFrame | None,
                failovers: DataFrame | None) -> DataFrame:
    """Event rows (EVENT_SCHEMA) -> every variant's rows (EVENT_SCHEMA), the cluster column
    holding the composite key: a join with the small static variants frame (broadcast),
    an anti join with the drops frame (a join, not one condition per variant, so the plan
    stays small at thousands of variants), the failovers a variant edits replaced, the seqs
    renumbered (`seq` + the variant's injections after a seq below it)."""
    normalised = events.withColumn(
        "cluster", F.coalesce(F.col("cluster"), F.lit(ET.DEFAULT_CLUSTER)))
    rows = normalised.join(F.broadcast(variants), "cluster")
    if drops is not None:
        rows = rows.join(F.broadcast(drops), _entry_matches(), "left_anti")
    broker_id, brokers = F.col("broker_id"), F.col("brokers")
    if failovers is not None:
        rows = rows.join(F.broadcast(failovers), (F.col("variant") == F.col("f_variant"))
                         & (F.col("cluster") == F.col("f_cluster"))
                         & (F.col("seq") == F.col("f_seq"))
                         & (F.col("event_type") == F.lit(ET.CONTROLLER_FAILOVER)), "left")
        edited = F.col("f_seq").isNotNull()
        broker_id = F.when(edited, F.col("f_broker_id")).otherwise(broker_id)
        brokers = F.when(edited, F.col("f_brokers")).otherwise(brokers)
    seq = F.col("seq") + F.size(F.filter(F.col("points"), lambda p: p < F.col("seq")))
    replaced = {"cluster": F.col("composite"), "seq": seq, "broker_id": broker_id,
                "brokers": brokers}
    return rows.select(*[replaced.get(c, F.col(c)).alias(c) for c in EVENT_COLUMNS])


def failovers_frame(spark: SparkSession, plans: list[VariantPlan]) -> DataFrame | None:
    """One row per failover of the log a variant edits; None when none does."""
    rows = [(p.name, cluster, seq, e.broker_id, list(e.brokers or ()))
            for p in plans for cluster, by_seq in sorted(p.failovers.items())
            for seq, e in sorted(by_seq.items())]
    return spark.createDataFrame(rows, FAILOVERS_SCHEMA) if rows else None


def injected_rows(plans: list[VariantPlan]) -> list[tuple[object, ...]]:
    """The injected events as EVENT_SCHEMA rows (composite cluster, renumbered seq)."""
    rows: list[tuple[object, ...]] = []
    for plan in plans:
        for cluster, events in sorted(plan.injected.items()):
            for e in events:
                ts = instant(int(e.ts))
                values = e._replace(ts=ts)._asdict()
                values["cluster"] = plan.composite(cluster)
                rows.append(tuple(
                    list(values[c]) if c in ("replicas", "isr", "brokers")
                    and values[c] is not None else values[c] for c in EVENT_COLUMNS))
    return rows


def write_injected(spark: SparkSession, plans: list[VariantPlan], path: str) -> bool:
    """Write the injected events under `path` (the checkpoint); False when there are none."""
    rows = injected_rows(plans)
    if not rows:
        return False
    spark.createDataFrame(rows, EVENT_SCHEMA).coalesce(1).write.mode("overwrite").parquet(path)
    return True


def variant_scan(scan: LogScan, plans: list[VariantPlan], buckets: int) -> LogScan:
    """The log's scan as the variants see it: one composite cluster per (cluster, variant),
    whose cluster events are the log's with the variant's edits."""
    events: dict[str, list[Event]] = {}
    for cluster in scan.buckets:
        for plan in plans:
            events[plan.composite(cluster)] = plan.edit_cluster_events(
                cluster, scan.cluster_events.get(cluster, []))
    return log_scan(events, events, buckets)


def variant_configs(plans: list[VariantPlan], clusters: list[str]) -> dict[str, ReplayConfig]:
    """The replay config of every composite cluster."""
    return {p.composite(c): p.config_for(c) for c in clusters for p in plans}
