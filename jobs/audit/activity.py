"""Checks on what happened during the run: elections, work left in progress, churn of
the controller and the brokers, broken invariants and invalid transitions.

"In the run" means between the first event the run applied and its last event
(`extract.RunBounds`): the timelines cover the whole log, the other tables this run's rows.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from jobs.audit.extract import AuditInputs, bounds_frame, seconds_between
from jobs.audit.options import AuditOptions
from jobs.audit.rows import brokers_text, check_frame
from jobs.engine.data_loss_lines import check_text
from schemas.audit import CRITICAL, WARNING
from statemachine.rows import REJECTED

LEADER_DURING_DELETE = -2  # LeaderAndIsr.LeaderDuringDelete: a topic queued for deletion
DELETION_INELIGIBLE = "ReplicaDeletionIneligible"


def _in_run(seq: Column) -> Column:
    return seq.isNotNull() & (seq >= F.col("first_seq")) & (seq <= F.col("last_seq"))


def unclean_election(spark: SparkSession, inputs: AuditInputs) -> DataFrame:
    """CRITICAL: possible data loss. A leader was elected from outside the ISR (an
    `unclean_leader_election` finding): the messages the old ISR had and the new leader
    did not are gone, and consumers may see offsets reused. The detail carries what the
    brokers' own logs say it lost (the run's `data_loss` row, `jobs.dataloss`): exactly N
    messages from the old leader's truncation line, else bounds, else unknown, and the
    lines that prove it. Check which producers wrote to the partition at that time;
    `since_ts` is the election."""
    rows = inputs.findings.where(F.col("kind") == "unclean_leader_election")
    figures = spark.createDataFrame(
        [(r["cluster"], r["seq"], r["topic"], r["partition"], check_text(r.asDict()))
         for r in inputs.data_loss.collect()],
        "cluster string, seq long, topic string, partition int, loss string")
    rows = rows.join(figures, ["cluster", "seq", "topic", "partition"], "left")
    loss = F.coalesce(F.col("loss"), F.lit("data loss: not computed for this run (no "
                                           "data_loss row: written before jobs.dataloss)"))
    return check_frame(rows, "unclean_election", CRITICAL,
                       F.format_string("at seq %d: %s; %s", F.col("seq"), F.col("detail"), loss),
                       topic=F.col("topic"), partition=F.col("partition"),
                       broker_id=F.col("broker_id"), since_ts=F.col("ts"))


def _stuck_windows(spark: SparkSession, inputs: AuditInputs, kind: str,
                   max_age: float) -> DataFrame:
    """Open windows of `kind` older than `max_age` seconds at the run's last event."""
    age = seconds_between(F.col("start_ts"), F.col("last_ts"))
    return inputs.windows.where((F.col("kind") == kind) & F.col("end_seq").isNull()) \
        .join(bounds_frame(spark, inputs), "cluster").withColumn("age", age) \
        .where(F.col("age") > max_age)


def _window_detail(what: str, max_age: float) -> Column:
    return F.format_string(
        f"{what} for %.0f s at the end of the run (> %s s), since seq %d (%s)",
        F.col("age"), F.lit(f"{max_age:g}"), F.col("start_seq"), F.col("cause_event"))


def stuck_reassignment(spark: SparkSession, inputs: AuditInputs,
                       options: AuditOptions) -> DataFrame:
    """WARNING. A reassignment still in progress at the end of the run, started longer ago
    than `--max-reassignment-age`: an adding replica is not catching up (its broker down, or
    throttled), so the old replicas are never removed. Look at the adding replicas' brokers
    and the replication throttles; `kafka-reassign-partitions --verify` shows it too."""
    rows = _stuck_windows(spark, inputs, "reassigning", options.max_reassignment_age)
    parts = inputs.partitions.select("cluster", "topic", "partition", "adding_replicas",
                                     "removing_replicas")
    rows = rows.join(parts, ["cluster", "topic", "partition"], "left")
    detail = F.concat(_window_detail("reassigning", options.max_reassignment_age),
                      F.format_string(": adding %s, removing %s",
                                      brokers_text(F.col("adding_replicas")),
                                      brokers_text(F.col("removing_replicas"))))
    return check_frame(rows, "stuck_reassignment", WARNING, detail, topic=F.col("topic"),
                       partition=F.col("partition"), since_ts=F.col("start_ts"))


def stuck_deletion(spark: SparkSession, inputs: AuditInputs,
                   options: AuditOptions) -> DataFrame:
    """WARNING. A topic deletion not finished at the end of the run, queued longer ago than
    `--max-deletion-age`, or a replica left ReplicaDeletionIneligible (its StopReplica
    failed or its broker is down: `TopicDeletionManager` retries only when the broker comes
    back). The topic's name cannot be reused until it completes; bring the brokers of the
    ineligible replicas back."""
    windows = _stuck_windows(spark, inputs, "deleting", options.max_deletion_age)
    old = check_frame(windows, "stuck_deletion", WARNING,
                      _window_detail("queued for deletion", options.max_deletion_age),
                      topic=F.col("topic"), partition=F.col("partition"),
                      since_ts=F.col("start_ts"))
    deleting = inputs.windows.where((F.col("kind") == "deleting") & F.col("end_seq").isNull()) \
        .select("cluster", "topic", "partition", "start_ts")
    ineligible = inputs.replicas.where(F.col("state") == DELETION_INELIGIBLE) \
        .join(deleting, ["cluster", "topic", "partition"], "left")
    replicas = check_frame(
        ineligible, "stuck_deletion", WARNING,
        F.format_string("replica on broker %d left %s", F.col("broker_id"), F.col("state")),
        topic=F.col("topic"), partition=F.col("partition"), broker_id=F.col("broker_id"),
        since_ts=F.col("start_ts"))
    return old.unionByName(replicas)


