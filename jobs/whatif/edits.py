"""The variants inside the one Spark query: every event row once per variant, under a
composite cluster key, minus the variant's drops, with the variant's seqs; the injected
events as a second file source; and the variants' cluster timelines, built on the driver.

A variant is one more part of the grouping key, like a cluster: the replay groups by
(`<cluster>\\u241f<variant>`, bucket), so the variants replay side by side on the executors
over one read of the log, and `jobs.replay.group` never knows it runs a what-if.
"""

from __future__ import annotations

import operator
from datetime import UTC, datetime, timedelta
from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.replay.timeline import LogScan, log_scan
from jobs.whatif.plan import VariantPlan
from jobs.whatif.scenario import Drop
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
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def variants_frame(spark: SparkSession, plans: list[VariantPlan],
                   clusters: list[str]) -> DataFrame:
    """One row per (cluster, variant): its composite key and its renumbering points."""
    rows = [(c, p.name, p.composite(c), p.points.get(c, [])) for c in clusters for p in plans]
    return spark.createDataFrame(rows, VARIANTS_SCHEMA)


def _entry_condition(drop: Drop) -> Column:
    """One drop entry as a Spark condition; false, never null, on a null field (the twin
    of `jobs.whatif.plan.drop_matches`)."""
    conditions: list[Column] = []
    ts_us = F.unix_micros(F.col("ts"))
    for name, value in drop.fields:
        if name == "seq_from":
            conditions.append(F.col("seq") >= F.lit(value))
        elif name == "seq_to":
            conditions.append(F.col("seq") <= F.lit(value))
        elif name == "ts_from":
            conditions.append(ts_us >= F.lit(value))
        elif name == "ts_to":
            conditions.append(ts_us <= F.lit(value))
        else:
            conditions.append(F.col(name) == F.lit(value))
    return F.coalesce(reduce(operator.and_, conditions), F.lit(False))


def drop_condition(plans: list[VariantPlan]) -> Column:
    """True for a row its variant drops (entries of a variant OR'ed)."""
    cases = [
        (F.col("variant") == F.lit(p.name)) & reduce(operator.or_, map(_entry_condition, p.drops))
        for p in plans if p.drops
    ]
    return reduce(operator.or_, cases, F.lit(False))


def edit_events(events: DataFrame, variants: DataFrame, plans: list[VariantPlan]) -> DataFrame:
    """Event rows (EVENT_SCHEMA) -> every variant's rows (EVENT_SCHEMA), the cluster column
    holding the composite key: a join with the small static variants frame (broadcast),
    the drops filtered out, the seqs renumbered (`seq` + the variant's injections after a
    seq below it)."""
    normalised = events.withColumn(
        "cluster", F.coalesce(F.col("cluster"), F.lit(ET.DEFAULT_CLUSTER)))
    joined = normalised.join(F.broadcast(variants), "cluster")
    kept = joined.where(~drop_condition(plans))
    seq = F.col("seq") + F.size(F.filter(F.col("points"), lambda p: p < F.col("seq")))
    return kept.select(*[
        F.col("composite").alias("cluster") if c == "cluster"
        else seq.alias("seq") if c == "seq" else F.col(c)
        for c in EVENT_COLUMNS
    ])


def injected_rows(plans: list[VariantPlan]) -> list[tuple[object, ...]]:
    """The injected events as EVENT_SCHEMA rows (composite cluster, renumbered seq)."""
    rows: list[tuple[object, ...]] = []
    for plan in plans:
        for cluster, events in sorted(plan.injected.items()):
            for e in events:
                ts = EPOCH + timedelta(microseconds=int(e.ts))
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
    return {p.composite(c): p.config for c in clusters for p in plans}
