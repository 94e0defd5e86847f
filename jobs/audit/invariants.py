"""`invariant_violation`: what a ZooKeeper-mode controller never writes, looked for in
every partition state the run sent (its LeaderAndIsr and UpdateMetadata rows carry the
state after each change) and in the end state.

* the leader is not in the ISR (a leader is elected from the ISR, or, unclean, becomes the
  ISR alone: `PartitionLeaderElectionAlgorithms`);
* the ISR holds a broker outside the assignment once an event is processed (a reassignment
  shrinks the ISR when its removed replicas go OfflineReplica, `ReplicaStateMachine`; the
  request sent just before, in the same event, may still list them);
* the leader epoch of a partition goes down from one request to the next in event order
  (every leader change and ISR change by the controller raises or keeps it). A topic being
  deleted is advertised with LeaderDuringDelete and epoch 0, and a re-created partition
  starts again from 0: those are not violations.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from jobs.audit.extract import AuditInputs
from jobs.audit.rows import brokers_text, check_frame, count_of
from schemas.audit import CRITICAL
from statemachine.rows import APPLIED

CHECK = "invariant_violation"
LEADER_DURING_DELETE = -2
_KEY = ["cluster", "topic", "partition"]


def _sent_states(inputs: AuditInputs) -> DataFrame:
    """(cluster, topic, partition, seq, ts, batch, request, leader, leader_epoch, isr,
    replicas) of every LeaderAndIsr and UpdateMetadata row of the run."""
    columns = [*_KEY, "seq", "ts", "batch", "leader", "leader_epoch", "isr", "replicas"]
    leader_and_isr = inputs.leader_and_isr.select(*columns).dropDuplicates(
        [*_KEY, "seq", "batch"]).withColumn("request", F.lit("LeaderAndIsr"))
    update_metadata = inputs.update_metadata.select(*columns) \
        .withColumn("request", F.lit("UpdateMetadata"))
    return leader_and_isr.unionByName(update_metadata) \
        .where(F.col("leader") != LEADER_DURING_DELETE)


def _first_per_partition(df: DataFrame, what: Column) -> DataFrame:
    """One row per partition: how many rows broke the rule, the first one's `what`."""
    first = Window.partitionBy(*_KEY).orderBy(F.col("seq").asc_nulls_last(), "batch")
    return df.withColumn("what", what).withColumn("n", F.count(F.lit(1)).over(
        Window.partitionBy(*_KEY))).withColumn("rank", F.row_number().over(first)) \
        .where(F.col("rank") == 1)


def _after_each_event(states: DataFrame) -> DataFrame:
    """The last state each event sent for a partition. Within one event the controller
    may send a state on its way: phase B of `KafkaController.onPartitionReassignment`
    sends the new assignment with the old ISR before the removed replicas go offline and
    leave the ISR."""
    last = Window.partitionBy(*_KEY, "seq").orderBy(F.col("batch").desc_nulls_last(),
                                                    F.col("request").desc())
    return states.withColumn("last", F.row_number().over(last)).where(F.col("last") == 1) \
        .drop("last")


def _membership(states: DataFrame) -> list[DataFrame]:
    """Leader outside the ISR, ISR outside the assignment, after each event and at the
    end of the run."""
    states = _after_each_event(states)
    found = []
    for rule, condition, text in (
        ("leader_not_in_isr",
         (F.col("leader") >= 0) & ~F.coalesce(F.array_contains(F.col("isr"), F.col("leader")),
                                              F.lit(False)),
         F.format_string("leader %d not in isr %s", F.col("leader"), brokers_text(F.col("isr")))),
        ("isr_outside_assignment",
         count_of(F.array_except(F.col("isr"), F.col("replicas"))) > 0,
         F.format_string("isr %s not within replicas %s", brokers_text(F.col("isr")),
                         brokers_text(F.col("replicas")))),
    ):
        rows = _first_per_partition(states.where(condition), text)
        found.append(rows.withColumn("rule", F.lit(rule)))
    return found


def _end_states(inputs: AuditInputs) -> DataFrame:
    """The end state in the shape of the request rows (seq: the partition's last event)."""
    return inputs.partitions.where(count_of(F.col("replicas")) > 0).select(
        *_KEY, F.col("last_seq").alias("seq"), F.lit(None).cast("timestamp").alias("ts"),
        F.lit(None).cast("int").alias("batch"), "leader", "leader_epoch", "isr", "replicas",
        F.lit("end state").alias("request"))


def _epoch_decreases(inputs: AuditInputs, states: DataFrame) -> DataFrame:
    """Rows whose leader epoch is below the previous row's of the same incarnation of the
    partition (an incarnation starts at each NonExistentPartition -> NewPartition)."""
    created = inputs.state_changes.where(
        (F.col("machine") == "partition") & (F.col("to_state") == "NewPartition")
        & (F.col("outcome") == APPLIED)).select(*_KEY, "seq").distinct() \
        .withColumn("created", F.lit(1))
    marked = states.withColumn("created", F.lit(0)).unionByName(created,
                                                                allowMissingColumns=True)
    order = [F.col("seq"), F.col("created").desc(), F.col("batch").asc_nulls_first(),
             F.col("request")]
    ordered = Window.partitionBy(*_KEY).orderBy(*order)
    incarnation = F.sum("created").over(ordered.rowsBetween(Window.unboundedPreceding, 0))
    marked = marked.withColumn("incarnation", incarnation)
    previous = Window.partitionBy(*_KEY, "incarnation").orderBy(*order)
    steps = marked.where(F.col("created") == 0) \
        .withColumn("previous_epoch", F.lag("leader_epoch").over(previous))
    down = steps.where(F.col("leader_epoch") < F.col("previous_epoch"))
    text = F.format_string("leader epoch went down from %d to %d at seq %d (%s)",
                           F.col("previous_epoch"), F.col("leader_epoch"), F.col("seq"),
                           F.col("request"))
    return _first_per_partition(down, text).withColumn("rule", F.lit("leader_epoch_decreased"))


def invariant_violation(inputs: AuditInputs) -> DataFrame:
    """CRITICAL. The replay produced a partition state a Kafka controller never writes:
    leader outside the ISR, ISR outside the assignment, or a leader epoch going down. The
    input log is inconsistent (events missing or reordered) or the replay is wrong; the
    partition's state cannot be trusted until it is understood. One row per partition and
    rule, with the first occurrence and how many rows broke it."""
    states = _sent_states(inputs)
    found = [*_membership(states.unionByName(_end_states(inputs))),
             _epoch_decreases(inputs, states)]
    kept = [*_KEY, "seq", "ts", "what", "n", "rule"]
    rows = found[0].select(*kept)
    for df in found[1:]:
        rows = rows.unionByName(df.select(*kept))
    detail = F.format_string("%s: %s (%d row(s), first at seq %d)", F.col("rule"),
                             F.col("what"), F.col("n"), F.col("seq"))
    return check_frame(rows, CHECK, CRITICAL, detail, topic=F.col("topic"),
                       partition=F.col("partition"), since_ts=F.col("ts"))
