"""Spark schemas of every output table (docs/tables.md), one `StructType` each.

Every table starts with `cluster` and `run_id`; the rest of the columns are, in order, the
fields of the core's row NamedTuple for that table (`statemachine/rows.py`), which
`tests/schemas/test_schemas.py` checks. Tables are Parquet directories under the job's `--out`,
named by the keys of `TABLES`, partitioned by `run_id`.

Timestamps are UTC (`TimestampType`, the session time zone is UTC); lists of broker ids are
`array<int>`.
"""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.events import EVENT_SCHEMA

_INTS = T.ArrayType(T.IntegerType(), True)


def _f(name: str, dtype: T.DataType, nullable: bool = True) -> T.StructField:
    return T.StructField(name, dtype, nullable)


def _table(*fields: T.StructField) -> T.StructType:
    return T.StructType(
        [_f("cluster", T.StringType()), _f("run_id", T.StringType()), *fields]
    )


PARTITION_STATES = _table(
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("state", T.StringType()),
    _f("leader", T.IntegerType()),
    _f("leader_epoch", T.IntegerType()),
    _f("isr", _INTS),
    _f("replicas", _INTS),
    _f("adding_replicas", _INTS),
    _f("removing_replicas", _INTS),
    _f("zk_version", T.IntegerType()),
    _f("controller_epoch", T.IntegerType()),
    _f("leader_recovery_state", T.StringType()),
    _f("queued_for_deletion", T.BooleanType()),
    _f("last_seq", T.LongType()),
)

REPLICA_STATES = _table(
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("broker_id", T.IntegerType()),
    _f("state", T.StringType()),
)

STATE_CHANGES = _table(
    _f("seq", T.LongType()),
    _f("ts", T.TimestampType()),
    _f("step", T.IntegerType()),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("broker_id", T.IntegerType()),
    _f("machine", T.StringType()),
    _f("from_state", T.StringType()),
    _f("to_state", T.StringType()),
    # applied | rejected (the transition matrix refused it) | failed (attempted, failed):
    # the state after the attempt is to_state if applied, else from_state.
    _f("outcome", T.StringType()),
    _f("reason", T.StringType()),
)

LEADER_AND_ISR_REQUESTS = _table(
    _f("seq", T.LongType()),
    _f("ts", T.TimestampType()),
    _f("batch", T.IntegerType()),
    _f("controller_epoch", T.IntegerType()),
    _f("broker_id", T.IntegerType()),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("state_controller_epoch", T.IntegerType()),
    _f("leader", T.IntegerType()),
    _f("leader_epoch", T.IntegerType()),
    _f("isr", _INTS),
    _f("zk_version", T.IntegerType()),
    _f("replicas", _INTS),
    _f("adding_replicas", _INTS),
    _f("removing_replicas", _INTS),
    _f("is_new", T.BooleanType()),
    _f("leader_recovery_state", T.StringType()),
)

UPDATE_METADATA_REQUESTS = _table(
    _f("seq", T.LongType()),
    _f("ts", T.TimestampType()),
    _f("batch", T.IntegerType()),
    _f("controller_epoch", T.IntegerType()),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("state_controller_epoch", T.IntegerType()),
    _f("leader", T.IntegerType()),
    _f("leader_epoch", T.IntegerType()),
    _f("isr", _INTS),
    _f("zk_version", T.IntegerType()),
    _f("replicas", _INTS),
    _f("offline_replicas", _INTS),
    # null: every live or shutting-down broker at `seq` (join broker_timeline).
    _f("to_brokers", _INTS),
)

STOP_REPLICA_REQUESTS = _table(
    _f("seq", T.LongType()),
    _f("ts", T.TimestampType()),
    _f("batch", T.IntegerType()),
    _f("controller_epoch", T.IntegerType()),
    _f("broker_id", T.IntegerType()),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("delete_partition", T.BooleanType()),
    _f("leader_epoch", T.IntegerType()),
)

