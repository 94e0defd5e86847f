"""Spark schemas of the ingest job (`jobs.ingest`): the tables it writes beside `events/`
(whose schema is the input contract, `schemas.events.EVENT_SCHEMA`) and the rows its stages
pass to each other through `mapInArrow`.

Written tables (docs/tables.md):

    observed_state_changes/  OBSERVED_SCHEMA: every transition, leader, ISR, epoch and
                             request Kafka logged, placed in the controller's order
    ingest_summary/          INGEST_SUMMARY_SCHEMA: line counts per file, and a total row
    unparsed/                UNPARSED_SCHEMA: controller-looking lines no template knows
    offset_evidence/         OFFSET_EVIDENCE_SCHEMA: the broker's offset lines (ISR shrinks,
                             leader and follower starts, log loads and truncations, the
                             epoch cache, unclean elections), by broker
    metadata_records/        METADATA_RECORDS_SCHEMA: the records of KRaft metadata log
                             segments, snapshots and kafka-dump-log text
    metadata_summary/        METADATA_SUMMARY_SCHEMA: per KRaft input, what it held

Between stages: PARSED_SCHEMA (what parsing one split of a file yields), BLOCK_SCHEMA (where
each split sits in its file) and ASSEMBLED_SCHEMA (the events the sequential assembly
yields). Their column names are, in order, the fields of the pure parser's rows
(`jobs.ingest.logparse.blocks.ParsedRow`, `...facts.Fact`, `...assemble.ObservedRow`),
which `tests/jobs/ingest/test_schemas.py` checks. Timestamps between stages are epoch
microseconds (`long`); the written tables carry `TimestampType` (UTC).

Only `pyspark.sql.types` is imported: no SparkSession is needed. Arrow schemas are derived
with `schemas.arrow.arrow_schema`.
"""

from __future__ import annotations

from pyspark.sql import types as T

_INTS = T.ArrayType(T.IntegerType(), True)


def _f(name: str, dtype: T.DataType) -> T.StructField:
    return T.StructField(name, dtype, True)


def _longs(*names: str) -> list[T.StructField]:
    return [_f(n, T.LongType()) for n in names]


# A dropped replica's end offset as the leader knew it (`jobs.ingest.logparse.offsets.facts`).
_REPLICA_OFFSETS = T.ArrayType(T.StructType([
    _f("broker_id", T.IntegerType()), _f("log_end_offset", T.LongType())]), True)


# What one log record says (`jobs.ingest.logparse.facts.Fact`), in its field order.
FACT_FIELDS: tuple[T.StructField, ...] = (
    _f("kind", T.StringType()),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("broker_id", T.IntegerType()),
    _f("from_state", T.StringType()),
    _f("to_state", T.StringType()),
    _f("leader", T.IntegerType()),
    _f("leader_epoch", T.IntegerType()),
    _f("isr", _INTS),
    _f("zk_version", T.IntegerType()),
    _f("replicas", _INTS),
    _f("brokers", _INTS),
    _f("controller_id", T.IntegerType()),
    _f("controller_epoch", T.IntegerType()),
    _f("outcome", T.StringType()),  # applied | rejected | failed (statemachine.rows)
    _f("error", T.StringType()),
    _f("detail", T.StringType()),
)

# -- written tables ------------------------------------------------------------------------

OBSERVED_SCHEMA = T.StructType([
    _f("cluster", T.StringType()),
    _f("seq", T.LongType()),  # the last event at or before the observation (0: none yet)
    _f("pos", T.LongType()),  # position in the merged order of all facts
    _f("ts", T.TimestampType()),
    _f("source", T.StringType()),  # file:line
    _f("observed_by", T.StringType()),  # controller | broker
    *FACT_FIELDS,
])

INGEST_SUMMARY_SCHEMA = T.StructType([
    _f("cluster", T.StringType()),
    _f("file", T.StringType()),  # "*": the total row
    *_longs("lines_read", "lines_used", "lines_extracted", "lines_informational",
            "lines_ignored", "lines_unparsed", "events", "observations"),
    # Release lines the line formats fit (`jobs.ingest.logparse.version`): "2.3" or "2.4-3.9".
    _f("kafka_version", T.StringType()),
    # The file's broker offset lines (rows of offset_evidence), and the broker that wrote it.
    _f("offset_lines", T.LongType()),
    _f("broker_id", T.IntegerType()),
])

# One row per broker offset line (`jobs.ingest.logparse.offsets.rows.EvidenceRow` after `cluster`).
OFFSET_EVIDENCE_SCHEMA = T.StructType([
    _f("cluster", T.StringType()),
    _f("file", T.StringType()),
    _f("line", T.LongType()),
    _f("source", T.StringType()),  # file:line
    _f("ts", T.TimestampType()),
    _f("broker_id", T.IntegerType()),
    _f("broker_from", T.StringType()),  # line | file | null (no broker known)
    _f("kind", T.StringType()),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("topic_id", T.StringType()),
    _f("leader_epoch", T.IntegerType()),
    _f("offset", T.LongType()),
    _f("log_end_offset", T.LongType()),
    _f("high_watermark", T.LongType()),
    _f("isr", _INTS),
    _f("previous_isr", _INTS),
    _f("leader", T.IntegerType()),
    _f("previous_leader", T.IntegerType()),
    _f("partition_epoch", T.IntegerType()),
    _f("replica_offsets", _REPLICA_OFFSETS),
    _f("format", T.StringType()),
    _f("text", T.StringType()),
])

