"""Row validation (`jobs.engine.keying.reason_column`): a topic name Kafka would refuse
(`org.apache.kafka.common.internals.Topic.validate`, Kafka 3.7.1) gives its reason, a legal
one none."""

from __future__ import annotations

from typing import Any

from chispa import assert_df_equality
from pyspark.sql import types as T

from jobs.engine.keying import TOPIC_MAX_LENGTH, reason_column
from schemas import event_types as ET
from schemas.arrow import arrow_schema
from schemas.events import EVENT_SCHEMA
from tests.helpers.event_log import ev

# Kafka 3.7.1 `Topic.MAX_NAME_LENGTH`: a partition's directory `<topic>-<partition>` and
# its suffixes must fit in a 255-byte file name.
LEGAL_LONGEST = "t" * TOPIC_MAX_LENGTH
TOPICS: list[tuple[str | None, str | None]] = [
    ("orders.v1_eu-west", None),
    (LEGAL_LONGEST, None),
    ("...", None),  # only "." and ".." are refused
    ("_internal", None),
    (None, None),  # a topic-less event: nothing to judge
    ("", "illegal topic name: empty"),
    (".", "illegal topic name: '.' or '..'"),
    ("..", "illegal topic name: '.' or '..'"),
    ("t" * 250, "illegal topic name: longer than 249 characters"),
    ("sp ace", "illegal topic name: characters outside [a-zA-Z0-9._-]"),
    ("a/b", "illegal topic name: characters outside [a-zA-Z0-9._-]"),
    ("caf\u00e9", "illegal topic name: characters outside [a-zA-Z0-9._-]"),
    ("x" * 250 + "!", "illegal topic name: longer than 249 characters; "
                      "illegal topic name: characters outside [a-zA-Z0-9._-]"),
]


def test_a_topic_name_kafka_refuses_gives_its_reason(spark: Any) -> None:
    # A broker event carries no required topic, so the topic is the only thing judged.
    rows = [ev(i + 1, ET.BROKER_STARTUP, broker_id=1, topic=topic)
            for i, (topic, _) in enumerate(TOPICS)]
    events = spark.createDataFrame(
        [tuple(row[name] for name in arrow_schema(EVENT_SCHEMA).names) for row in rows],
        EVENT_SCHEMA)
    actual = events.select("seq", reason_column().alias("reason")).orderBy("seq")
    expected = spark.createDataFrame(
        [(i + 1, reason) for i, (_, reason) in enumerate(TOPICS)],
        T.StructType([T.StructField("seq", T.LongType(), True),
                      T.StructField("reason", T.StringType(), True)]))
    assert_df_equality(actual, expected, ignore_nullable=True)
    refused = [reason for _, reason in TOPICS if reason is not None]
    assert refused and all(r.startswith("illegal topic name") for r in refused)



SNAPSHOTS: list[tuple[dict[str, Any], str | None]] = [
    (dict(replicas=[1, 2], leader=1, isr=[1, 2], leader_epoch=3, zk_version=4,
          controller_epoch=2, partition_state="OnlinePartition"), None),
    (dict(replicas=[1, 2]), None),  # no leadership znode: NewPartition
    (dict(replicas=[1], leader=-1, isr=[1], leader_epoch=3), None),  # NoLeader
    (dict(leader=1, isr=[1], leader_epoch=0), "missing replicas for PartitionSnapshot"),
    (dict(replicas=[], leader=None), "empty replicas"),
    (dict(replicas=[1], leader=1, isr=[1]), None),  # describe output: no leader epoch
    (dict(replicas=[1], leader=1), "leader without isr for PartitionSnapshot"),
    (dict(replicas=[1], isr=[1]), "leader_epoch or isr without leader for PartitionSnapshot"),
    (dict(replicas=[1], leader=-2, isr=[1], leader_epoch=0), "leader below -1"),
    (dict(replicas=[1], partition_state="Online"), "unknown partition_state Online"),
    (dict(replicas=[1], leader=1, isr=[1], leader_epoch=-1), "negative leader_epoch"),
]


def test_a_malformed_partition_snapshot_gives_its_reason(spark: Any) -> None:
    rows = [ev(i + 1, ET.PARTITION_SNAPSHOT, topic="t", partition=0, **fields)
            for i, (fields, _) in enumerate(SNAPSHOTS)]
    events = spark.createDataFrame(
        [tuple(row[name] for name in arrow_schema(EVENT_SCHEMA).names) for row in rows],
        EVENT_SCHEMA)
    got = events.select("seq", reason_column().alias("reason")).orderBy("seq").collect()
    assert [r.reason for r in got] == [reason for _, reason in SNAPSHOTS]
    assert "leader without isr for PartitionSnapshot" in [r.reason for r in got]
