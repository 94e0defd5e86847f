"""Validation and keying of event rows: DataFrame -> DataFrame, streaming-compatible.

Every row gets a `reason` (null when it honours the input contract, docs/tables.md) and
its group key `(cluster, bucket)`. Bad rows are not dropped here: they travel with their
group and the replay function writes them to `quarantine`, so that the one streaming query
sees, counts and accounts for every row it reads.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jobs.engine.plausibility import Plausibility, plausibility_problems
from schemas import event_types as ET
from schemas.state import CLUSTER_BUCKET, LIST_COLUMNS, REPLAY_INPUT_SCHEMA, WAKE_EVENT_TYPE

# Kafka's rule for a topic name (`org.apache.kafka.common.internals.Topic.validate`, Kafka
# 3.7.1): not empty, not "." or "..", at most 249 characters, only ASCII letters, digits,
# '.', '_' and '-'. A controller never holds a topic that breaks it, so such a row is
# quarantined rather than replayed under a name Kafka would have refused.
TOPIC_MAX_LENGTH = 249
TOPIC_LEGAL_CHARACTERS = "[a-zA-Z0-9._-]"


def _topic_problems() -> list[Column]:
    """One `rlike` and one length per row: the validator runs on every row of the stream.
    Null topics are not judged here (the event types that need one say so). Spark's
    `length` counts characters where Java counts UTF-16 units; they differ only for names
    outside ASCII, which break the character rule anyway."""
    topic = F.col("topic")
    return [
        F.when(topic == "", F.lit("illegal topic name: empty")),
        F.when(topic.isin(".", ".."), F.lit("illegal topic name: '.' or '..'")),
        F.when(F.length(topic) > TOPIC_MAX_LENGTH,
               F.lit(f"illegal topic name: longer than {TOPIC_MAX_LENGTH} characters")),
        F.when(topic.rlike("[^a-zA-Z0-9._-]"),
               F.lit(f"illegal topic name: characters outside {TOPIC_LEGAL_CHARACTERS}")),
    ]


def _list_problems(name: str) -> list[Column]:
    col = F.col(name)
    present = col.isNotNull()
    return [
        F.when(
            present & F.coalesce(F.exists(col, lambda x: x.isNull()), F.lit(False)),
            F.lit(f"{name} has a null broker id"),
        ),
        F.when(
            present & F.coalesce(F.exists(col, lambda x: x < 0), F.lit(False)),
            F.lit(f"{name} has a negative broker id"),
        ),
        F.when(
            present & (F.size(F.array_distinct(col)) != F.size(col)),
            F.lit(f"{name} has duplicate broker ids"),
        ),
    ]


# The partition states a ZooKeeper-mode controller initialises a partition in
# (`PartitionStateMachine.initializePartitionState`).
SNAPSHOT_STATES = ("NewPartition", "OnlinePartition", "OfflinePartition")


def _snapshot_problems() -> list[Column]:
    """A PartitionSnapshot's leadership must be whole: a leader (-1: none) comes with its
    ISR, no leader epoch or ISR comes without a leader, and the counters are not
    negative."""
    snap = F.col("event_type") == ET.PARTITION_SNAPSHOT
    leader = F.col("leader")
    checks = [
        F.when(snap & (F.size(F.col("replicas")) == 0), F.lit("empty replicas")),
        # `kafka-topics --describe` prints no leader epoch: only the ISR must come along.
        F.when(snap & leader.isNotNull() & F.col("isr").isNull(),
               F.lit("leader without isr for PartitionSnapshot")),
        F.when(snap & leader.isNull() & (F.col("leader_epoch").isNotNull()
                                         | F.col("isr").isNotNull()),
               F.lit("leader_epoch or isr without leader for PartitionSnapshot")),
        F.when(leader < -1, F.lit("leader below -1")),
        F.when(F.col("partition_state").isNotNull()
               & ~F.col("partition_state").isin(*SNAPSHOT_STATES),
               F.concat(F.lit("unknown partition_state "), F.col("partition_state"))),
    ]
    checks += [F.when(snap & (F.col(name) < 0), F.lit(f"negative {name}"))
               for name in ("leader_epoch", "zk_version", "controller_epoch")]
    return checks


def reason_column(rules: Plausibility | None = None) -> Column:
    """Why a row breaks the contract or the run's plausibility `rules` ("; "-joined), or
    null when it is valid. The row's `cluster` must be filled (null -> default)."""
    et = F.col("event_type")
    checks: list[Column] = [
        F.when(F.col("seq").isNull(), F.lit("null seq")),
        F.when(F.col("seq") < 0, F.lit("negative seq")),
        F.when(F.col("ts").isNull(), F.lit("null ts")),
        F.when(et.isNull(), F.lit("null event_type")),
        F.when(et == "", F.lit("empty event_type")),
        F.when(
            et.isNotNull() & (et != "") & ~et.isin(*sorted(ET.ALL_EVENTS)),
            F.concat(F.lit("unknown event_type "), et),
        ),
    ]
    for event_type in sorted(ET.REQUIRED_FIELDS):
        for field in ET.REQUIRED_FIELDS[event_type]:
            checks.append(
                F.when(
                    (et == event_type) & F.col(field).isNull(),
                    F.lit(f"missing {field} for {event_type}"),
                )
            )
    checks.extend(_topic_problems())
    for name in LIST_COLUMNS:
        checks.extend(_list_problems(name))
    checks += [
        F.when(
            et.isin(ET.PARTITION_CREATED, ET.REASSIGNMENT_REQUESTED)
            & (F.size(F.col("replicas")) == 0),
            F.lit("empty replicas"),
        ),
        F.when(F.col("partition") < 0, F.lit("negative partition")),
        *_snapshot_problems(),
        F.when(F.col("broker_id") < 0, F.lit("negative broker_id")),
        # A new controller is a registered broker itself (`KafkaController.elect` runs on
        # a live broker), so the live brokers it found must name it: an empty or partial
        # list would take every partition offline at once.
        F.when((et == ET.CONTROLLER_FAILOVER) & F.col("brokers").isNotNull()
               & F.col("broker_id").isNotNull()
               & ~F.array_contains(F.col("brokers"), F.col("broker_id")),
               F.lit("brokers of ControllerFailover leave out the new controller")),
        *(plausibility_problems(rules) if rules is not None else []),
    ]
    # nullif, not when(reason == "", null).otherwise(reason): that form evaluates the ~50
    # checks twice per row (measured 5.0 s vs 0.8 s on a 1M-row log).
    return F.nullif(F.concat_ws("; ", *checks), F.lit(""))


