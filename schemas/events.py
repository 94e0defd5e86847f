"""Spark schema of the controller event log, the input contract (docs/tables.md)."""

from __future__ import annotations

from pyspark.sql import types as T

EVENT_COLUMNS: tuple[str, ...] = (
    "cluster",
    "seq",
    "ts",
    "event_type",
    "broker_id",
    "topic",
    "partition",
    "replicas",
    "isr",
    "leader_epoch",
    "brokers",
    "error",
    "unclean_leader_election",
    "source",
    "leader",
    "zk_version",
    "controller_epoch",
    "partition_state",
    "topics_to_be_deleted",
)

EVENT_SCHEMA = T.StructType(
    [
        T.StructField("cluster", T.StringType(), True),
        T.StructField("seq", T.LongType(), True),
        T.StructField("ts", T.TimestampType(), True),
        T.StructField("event_type", T.StringType(), True),
        T.StructField("broker_id", T.IntegerType(), True),
        T.StructField("topic", T.StringType(), True),
        T.StructField("partition", T.IntegerType(), True),
        T.StructField("replicas", T.ArrayType(T.IntegerType(), True), True),
        T.StructField("isr", T.ArrayType(T.IntegerType(), True), True),
        T.StructField("leader_epoch", T.IntegerType(), True),
        T.StructField("brokers", T.ArrayType(T.IntegerType(), True), True),
        T.StructField("error", T.StringType(), True),
        T.StructField("unclean_leader_election", T.BooleanType(), True),
        T.StructField("source", T.StringType(), True),
        # PartitionSnapshot only: the partition's leadership as ZooKeeper holds it.
        T.StructField("leader", T.IntegerType(), True),
        T.StructField("zk_version", T.IntegerType(), True),
        T.StructField("controller_epoch", T.IntegerType(), True),
        T.StructField("partition_state", T.StringType(), True),
        # ControllerFailover only: the topics queued for deletion the new controller read
        # (`List of topics to be deleted`), null when the log does not say.
        T.StructField("topics_to_be_deleted", T.ArrayType(T.StringType(), True), True),
    ]
)

# Columns without which a file cannot be read at all: the job fails before writing.
REQUIRED_COLUMNS: tuple[str, ...] = ("seq", "ts", "event_type")

assert tuple(f.name for f in EVENT_SCHEMA.fields) == EVENT_COLUMNS
