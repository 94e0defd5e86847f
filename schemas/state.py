"""Schemas of the stateful replay operator: its input, its `GroupState` and its output.

The operator is `groupBy(cluster, bucket).applyInPandasWithState(...)`. One group is a
bucket of whole topics of one cluster (`statemachine.replay.bucket_of`); bucket `-1` holds
the cluster-scope rows (and rows without a topic), which the driver-side timeline applies.

* State: one `binary` column, the core's `BucketState.to_bytes()`. Collections must not be
  Spark arrays or maps here: PySpark 4.3.0 crashes on them in a state schema
  (`KeyError: 'elementType'`: the Python worker receives the state schema's JSON
  lower-cased).
* Output: one flat "tagged" row per (group, table): `payload` is that table's rows for the
  group, serialised once as columns (`jobs.engine.codec`), decoded per table in
  `foreachBatch`. A row with `table = COUNTS_TAG` carries the group's counts instead
  (GROUP_COUNTS_SCHEMA, one row, encoded the same way).
"""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.events import EVENT_SCHEMA

CLUSTER_BUCKET = -1  # bucket of the cluster-scope rows and of rows without a topic
WAKE_EVENT_TYPE = "__wake__"  # never a valid event type; wake rows carry only the key
COUNTS_TAG = "_counts"
# A what-if variant's rows of a group that came from the reference's fold
# (`jobs.whatif.sharing`): `rows` holds the events it took from there instead of folding
# them again; SHARED_WHOLE_TAG when it took the whole group (it replayed nothing of it).
SHARED_PREFIX_TAG = "_shared_prefix"
SHARED_WHOLE_TAG = "_shared_whole"
SHARED_TAGS = (SHARED_PREFIX_TAG, SHARED_WHOLE_TAG)
OFFLINE_LISTED = 10

STATE_SCHEMA = T.StructType([T.StructField("bucket_state", T.BinaryType(), False)])

# The broker-id lists of an event. They reach the Python side as JSON text ("[1,2]", null
# elements kept, a null list stays null): Spark's Arrow writer costs about 8 us per row for
# array columns (measured on the 1M-row bench log: 10.4 s to ship the event columns with the
# three arrays, 1.5 s with them as text). `jobs.engine.pack` parses them back to tuples.
LIST_COLUMNS: tuple[str, ...] = ("replicas", "isr", "brokers")


def _operator_field(f: T.StructField) -> T.StructField:
    if f.name == "ts":
        return T.StructField("ts_us", T.LongType(), True)
    if f.name in LIST_COLUMNS:
        return T.StructField(f.name, T.StringType(), True)
    return f


# Columns the operator receives: the group key, wake flag, the quarantine reason (null when
# the row is valid), then the event columns with `ts` as microseconds since the epoch and
# the lists as JSON text, then a wake row's horizon (WAKE_SCHEMA). An event row has no
# horizon; a wake row has only the key, the flag and the horizon.
REPLAY_INPUT_SCHEMA = T.StructType(
    [
        T.StructField("cluster", T.StringType(), False),
        T.StructField("bucket", T.IntegerType(), False),
        T.StructField("wake", T.BooleanType(), False),
        T.StructField("reason", T.StringType(), True),
        *[_operator_field(f) for f in EVENT_SCHEMA.fields if f.name != "cluster"],
        T.StructField("horizon", T.LongType(), True),
    ]
)

# The reason and event fields of one row, as packed for the operator (`jobs.engine.pack`).
ROW_COLUMNS: tuple[str, ...] = tuple(
    f.name for f in REPLAY_INPUT_SCHEMA.fields
    if f.name not in ("cluster", "bucket", "wake", "horizon")
)

# What the stateful operator receives: per input batch, one row per (cluster, bucket, wake)
# whose payload holds that group's rows (pickled tuples of ROW_COLUMNS); wake rows none.
PACKED_SCHEMA = T.StructType(
    [
        T.StructField("cluster", T.StringType(), False),
        T.StructField("bucket", T.IntegerType(), False),
        T.StructField("wake", T.BooleanType(), False),
        T.StructField("rows", T.LongType(), False),
        T.StructField("payload", T.BinaryType(), True),
        # Wake rows only: the end of the log (last cluster step) when their run started.
        T.StructField("horizon", T.LongType(), True),
    ]
)

# What the operator returns: per group and output table, the number of rows and the payload
# that holds them; per group, one COUNTS_TAG row whose payload is a GROUP_COUNTS_SCHEMA row.
TAGGED_SCHEMA = T.StructType(
    [
        T.StructField("cluster", T.StringType(), False),
        T.StructField("bucket", T.IntegerType(), False),
        T.StructField("table", T.StringType(), False),
        T.StructField("rows", T.LongType(), False),
        T.StructField("payload", T.BinaryType(), True),
    ]
)

# The reconciliation counts of one group in one batch (rows_read = rows_applied +
# rows_duplicate + rows_quarantined + rows_late), findings as JSON {kind: count}, and, for
# the human summary, JSON {state: count} of the group's partitions after the batch and the
# first OFFLINE_LISTED offline partitions as JSON [[topic, partition], ...]; the highest seq
# the group has applied (what the next run's rows are late against); the latest event time
# (microseconds, -1: none) among the rows it read, where the run's period ends.
GROUP_COUNTS_SCHEMA = T.StructType(
    [
        T.StructField("rows_read", T.LongType(), False),
        T.StructField("rows_applied", T.LongType(), False),
        T.StructField("rows_duplicate", T.LongType(), False),
        T.StructField("rows_quarantined", T.LongType(), False),
        T.StructField("rows_late", T.LongType(), False),
        T.StructField("findings_by_kind", T.StringType(), False),
        T.StructField("partitions_by_state", T.StringType(), False),
        T.StructField("offline_partitions", T.StringType(), False),
        T.StructField("watermark", T.LongType(), False),
        T.StructField("last_ts", T.LongType(), False),
    ]
)

# Wake rows, one per (cluster, bucket), written under the checkpoint before each run so that
# every bucket is replayed every run (broker events change partitions without events).
# `horizon` is the last cluster step of the log that run's driver scanned: a batch applies
# the timeline after its events only that far. It matters when Spark re-executes a batch an
# earlier, crashed run planned: that batch's files end before the new files' cluster steps.
# The files are the source of a stream, so this schema is fixed for the checkpoint's life.
WAKE_SCHEMA = T.StructType(
    [
        T.StructField("cluster", T.StringType(), False),
        T.StructField("bucket", T.IntegerType(), False),
        T.StructField("run_id", T.StringType(), False),
        T.StructField("horizon", T.LongType(), True),
    ]
)
