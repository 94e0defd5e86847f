"""Validation and keying of event rows: DataFrame -> DataFrame, streaming-compatible.

Every row gets a `reason` (null when it honours the input contract, docs/tables.md) and
its group key `(cluster, bucket)`. Bad rows are not dropped here: they travel with their
group and the replay function writes them to `quarantine`, so that the one streaming query
sees, counts and accounts for every row it reads.

The reason is one Spark SQL expression, written as text (`jobs.engine.sql_text`) and
parsed by the JVM once: built with the Column API, its ~60 checks took 3,300 to 4,000 py4j
round trips and about a second each time a run built it (three times a run).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jobs.engine.plausibility import Plausibility, plausibility_problems
from jobs.engine.sql_text import all_of, col, in_list, quote, when
from schemas import event_types as ET
from schemas.state import CLUSTER_BUCKET, LIST_COLUMNS, REPLAY_INPUT_SCHEMA, WAKE_EVENT_TYPE

# Kafka's rule for a topic name (`org.apache.kafka.common.internals.Topic.validate`, Kafka
# 3.7.1): not empty, not "." or "..", at most 249 characters, only ASCII letters, digits,
# '.', '_' and '-'. A controller never holds a topic that breaks it, so such a row is
# quarantined rather than replayed under a name Kafka would have refused.
TOPIC_MAX_LENGTH = 249
TOPIC_LEGAL_CHARACTERS = "[a-zA-Z0-9._-]"
EVENT_TYPE, TOPIC = col("event_type"), col("topic")


def _topic_problems() -> list[str]:
    """One `rlike` and one length per row: the validator runs on every row of the stream.
    Null topics are not judged here (the event types that need one say so). Spark's
    `length` counts characters where Java counts UTF-16 units; they differ only for names
    outside ASCII, which break the character rule anyway."""
    return [
        when(f"{TOPIC} = ''", "illegal topic name: empty"),
        when(f"{TOPIC} IN ('.', '..')", "illegal topic name: '.' or '..'"),
        when(f"length({TOPIC}) > {TOPIC_MAX_LENGTH}",
             f"illegal topic name: longer than {TOPIC_MAX_LENGTH} characters"),
        when(f"{TOPIC} RLIKE {quote('[^a-zA-Z0-9._-]')}",
             f"illegal topic name: characters outside {TOPIC_LEGAL_CHARACTERS}"),
    ]


def _list_problems(name: str) -> list[str]:
    c = col(name)
    present = f"{c} IS NOT NULL"
    return [
        when(all_of(present, f"coalesce(exists({c}, x -> x IS NULL), false)"),
             f"{name} has a null broker id"),
        when(all_of(present, f"coalesce(exists({c}, x -> x < 0), false)"),
             f"{name} has a negative broker id"),
        when(all_of(present, f"size(array_distinct({c})) != size({c})"),
             f"{name} has duplicate broker ids"),
    ]


# The partition states a ZooKeeper-mode controller initialises a partition in
# (`PartitionStateMachine.initializePartitionState`).
SNAPSHOT_STATES = ("NewPartition", "OnlinePartition", "OfflinePartition")


def _snapshot_problems() -> list[str]:
    """A PartitionSnapshot's leadership must be whole: a leader (-1: none) comes with its
    ISR, no leader epoch or ISR comes without a leader, and the counters are not
    negative."""
    snap = f"{EVENT_TYPE} = {quote(ET.PARTITION_SNAPSHOT)}"
    leader, isr, state = col("leader"), col("isr"), col("partition_state")
    checks = [
        when(all_of(snap, f"size({col('replicas')}) = 0"), "empty replicas"),
        # `kafka-topics --describe` prints no leader epoch: only the ISR must come along.
        when(all_of(snap, f"{leader} IS NOT NULL", f"{isr} IS NULL"),
             "leader without isr for PartitionSnapshot"),
        when(all_of(snap, f"{leader} IS NULL",
                    f"({col('leader_epoch')} IS NOT NULL OR {isr} IS NOT NULL)"),
             "leader_epoch or isr without leader for PartitionSnapshot"),
        when(f"{leader} < -1", "leader below -1"),
        when(all_of(f"{state} IS NOT NULL", f"NOT {in_list(state, SNAPSHOT_STATES)}"),
             f"concat({quote('unknown partition_state ')}, {state})", literal=False),
    ]
    checks += [when(all_of(snap, f"{col(name)} < 0"), f"negative {name}")
               for name in ("leader_epoch", "zk_version", "controller_epoch")]
    return checks


def _contract_problems() -> list[str]:
    """The input contract's checks, in the order their reasons are joined."""
    checks = [
        when(f"{col('seq')} IS NULL", "null seq"),
        when(f"{col('seq')} < 0", "negative seq"),
        when(f"{col('ts')} IS NULL", "null ts"),
        when(f"{EVENT_TYPE} IS NULL", "null event_type"),
        when(f"{EVENT_TYPE} = ''", "empty event_type"),
        when(all_of(f"{EVENT_TYPE} IS NOT NULL", f"{EVENT_TYPE} != ''",
                    f"NOT {in_list(EVENT_TYPE, sorted(ET.ALL_EVENTS))}"),
             f"concat({quote('unknown event_type ')}, {EVENT_TYPE})", literal=False),
    ]
    for event_type in sorted(ET.REQUIRED_FIELDS):
        for field in ET.REQUIRED_FIELDS[event_type]:
            checks.append(when(all_of(f"{EVENT_TYPE} = {quote(event_type)}",
                                      f"{col(field)} IS NULL"),
                               f"missing {field} for {event_type}"))
    checks += _topic_problems()
    for name in LIST_COLUMNS:
        checks += _list_problems(name)
    failover = ET.CONTROLLER_FAILOVER
    return checks + [
        when(all_of(in_list(EVENT_TYPE, (ET.PARTITION_CREATED, ET.REASSIGNMENT_REQUESTED)),
                    f"size({col('replicas')}) = 0"), "empty replicas"),
        when(f"{col('partition')} < 0", "negative partition"),
        *_snapshot_problems(),
        when(f"{col('broker_id')} < 0", "negative broker_id"),
        # A new controller is a registered broker itself (`KafkaController.elect` runs on
        # a live broker), so the live brokers it found must name it: an empty or partial
        # list would take every partition offline at once.
        when(all_of(f"{EVENT_TYPE} = {quote(failover)}", f"{col('brokers')} IS NOT NULL",
                    f"{col('broker_id')} IS NOT NULL",
                    f"NOT array_contains({col('brokers')}, {col('broker_id')})"),
             "brokers of ControllerFailover leave out the new controller"),
    ]


