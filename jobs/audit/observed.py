"""`observed_divergence` and `observed_unknown_partition`: a snapshot of the cluster
(`kafka-topics --describe` output, ZooKeeper dumps; read by `jobs.ingest.snapshot`)
compared with the replayed state at the snapshot's instant.

The replayed state at an instant T is the last `update_metadata_requests` row of the
partition at or before T (every change of leader, ISR or assignment is followed by an
UpdateMetadata carrying leader, leader_epoch, isr and replicas), read across every run of
the table up to this run's last event, so an incremental history works; at the end of the
run (no `--observed-at`, or an instant after the run's last event) it is `partition_states`.

Fields compared, each only where the snapshot states it (`ObservedPartition` leaves the rest
None): the leader (kafka-topics prints `none` for a leader that is not a live broker, so an
observed `none` agrees with a replayed leader that is not live then), the ISR as a set, the
leader epoch (ZooKeeper dumps have it, describe output does not), the assignment in order
(its first replica is the preferred leader). While a topic is queued for deletion the
controller advertises LeaderDuringDelete; its leader and epoch are then not compared.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from jobs.audit.extract import AuditInputError, AuditInputs, serving_brokers
from jobs.audit.rows import brokers_text, check_frame, leader_text
from jobs.ingest.snapshot import ObservedPartition, Unreadable, read_snapshots
from schemas.audit import CRITICAL, WARNING

LEADER_DURING_DELETE = -2
_KEY = ["topic", "partition"]
_OBSERVED_SCHEMA = ("topic string, partition int, o_leader int, o_epoch int, o_isr array<int>, "
                    "o_replicas array<int>, source string")


class ObservedSnapshot(NamedTuple):
    """The observed partitions and the lines that could not be read."""

    partitions: list[ObservedPartition]
    unreadable: list[Unreadable]
    format: str


def load_observed(paths: tuple[str, ...]) -> ObservedSnapshot | None:
    """The snapshot files, read on the driver (they are small text). A file that cannot be
    opened is an input error."""
    if not paths:
        return None
    try:
        snapshot = read_snapshots(paths)
    except OSError as exc:
        raise AuditInputError(f"cannot read --observed file: {exc}") from exc
    return ObservedSnapshot(snapshot.partitions, snapshot.unreadable, snapshot.format)


def observed_cluster(inputs: AuditInputs, cluster: str | None) -> str:
    """The cluster a snapshot describes: `--cluster`, or the run's only cluster."""
    if cluster is not None:
        if cluster not in inputs.bounds:
            raise AuditInputError(f"cluster {cluster} has no events in run {inputs.run_id}")
        return cluster
    if len(inputs.clusters) != 1:
        raise AuditInputError(f"the run has clusters {inputs.clusters}: say which one the "
                              "--observed snapshot describes with --cluster")
    return inputs.clusters[0]


def _observed_frame(spark: SparkSession, snapshot: ObservedSnapshot) -> DataFrame:
    rows = [(p.topic, p.partition, p.leader, p.leader_epoch,
             list(p.isr) if p.isr is not None else None,
             list(p.replicas) if p.replicas is not None else None, p.source)
            for p in snapshot.partitions]
    return spark.createDataFrame(rows, _OBSERVED_SCHEMA)


def replayed_at(inputs: AuditInputs, cluster: str, at: datetime | None) -> DataFrame:
    """(topic, partition, r_leader, r_epoch, r_isr, r_replicas) of `cluster` at `at`
    (None: the end of the run)."""
    bounds = inputs.bounds[cluster]
    if at is None or at >= bounds.last_ts:
        end = inputs.partitions.where((F.col("cluster") == cluster)
                                      & (F.size(F.col("replicas")) > 0))
        return end.select(*_KEY, F.col("leader").alias("r_leader"),
                          F.col("leader_epoch").alias("r_epoch"), F.col("isr").alias("r_isr"),
                          F.col("replicas").alias("r_replicas"))
    rows = inputs.update_metadata_history.where(
        (F.col("cluster") == cluster) & (F.col("seq") <= bounds.last_seq)
        & (F.col("ts") <= F.lit(at).cast("timestamp")))
    this_run_first = F.when(F.col("run_id") == inputs.run_id, 0).otherwise(1)
    latest = Window.partitionBy(*_KEY).orderBy(F.col("seq").desc(), F.col("batch").desc(),
                                                this_run_first)
    last = rows.withColumn("rank", F.row_number().over(latest)).where(F.col("rank") == 1)
    deleting = F.col("leader") == LEADER_DURING_DELETE
    return last.select(
        *_KEY, F.when(deleting, None).otherwise(F.col("leader")).alias("r_leader"),
        F.when(deleting, None).otherwise(F.col("leader_epoch")).alias("r_epoch"),
        F.col("isr").alias("r_isr"), F.col("replicas").alias("r_replicas"))