# One row per write of a partition's state znode: the leader and ISR Kafka stored, whether
# or not a request carried them (a deleted topic's ISR shrink sends none).
PARTITION_STATE_WRITES = _table(
    _f("seq", T.LongType()),
    _f("ts", T.TimestampType()),
    _f("write", T.IntegerType()),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("leader", T.IntegerType()),
    _f("leader_epoch", T.IntegerType()),
    _f("isr", _INTS),
    _f("leader_recovery_state", T.StringType()),
    _f("zk_version", T.IntegerType()),
    _f("controller_epoch", T.IntegerType()),
    _f("cause", T.StringType()),
)

FINDINGS = _table(
    _f("seq", T.LongType()),
    _f("ts", T.TimestampType()),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("broker_id", T.IntegerType()),
    _f("kind", T.StringType()),
    _f("detail", T.StringType()),
    _f("source", T.StringType()),
)

# A window during which a partition was degraded (`statemachine/windows.py`): the kinds are
# `kafka-topics --describe`'s health filters evaluated at every event, plus reassignments and
# deletions in progress. end_* and seconds are null while the window is open.
PARTITION_WINDOWS = _table(
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("kind", T.StringType()),
    _f("start_seq", T.LongType()),
    _f("start_ts", T.TimestampType()),
    _f("end_seq", T.LongType()),
    _f("end_ts", T.TimestampType()),
    _f("seconds", T.DoubleType()),
    _f("cause_event", T.StringType()),
    _f("cause_broker", T.IntegerType()),
    _f("end_event", T.StringType()),
    _f("end_broker", T.IntegerType()),
    _f("incident_id", T.LongType()),
)

# The incidents a run saw (jobs/engine/incidents_table.py, statemachine/incidents.py): controller
# events that opened offline or under-min-ISR windows, each with its windows rolled up.
INCIDENTS = _table(
    _f("incident_id", T.LongType()),
    _f("cause_event", T.StringType()),
    _f("cause_broker", T.IntegerType()),
    _f("cause_seq", T.LongType()),
    _f("start_ts", T.TimestampType()),
    _f("end_ts", T.TimestampType()),
    _f("end_seq", T.LongType()),
    _f("seconds", T.DoubleType()),
    _f("peak_partitions_offline", T.IntegerType()),
    _f("partitions_affected", T.IntegerType()),
    _f("topics_affected", T.IntegerType()),
    _f("offline_partition_seconds", T.DoubleType()),
    _f("under_min_isr_partition_seconds", T.DoubleType()),
    _f("unclean_elections", T.IntegerType()),
    _f("recovery_event", T.StringType()),
    _f("recovery_broker", T.IntegerType()),
    _f("worst_topics", T.ArrayType(T.StructType([
        T.StructField("topic", T.StringType(), True),
        T.StructField("offline_partition_seconds", T.DoubleType(), True),
        T.StructField("under_min_isr_partition_seconds", T.DoubleType(), True)]), True)),
    # Every broker its windows name (one event may lose several), each with its share:
    # partitions, partition-seconds, seconds from the start to its last window's end.
    _f("brokers", T.ArrayType(T.StructType([
        T.StructField("broker_id", T.IntegerType(), True),
        T.StructField("partitions", T.IntegerType(), True),
        T.StructField("offline_partition_seconds", T.DoubleType(), True),
        T.StructField("under_min_isr_partition_seconds", T.DoubleType(), True),
        T.StructField("seconds", T.DoubleType(), True)]), True)),
)

# What each unclean leader election of the run lost, from the brokers' own offset lines
# (jobs/engine/data_loss.py): exact from a truncation line, else bounds, else unknown; with the
# lines that prove it.
DATA_LOSS = _table(
    _f("seq", T.LongType()),
    _f("ts", T.TimestampType()),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("incident_id", T.LongType()),
    _f("new_leader", T.IntegerType()),
    _f("leader_epoch", T.IntegerType()),
    _f("new_leader_end_offset", T.LongType()),
    _f("new_leader_high_watermark", T.LongType()),
    _f("old_leader", T.IntegerType()),
    _f("old_isr", _INTS),
    _f("old_leader_high_watermark", T.LongType()),
    _f("old_leader_end_offset", T.LongType()),
    _f("old_leader_final_end_offset", T.LongType()),
    _f("truncations", T.ArrayType(T.StructType([
        T.StructField("broker_id", T.IntegerType(), True),
        T.StructField("truncated_to", T.LongType(), True),
        T.StructField("log_end_offset", T.LongType(), True),
        T.StructField("messages_lost", T.LongType(), True)]), True)),
    _f("result", T.StringType()),  # exact | bounded | unknown
    _f("messages_lost", T.LongType()),
    _f("messages_lost_at_least", T.LongType()),
    _f("messages_lost_at_most", T.LongType()),
    _f("evidence", T.ArrayType(T.StructType([
        T.StructField("role", T.StringType(), True),
        T.StructField("broker_id", T.IntegerType(), True),
        T.StructField("source", T.StringType(), True),
        T.StructField("text", T.StringType(), True)]), True)),
    _f("detail", T.StringType()),
)