UNPARSED_SCHEMA = T.StructType([
    _f("cluster", T.StringType()),
    _f("file", T.StringType()),
    _f("line", T.LongType()),
    _f("ts", T.TimestampType()),
    _f("text", T.StringType()),
    _f("reason", T.StringType()),
])

# -- between the job's stages --------------------------------------------------------------

# One row per fact, per unparsed line, and one count row per split ("block"); `rtype` says
# which. Lines are numbered from 0 within the block (`rline`).
PARSED_SCHEMA = T.StructType([
    _f("rtype", T.StringType()),
    _f("path", T.StringType()),
    _f("block", T.LongType()),
    _f("rline", T.LongType()),
    _f("fidx", T.IntegerType()),  # index of the fact within its record
    _f("ts", T.LongType()),
    _f("ts_fill", T.LongType()),  # the timestamp a line without one takes
    _f("observed_by", T.StringType()),
    *FACT_FIELDS,
    _f("text", T.StringType()),
    _f("reason", T.StringType()),
    *_longs("n_lines", "n_extracted", "n_informational", "n_ignored", "n_unparsed",
            "first_ts", "last_ts"),
    # An offset line's own fields (EVIDENCE rows).
    *_longs("offset", "log_end_offset", "high_watermark"),
    _f("previous_isr", _INTS),
    _f("previous_leader", T.IntegerType()),
    _f("partition_epoch", T.IntegerType()),
    _f("topic_id", T.StringType()),
    _f("replica_offsets", _REPLICA_OFFSETS),
    _f("format", T.StringType()),
])

# Per block: its file's display name, the lines before it, the timestamp carried into it
# and its file's first timestamp (computed on the driver from the count rows).
BLOCK_SCHEMA = T.StructType([
    _f("path", T.StringType()),
    _f("block", T.LongType()),
    _f("file", T.StringType()),
    _f("lines_before", T.LongType()),
    _f("carried", T.LongType()),
    _f("file_first", T.LongType()),
])

# What the assembly step emits: a tag, then the union of event and observation fields.
ASSEMBLED_SCHEMA = T.StructType([
    _f("rtype", T.StringType()),
    _f("seq", T.LongType()),
    _f("pos", T.LongType()),
    _f("ts", T.LongType()),
    _f("source", T.StringType()),
    _f("observed_by", T.StringType()),
    _f("event_type", T.StringType()),
    _f("unclean_leader_election", T.BooleanType()),
    _f("partition_state", T.StringType()),  # of a PartitionSnapshot event
    _f("topics_to_be_deleted", T.ArrayType(T.StringType())),  # of a ControllerFailover
    *FACT_FIELDS,
])


# -- KRaft metadata logs (`jobs.ingest.kraft`) ---------------------------------------------

_COUNTS = T.MapType(T.StringType(), T.LongType(), True)

# A row per metadata or control record (NoOpRecords only counted): the columns after
# `cluster` are `jobs.ingest.kraft.rows.MetadataRow`'s fields.
METADATA_RECORDS_SCHEMA = T.StructType([
    _f("cluster", T.StringType()),
    _f("source", T.StringType()),
    *_longs("offset", "batch_base_offset"),
    _f("batch_leader_epoch", T.IntegerType()),
    _f("ts", T.TimestampType()),
    _f("record_type", T.StringType()),
    _f("record_version", T.IntegerType()),
    _f("api_key", T.IntegerType()),
    _f("is_control", T.BooleanType()),
    _f("transaction", T.StringType()),
    _f("fields", T.StringType()),
    _f("detail", T.StringType()),
    _f("broker_id", T.IntegerType()),
    _f("broker_epoch", T.LongType()),
    _f("topic", T.StringType()),
    _f("topic_id", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("leader", T.IntegerType()),
    _f("isr", _INTS),
    _f("replicas", _INTS),
    _f("adding_replicas", _INTS),
    _f("removing_replicas", _INTS),
    _f("elr", _INTS),
    _f("last_known_elr", _INTS),
    _f("leader_epoch", T.IntegerType()),
    _f("partition_epoch", T.IntegerType()),
    _f("leader_recovery_state", T.IntegerType()),
    _f("fenced", T.BooleanType()),
    _f("in_controlled_shutdown", T.BooleanType()),
    _f("config_resource_type", T.StringType()),
    _f("config_resource", T.StringType()),
    _f("config_name", T.StringType()),
    _f("config_value", T.StringType()),
])

# A row per KRaft input, and the total (`source = "*"`): the columns after `cluster` are
# `jobs.ingest.kraft.rows.Summary`'s counts.
METADATA_SUMMARY_SCHEMA = T.StructType([
    _f("cluster", T.StringType()),
    _f("source", T.StringType()),
    _f("input_kind", T.StringType()),
    *_longs("batches", "records", "rows", "noops", "aborted", "open_transaction", "unknown",
            "corrupt_batches", "unreadable_lines", "first_offset", "last_offset"),
    _f("records_by_type", _COUNTS),
    _f("unknown_types", _COUNTS),
    _f("error", T.StringType()),
    _f("corrupt_reasons", T.ArrayType(T.StringType(), True)),
])
