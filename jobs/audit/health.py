"""Checks on the end state: the `kafka-topics --describe` health filters and the leader
balance, evaluated on `partition_states` of the run (the full state at its end).

Kafka's definitions (`TopicCommand.PartitionDescription`, Kafka 3.7.1), the same as the
replay's `partition_windows` (`statemachine/windows.py`):

* a partition has a leader when its leader is a broker id (not -1) and that broker serves
  (live or shutting down at the end of the run): the metadata an admin client reads names no
  leader otherwise;
* its replication factor is the assignment's size, less the adding replicas while a
  reassignment is in progress (`getReplicationFactor`);
* min.insync.replicas is the topic's (`[topics."NAME"]`) or the cluster's (`[kafka]`).

Only partitions that exist are judged (a non-empty assignment); a topic queued for deletion
is left to `stuck_deletion`, as the replay's windows leave it: a deletion is intended, not an
outage. Each filter is evaluated on its own, as kafka-topics does: an offline partition is
also under min ISR, and under-replicated when its ISR is short.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jobs.audit.extract import AuditInputs, serving_brokers
from jobs.audit.options import AuditOptions
from jobs.audit.rows import brokers_text, check_frame, count_of, leader_text
from schemas.audit import CRITICAL, WARNING


def min_isr_column(options: AuditOptions) -> Column:
    """The topic's min.insync.replicas: its override, else the cluster's."""
    column: Column | None = None
    for topic, value in options.topic_min_insync_replicas:
        condition = F.col("topic") == topic
        column = F.when(condition, value) if column is None else column.when(condition, value)
    default = F.lit(options.min_insync_replicas)
    return default if column is None else column.otherwise(default)


def end_partitions(inputs: AuditInputs, options: AuditOptions) -> DataFrame:
    """The partitions that exist at the end of the run and are not being deleted, with
    `has_leader`, `isr_size`, `replication_factor`, `min_isr` and `live` (the serving
    brokers of their cluster)."""
    moving = (count_of(F.col("adding_replicas")) + count_of(F.col("removing_replicas"))) > 0
    parts = inputs.partitions.where(
        (count_of(F.col("replicas")) > 0) & ~F.coalesce(F.col("queued_for_deletion"), F.lit(False)))
    live = F.coalesce(F.col("live"), F.array().cast("array<int>"))
    return parts.join(serving_brokers(inputs), "cluster", "left").select(
        "*",
        (F.col("leader").isNotNull() & (F.col("leader") >= 0)
         & F.array_contains(live, F.col("leader"))).alias("has_leader"),
        count_of(F.col("isr")).alias("isr_size"),
        F.when(moving, count_of(F.col("replicas")) - count_of(F.col("adding_replicas")))
        .otherwise(count_of(F.col("replicas"))).alias("replication_factor"),
        min_isr_column(options).alias("min_isr"),
    )


def _partition_checks(df: DataFrame, check: str, severity: str, detail: Column,
                      since_ts: Column | None = None,
                      broker_id: Column | None = None) -> DataFrame:
    return check_frame(df, check, severity, detail, topic=F.col("topic"),
                       partition=F.col("partition"), broker_id=broker_id, since_ts=since_ts)


def _state_text() -> Column:
    return F.format_string("leader %s, isr %s, replicas %s (%s)", leader_text(F.col("leader")),
                           brokers_text(F.col("isr")), brokers_text(F.col("replicas")),
                           F.col("state"))


def unavailable_partition(inputs: AuditInputs, options: AuditOptions,
                          parts: DataFrame) -> DataFrame:
    """CRITICAL. The partition has no leader, or its leader is not a live broker
    (`kafka-topics --unavailable-partitions`): nobody can produce to it or consume from it.
    An operator brings back a broker of its ISR (the row's broker is the one whose failure
    opened the window), or, accepting data loss, elects an unclean leader. `since_ts`: the
    start of its open `offline` window."""
    windows = inputs.windows.where((F.col("kind") == "offline") & F.col("end_seq").isNull()) \
        .select("cluster", "topic", "partition", "start_ts", "cause_event", "cause_broker")
    offline = parts.where(~F.col("has_leader")) \
        .join(windows, ["cluster", "topic", "partition"], "left")
    cause = F.when(F.col("cause_event").isNull(), F.lit("")).otherwise(F.format_string(
        "; offline since %s (%s%s)", F.col("start_ts").cast("string"), F.col("cause_event"),
        F.when(F.col("cause_broker").isNull(), F.lit(""))
        .otherwise(F.format_string(" of broker %d", F.col("cause_broker")))))
    live = F.format_string("; live brokers %s", brokers_text(F.col("live")))
    detail = F.concat(F.lit("no live leader: "), _state_text(), live, cause)
    return _partition_checks(offline, "unavailable_partition", CRITICAL, detail,
                             since_ts=F.col("start_ts"), broker_id=F.col("cause_broker"))


def under_replicated_partition(parts: DataFrame) -> DataFrame:
    """WARNING. The ISR is smaller than the replication factor
    (`kafka-topics --under-replicated-partitions`): a replica has fallen behind or its
    broker is down; one more failure may take the partition offline or below min ISR."""
    detail = F.format_string("isr has %d of %d replicas: %s", F.col("isr_size"),
                             F.col("replication_factor"), _state_text())
    return _partition_checks(parts.where(F.col("isr_size") < F.col("replication_factor")),
                             "under_replicated_partition", WARNING, detail)


def under_min_isr_partition(parts: DataFrame) -> DataFrame:
    """CRITICAL. No leader, or an ISR smaller than min.insync.replicas
    (`kafka-topics --under-min-isr-partitions`): producers with acks=all get
    NotEnoughReplicas, the partition takes no durable writes."""
    detail = F.format_string("isr has %d, min.insync.replicas %d: %s", F.col("isr_size"),
                             F.col("min_isr"), _state_text())
    failing = ~F.col("has_leader") | (F.col("isr_size") < F.col("min_isr"))
    return _partition_checks(parts.where(failing), "under_min_isr_partition", CRITICAL, detail)


def at_min_isr_partition(parts: DataFrame) -> DataFrame:
    """WARNING. The ISR is exactly min.insync.replicas (`kafka-topics
    --at-min-isr-partitions`): writes still succeed, one more replica out of sync stops
    acks=all producers. With min.insync.replicas 1, every partition whose ISR is its leader
    alone."""
    detail = F.format_string("isr has %d = min.insync.replicas: %s", F.col("isr_size"),
                             _state_text())
    return _partition_checks(parts.where(F.col("isr_size") == F.col("min_isr")),
                             "at_min_isr_partition", WARNING, detail)


def leader_imbalance(parts: DataFrame, options: AuditOptions) -> DataFrame:
    """WARNING. Per broker, the share of the partitions whose preferred replica (the first
    of the assignment) it is but which another broker leads, above
    leader.imbalance.per.broker.percentage (`KafkaController.checkAndTriggerAutoLeaderRebalance`,
    Kafka 3.7.1: a partition without leadership info is counted in the total only). Load
    is skewed onto fewer brokers; Kafka's auto rebalance (or `kafka-leader-election
    --election-type preferred`) moves leadership back when the preferred replica is in
    the ISR."""
    preferred = F.col("replicas")[0]
    elsewhere = F.col("leader").isNotNull() & (F.col("leader") != preferred)
    per_broker = parts.groupBy("cluster", preferred.alias("broker_id")).agg(
        F.count(F.lit(1)).alias("preferred"),
        F.sum(F.when(elsewhere, 1).otherwise(0)).alias("not_led"),
    ).withColumn("ratio", F.col("not_led") / F.col("preferred"))
    limit = options.leader_imbalance_percentage / 100.0
    detail = F.format_string(
        "%d of the %d partitions whose preferred replica it is have another leader: "
        "imbalance %.1f%% > leader.imbalance.per.broker.percentage %s%%", F.col("not_led"),
        F.col("preferred"), F.col("ratio") * 100, F.lit(f"{options.leader_imbalance_percentage:g}"))
    return check_frame(per_broker.where(F.col("ratio") > limit), "leader_imbalance", WARNING,
                       detail, broker_id=F.col("broker_id"))


def end_state_checks(inputs: AuditInputs, options: AuditOptions) -> list[DataFrame]:
    parts = end_partitions(inputs, options)
    return [
        unavailable_partition(inputs, options, parts),
        under_replicated_partition(parts),
        under_min_isr_partition(parts),
        at_min_isr_partition(parts),
        leader_imbalance(parts, options),
    ]