def _differences(live: Column) -> Column:
    """An array of one text per field that differs (nulls where a field agrees)."""
    o_leader, r_leader = F.col("o_leader"), F.col("r_leader")
    not_serving = r_leader.isNull() | (r_leader < 0) | ~F.array_contains(live, r_leader)
    leader_agrees = o_leader.isNull() | (o_leader == r_leader) | ((o_leader < 0) & not_serving)
    empty = F.array().cast("array<int>")

    def as_set(column: str) -> Column:
        return F.array_sort(F.array_distinct(F.coalesce(F.col(column), empty)))

    def differs(field: str, agrees: Column, observed: Column, replayed: Column) -> Column:
        return F.when(~agrees, F.format_string(f"{field}: observed %s, replayed %s",
                                               observed, replayed))

    return F.array(
        differs("leader", leader_agrees, leader_text(o_leader), leader_text(r_leader)),
        differs("isr", F.col("o_isr").isNull() | (as_set("o_isr") == as_set("r_isr")),
                brokers_text(F.col("o_isr")), brokers_text(F.col("r_isr"))),
        differs("leader_epoch", F.col("o_epoch").isNull() | F.col("r_epoch").isNull()
                | (F.col("o_epoch") == F.col("r_epoch")),
                F.col("o_epoch").cast("string"), F.col("r_epoch").cast("string")),
        differs("replicas", F.col("o_replicas").isNull()
                | (F.col("o_replicas") == F.coalesce(F.col("r_replicas"), empty)),
                brokers_text(F.col("o_replicas")), brokers_text(F.col("r_replicas"))),
    )


def observed_checks(spark: SparkSession, inputs: AuditInputs, snapshot: ObservedSnapshot,
                    cluster: str, at: datetime | None) -> list[DataFrame]:
    """CRITICAL `observed_divergence`: one row per (partition, field) where the cluster as
    observed and the replay disagree; either the event log misses events (the replay's
    tables are then wrong from that point) or the cluster did something the controller's
    log does not show. WARNING `observed_unknown_partition`: a partition the snapshot shows
    and the replay does not know at that instant (created before the log begins, or events
    missing)."""
    bounds = inputs.bounds[cluster]
    instant = at if at is not None and at < bounds.last_ts else None
    live = serving_brokers(inputs, instant)
    joined = _observed_frame(spark, snapshot).withColumn("cluster", F.lit(cluster)) \
        .join(replayed_at(inputs, cluster, instant), _KEY, "left") \
        .join(live, "cluster", "left")
    since = F.lit(instant or bounds.last_ts).cast("timestamp")
    unknown = joined.where(F.col("r_replicas").isNull())
    unknown_rows = check_frame(
        unknown, "observed_unknown_partition", WARNING,
        F.format_string("observed at %s, unknown to the replay at %s", F.col("source"),
                        since.cast("string")),
        topic=F.col("topic"), partition=F.col("partition"), since_ts=since)
    live_column = F.coalesce(F.col("live"), F.array().cast("array<int>"))
    diffs = joined.where(F.col("r_replicas").isNotNull()).select(
        "cluster", *_KEY, "source",
        F.explode(F.filter(_differences(live_column), lambda d: d.isNotNull())).alias("what"))
    divergence_rows = check_frame(
        diffs, "observed_divergence", CRITICAL,
        F.format_string("%s (%s)", F.col("what"), F.col("source")),
        topic=F.col("topic"), partition=F.col("partition"), since_ts=since)
    return [divergence_rows, unknown_rows]