def controller_churn(spark: SparkSession, inputs: AuditInputs,
                     options: AuditOptions) -> DataFrame:
    """WARNING. More controller failovers in the run than `--max-failovers` (the first
    controller of the log is an election, not a failover). Each failover stalls admin
    operations and elections while the new controller loads the cluster from ZooKeeper;
    repeated ones point at ZooKeeper session expiries (GC pauses, network) on the
    controller brokers."""
    first_epoch = Window.partitionBy("cluster")
    elections = inputs.controllers.withColumn("first_epoch",
                                              F.min("controller_epoch").over(first_epoch))
    failovers = elections.where(F.col("controller_epoch") > F.col("first_epoch")) \
        .join(bounds_frame(spark, inputs), "cluster").where(_in_run(F.col("seq")))
    # Sorted as (seq, text) pairs: seq order, not the text's (where 100 comes before 9).
    listed = F.struct(F.col("seq"), F.format_string(
        "%d:broker %d (epoch %d)", F.col("seq"), F.col("controller_id"),
        F.col("controller_epoch")).alias("text"))
    per_cluster = failovers.groupBy("cluster").agg(
        F.count(F.lit(1)).alias("failovers"), F.min("ts").alias("since"),
        F.array_join(F.transform(F.sort_array(F.collect_list(listed)), lambda e: e["text"]),
                     ", ").alias("list"))
    detail = F.format_string("%d controller failovers in the run (> %d): %s",
                             F.col("failovers"), F.lit(options.max_failovers), F.col("list"))
    return check_frame(per_cluster.where(F.col("failovers") > options.max_failovers),
                       "controller_churn", WARNING, detail, since_ts=F.col("since"))


def broker_flapping(spark: SparkSession, inputs: AuditInputs,
                    options: AuditOptions) -> DataFrame:
    """WARNING. A broker restarted (came back after a failure, or re-registered in one
    event: a bounce) more often in the run than `--max-restarts`. Every restart moves its
    leaders away and back and shrinks then grows ISRs; look for crashes, OOM kills or ZooKeeper
    session expiries on that broker."""
    order = Window.partitionBy("cluster", "broker_id").orderBy("seq_from")
    intervals = inputs.brokers.withColumn("previous", F.lag("status").over(order))
    restarts = intervals.where((F.col("status") == "live") & F.col("previous").isNotNull()) \
        .join(bounds_frame(spark, inputs), "cluster").where(_in_run(F.col("seq_from")))
    per_broker = restarts.groupBy("cluster", "broker_id").agg(
        F.count(F.lit(1)).alias("restarts"), F.min("ts_from").alias("since"))
    detail = F.format_string("%d restarts in the run (> %d)", F.col("restarts"),
                             F.lit(options.max_restarts))
    return check_frame(per_broker.where(F.col("restarts") > options.max_restarts),
                       "broker_flapping", WARNING, detail, broker_id=F.col("broker_id"),
                       since_ts=F.col("since"))


def invalid_transition(inputs: AuditInputs) -> DataFrame:
    """WARNING. A state change the transition matrix forbids (`state_changes.outcome` =
    `rejected`, with an `invalid_transition` finding): Kafka logs "failed to change state"
    with an IllegalStateException "... should be in ... states before moving to ..." and
    skips the replica or partition, which then stays where it was; usually an event the log
    lost or one processed out of order. One row per replica or partition and transition."""
    invalid = inputs.state_changes.where(F.col("outcome") == REJECTED)
    grouped = invalid.groupBy("cluster", "topic", "partition", "broker_id", "machine",
                              "from_state", "to_state").agg(
        F.count(F.lit(1)).alias("times"), F.min("ts").alias("since"),
        F.min("seq").alias("first_seq"), F.first("reason").alias("reason"))
    detail = F.format_string("%d invalid %s transition(s) %s -> %s, first at seq %d: %s",
                             F.col("times"), F.col("machine"), F.col("from_state"),
                             F.col("to_state"), F.col("first_seq"), F.col("reason"))
    return check_frame(grouped, "invalid_transition", WARNING, detail, topic=F.col("topic"),
                       partition=F.col("partition"), broker_id=F.col("broker_id"),
                       since_ts=F.col("since"))


def activity_checks(spark: SparkSession, inputs: AuditInputs,
                    options: AuditOptions) -> list[DataFrame]:
    return [
        unclean_election(spark, inputs),
        stuck_reassignment(spark, inputs, options),
        stuck_deletion(spark, inputs, options),
        controller_churn(spark, inputs, options),
        broker_flapping(spark, inputs, options),
        invalid_transition(inputs),
    ]