# What changed in a run (jobs/engine/changes_table.py, jobs/engine/change_digest.py): per
# change, its count and first rows.
CHANGES = _table(
    _f("change", T.StringType()),
    _f("count", T.LongType()),
    _f("first", T.ArrayType(T.StructType([
        T.StructField("seq", T.LongType(), True),
        T.StructField("ts", T.TimestampType(), True),
        T.StructField("topic", T.StringType(), True),
        T.StructField("partition", T.IntegerType(), True),
        T.StructField("broker_id", T.IntegerType(), True),
        T.StructField("detail", T.StringType(), True)]), True)),
)

BROKER_TIMELINE = _table(
    _f("broker_id", T.IntegerType()),
    _f("status", T.StringType()),
    _f("seq_from", T.LongType()),
    _f("seq_to", T.LongType()),
    _f("ts_from", T.TimestampType()),
    _f("ts_to", T.TimestampType()),
)

CONTROLLER_TIMELINE = _table(
    _f("controller_id", T.IntegerType()),
    _f("controller_epoch", T.IntegerType()),
    _f("seq", T.LongType()),
    _f("ts", T.TimestampType()),
    _f("live_brokers", _INTS),
)

# The input row as read (cluster normalised: null -> "default") and why it was not applied.
QUARANTINE = _table(
    *[f for f in EVENT_SCHEMA.fields if f.name != "cluster"],
    _f("reason", T.StringType()),
)

RUN_SUMMARY = _table(
    _f("started_at", T.TimestampType()),
    _f("finished_at", T.TimestampType()),
    _f("buckets", T.IntegerType()),
    _f("batches", T.IntegerType()),
    _f("rows_read", T.LongType()),
    _f("rows_applied", T.LongType()),
    _f("rows_duplicate", T.LongType()),
    _f("rows_quarantined", T.LongType()),
    _f("rows_late", T.LongType()),
    _f("findings_by_kind", T.MapType(T.StringType(), T.LongType(), True)),
    _f("partitions_by_state", T.MapType(T.StringType(), T.LongType(), True)),
    _f("rows_written", T.MapType(T.StringType(), T.LongType(), True)),
    # Partition-seconds offline in the run's period (jobs/engine/offline_rollup.py).
    _f("offline_partition_seconds", T.DoubleType()),
    _f("offline_seconds_by_topic", T.MapType(T.StringType(), T.DoubleType(), True)),
    _f("offline_seconds_by_cause_broker", T.MapType(T.StringType(), T.DoubleType(), True)),
    _f("stage_seconds", T.MapType(T.StringType(), T.DoubleType(), True)),
    # The period the offline figures cover (the audit's post-mortem reads it).
    _f("period_start", T.TimestampType()),
    _f("period_end", T.TimestampType()),
    # The log's continuity (jobs/engine/log_checks.py): the seq range of the rows this run
    # read, the highest seq earlier runs of the checkpoint read, the missing seq ranges
    # (inclusive, within the run and since the earlier runs) and how many seqs they hold,
    # the seq range of the late rows, the seqs quarantined as conflicting, and the seqs
    # whose time runs backwards (the first 20, and how many).
    _f("seq_min", T.LongType()),
    _f("seq_max", T.LongType()),
    _f("previous_seq_max", T.LongType()),
    _f("seq_gaps", T.ArrayType(T.StructType([
        T.StructField("seq_from", T.LongType(), True),
        T.StructField("seq_to", T.LongType(), True)]), True)),
    _f("missing_seqs", T.LongType()),
    _f("late_seq_min", T.LongType()),
    _f("late_seq_max", T.LongType()),
    _f("conflicting_seqs", T.ArrayType(T.LongType(), True)),
    _f("ts_backwards_seqs", T.ArrayType(T.LongType(), True)),
    _f("ts_backwards_count", T.LongType()),
    # A `--rebuild` run: the runs of the checkpoint generation it replaced (its tables
    # hold the whole log; theirs only their own nights).
    _f("superseded_runs", T.ArrayType(T.StringType(), True)),
    # The runs whose partition_states / replica_states rows make up the whole state after
    # this run, oldest first, this run last (jobs/store/latest_state.py reads them).
    _f("state_runs", T.ArrayType(T.StringType(), True)),
)