def topic_bucket(buckets: int) -> Column:
    """`statemachine.replay.bucket_of(cluster, topic, buckets)` as a Spark expression:
    crc32 of the UTF-8 bytes of `cluster \\0 topic`."""
    key = F.concat(F.col("cluster"), F.lit("\x00"), F.col("topic")).cast("binary")
    return (F.crc32(key) % F.lit(buckets)).cast("int")


def bucket_column(buckets: int) -> Column:
    """The group of an event row: its topic's bucket; rows of the cluster scope, and rows
    without a topic, go to `CLUSTER_BUCKET`."""
    by_topic = topic_bucket(buckets)
    cluster_scope = F.col("event_type").isin(*sorted(ET.CLUSTER_EVENTS)) | F.col("topic").isNull()
    return F.when(cluster_scope, F.lit(CLUSTER_BUCKET)).otherwise(by_topic)


def key_events(events: DataFrame, buckets: int,
               rules: Plausibility | None = None) -> DataFrame:
    """Event rows (EVENT_SCHEMA) -> operator input rows (REPLAY_INPUT_SCHEMA), no horizon."""
    normalised = events.withColumn(
        "cluster", F.coalesce(F.col("cluster"), F.lit(ET.DEFAULT_CLUSTER))
    )
    keyed = normalised.select(
        "*",
        bucket_column(buckets).alias("bucket"),
        F.lit(False).alias("wake"),
        reason_column(rules).alias("reason"),
        F.unix_micros(F.col("ts")).alias("ts_us"),
        F.lit(None).cast("long").alias("horizon"),
    )
    return keyed.select(*[
        F.to_json(F.col(f.name)).alias(f.name) if f.name in LIST_COLUMNS else F.col(f.name)
        for f in REPLAY_INPUT_SCHEMA.fields
    ])


def key_wake_rows(wake: DataFrame) -> DataFrame:
    """Wake rows (WAKE_SCHEMA: cluster, bucket, run_id, horizon) -> operator input rows with
    the key, the wake flag and the horizon, and no event."""
    cols = []
    for f in REPLAY_INPUT_SCHEMA.fields:
        if f.name in ("cluster", "bucket", "horizon"):
            cols.append(F.col(f.name))
        elif f.name == "wake":
            cols.append(F.lit(True).alias("wake"))
        elif f.name == "event_type":
            cols.append(F.lit(WAKE_EVENT_TYPE).alias("event_type"))
        else:
            cols.append(F.lit(None).cast(f.dataType).alias(f.name))
    return wake.select(*cols)