def reason_sql(rules: Plausibility | None = None) -> str:
    """`reason_column` as Spark SQL text."""
    checks = _contract_problems() + (plausibility_problems(rules) if rules is not None else [])
    # nullif, not when(reason == "", null).otherwise(reason): that form evaluates the ~50
    # checks twice per row (measured 5.0 s vs 0.8 s on a 1M-row log).
    return f"nullif(concat_ws('; ', {', '.join(checks)}), '')"


def reason_column(rules: Plausibility | None = None) -> Column:
    """Why a row breaks the contract or the run's plausibility `rules` ("; "-joined), or
    null when it is valid. The row's `cluster` must be filled (null -> default)."""
    return F.expr(reason_sql(rules))


def cluster_sql() -> str:
    """A row's cluster, the default one when the row names none."""
    return f"coalesce({col('cluster')}, {quote(ET.DEFAULT_CLUSTER)})"


def bucket_sql(buckets: int) -> str:
    """The group of an event row: its topic's bucket,
    `statemachine.replay.bucket_of(cluster, topic, buckets)` (crc32 of the UTF-8 bytes of
    `cluster \\0 topic`); rows of the cluster scope, and rows without a topic, go to
    `CLUSTER_BUCKET`."""
    key = f"CAST(concat({col('cluster')}, {quote(chr(0))}, {col('topic')}) AS BINARY)"
    cluster_scope = f"{in_list(col('event_type'), sorted(ET.CLUSTER_EVENTS))} " \
                    f"OR {col('topic')} IS NULL"
    return (f"CASE WHEN {cluster_scope} THEN {int(CLUSTER_BUCKET)} "
            f"ELSE CAST(crc32({key}) % {int(buckets)} AS INT) END")


# The two selects below are SQL text too, one string per column: the Column API took
# about a thousand py4j round trips for them, every run.
def key_events(events: DataFrame, buckets: int,
               rules: Plausibility | None = None) -> DataFrame:
    """Event rows (EVENT_SCHEMA) -> operator input rows (REPLAY_INPUT_SCHEMA), no horizon."""
    normalised = events.withColumn(
        "cluster", F.expr(cluster_sql()))
    made = {"bucket": bucket_sql(buckets), "wake": "false", "reason": reason_sql(rules),
            "ts_us": f"unix_micros({col('ts')})", "horizon": "CAST(NULL AS BIGINT)"}
    return normalised.selectExpr(*[
        f"{made[f.name]} AS {col(f.name)}" if f.name in made
        else f"to_json({col(f.name)}) AS {col(f.name)}" if f.name in LIST_COLUMNS
        else col(f.name)
        for f in REPLAY_INPUT_SCHEMA.fields
    ])


def key_wake_rows(wake: DataFrame) -> DataFrame:
    """Wake rows (WAKE_SCHEMA: cluster, bucket, run_id, horizon) -> operator input rows with
    the key, the wake flag and the horizon, and no event."""
    made = {"wake": "true", "event_type": quote(WAKE_EVENT_TYPE)}
    return wake.selectExpr(*[
        col(f.name) if f.name in ("cluster", "bucket", "horizon")
        else f"{made.get(f.name) or f'CAST(NULL AS {f.dataType.simpleString()})'} "
             f"AS {col(f.name)}"
        for f in REPLAY_INPUT_SCHEMA.fields
    ])