# KRaft replays only (jobs/replay/kraft): the metadata records the quorum leader wrote and
# the replay folded, in place of the request tables. The record's own fields (a
# PartitionChangeRecord's null list or leader -2: unchanged), the topic named, and the
# leader and partition epochs Kafka's metadata image holds after it.
METADATA_WRITES = _table(
    _f("seq", T.LongType()),
    _f("ts", T.TimestampType()),
    _f("quorum_epoch", T.IntegerType()),
    _f("record_type", T.StringType()),
    _f("broker_id", T.IntegerType()),
    _f("broker_epoch", T.LongType()),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("leader", T.IntegerType()),
    _f("isr", _INTS),
    _f("replicas", _INTS),
    _f("adding_replicas", _INTS),
    _f("removing_replicas", _INTS),
    _f("elr", _INTS),
    _f("leader_epoch", T.IntegerType()),
    _f("partition_epoch", T.IntegerType()),
    _f("fenced", T.BooleanType()),
    _f("in_controlled_shutdown", T.BooleanType()),
    _f("config_resource", T.StringType()),
    _f("config_name", T.StringType()),
    _f("config_value", T.StringType()),
)

# Table name (= directory under --out) -> schema.
TABLES: dict[str, T.StructType] = {
    "partition_states": PARTITION_STATES,
    "replica_states": REPLICA_STATES,
    "state_changes": STATE_CHANGES,
    "partition_state_writes": PARTITION_STATE_WRITES,
    "leader_and_isr_requests": LEADER_AND_ISR_REQUESTS,
    "update_metadata_requests": UPDATE_METADATA_REQUESTS,
    "stop_replica_requests": STOP_REPLICA_REQUESTS,
    "findings": FINDINGS,
    "partition_windows": PARTITION_WINDOWS,
    "incidents": INCIDENTS,
    "data_loss": DATA_LOSS,
    "changes": CHANGES,
    "broker_timeline": BROKER_TIMELINE,
    "controller_timeline": CONTROLLER_TIMELINE,
    "quarantine": QUARANTINE,
    "run_summary": RUN_SUMMARY,
}

# Tables only a KRaft replay writes (not in TABLES: a ZooKeeper run's output is unchanged).
KRAFT_TABLES: dict[str, T.StructType] = {"metadata_writes": METADATA_WRITES}

# Tables the replay groups write (from the streaming query), in write order.
REPLAY_TABLES: tuple[str, ...] = (
    "partition_states",
    "replica_states",
    "state_changes",
    "partition_state_writes",
    "leader_and_isr_requests",
    "update_metadata_requests",
    "stop_replica_requests",
    "findings",
    "partition_windows",
    "quarantine",
)

# Tables built on the driver from the cluster timeline.
TIMELINE_TABLES: tuple[str, ...] = ("broker_timeline", "controller_timeline")

# Tables that hold the full state as of the end of the run (the rest hold this run's rows).
STATE_TABLES: tuple[str, ...] = ("partition_states", "replica_states")


def payload_columns(table: str) -> tuple[str, ...]:
    """Columns of a table after `cluster` and `run_id` (what a payload carries)."""
    return tuple(f.name for f in TABLES[table].fields[2:])
