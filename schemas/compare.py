"""Spark schemas of the compare job (`jobs.compare`): the tables it writes and the rows its
stages pass to each other.

Written tables (docs/tables.md):

    comparison/       COMPARISON_SCHEMA: one row per partition and per replica
    transitions/      TRANSITIONS_SCHEMA: every transition and its evidence
    brokers/          BROKERS_SCHEMA: each broker list Kafka logged against the replay's
    compare_summary/  COMPARE_SUMMARY_SCHEMA: counts by status and by evidence

The column names of the first three are, in order, the fields of the pure comparison's rows
(`jobs.compare.partitions.ComparisonRow`, `...partitions.TransitionRow`,
`...brokers.BrokerRow`), which `tests/jobs/compare/test_schemas.py` checks.

Between stages: REPLAYED_SCHEMA (every replayed row of one partition in one layout, tagged
by the table it comes from, for the cogroup) and COMPARED_SCHEMA (what the cogroup returns:
a tag, then the union of the comparison and transition columns).

Only `pyspark.sql.types` is imported: no SparkSession is needed. Arrow schemas are derived
with `schemas.arrow.arrow_schema`.
"""

from __future__ import annotations

from pyspark.sql import types as T

_INTS = T.ArrayType(T.IntegerType(), True)


def _f(name: str, dtype: T.DataType) -> T.StructField:
    return T.StructField(name, dtype, True)


_PARTITION_KEY = (
    _f("cluster", T.StringType()),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
)

COMPARISON_SCHEMA = T.StructType([
    *_PARTITION_KEY,
    _f("broker_id", T.IntegerType()),  # null: the partition's own row
    _f("entity", T.StringType()),  # partition | replica
    _f("status", T.StringType()),  # agree | differ | not_observed | not_replayed
    _f("observed_points", T.LongType()),
    _f("observed_transitions", T.LongType()),
    _f("matched_transitions", T.LongType()),
    _f("inferred_transitions", T.LongType()),
    _f("observed_only_transitions", T.LongType()),
    _f("state_agree", T.BooleanType()),
    _f("leader_agree", T.BooleanType()),
    _f("isr_agree", T.BooleanType()),
    _f("leader_epoch_agree", T.BooleanType()),
    _f("first_divergence_seq", T.LongType()),
    _f("first_divergence_field", T.StringType()),
    _f("observed_value", T.StringType()),
    _f("replayed_value", T.StringType()),
    _f("divergence_source", T.StringType()),
    _f("observed_state", T.StringType()),
    _f("replayed_state", T.StringType()),
])

TRANSITIONS_SCHEMA = T.StructType([
    *_PARTITION_KEY,
    _f("broker_id", T.IntegerType()),
    _f("machine", T.StringType()),  # partition | replica
    _f("seq", T.LongType()),
    _f("step", T.IntegerType()),
    _f("from_state", T.StringType()),
    _f("to_state", T.StringType()),
    _f("outcome", T.StringType()),  # applied | rejected | failed
    _f("evidence", T.StringType()),  # observed | inferred | observed_only | seeded
    _f("source", T.StringType()),
])

BROKERS_SCHEMA = T.StructType([
    _f("cluster", T.StringType()),
    _f("seq", T.LongType()),
    _f("source", T.StringType()),
    _f("kind", T.StringType()),
    _f("observed", _INTS),
    _f("replayed", _INTS),
    _f("agree", T.BooleanType()),
    _f("missing_in_replay", _INTS),
    _f("extra_in_replay", _INTS),
])

COMPARE_SUMMARY_SCHEMA = T.StructType([
    _f("name", T.StringType()),
    _f("count", T.LongType()),
])

# -- between the job's stages --------------------------------------------------------------

# The replay's state_changes (tag C, `n` = step), leader_and_isr_requests and
# update_metadata_requests (tag L, `n` = batch), partition_state_writes (tag W, `n` = write),
# partition_states (tag P) and replica_states (tag R), and the leadership of the ingest's
# PartitionSnapshot events (tag S), each with the columns it lacks as nulls.
REPLAYED_SCHEMA = T.StructType([
    *_PARTITION_KEY,
    _f("tag", T.StringType()),
    _f("seq", T.LongType()),
    _f("n", T.LongType()),
    _f("broker_id", T.IntegerType()),
    _f("machine", T.StringType()),
    _f("from_state", T.StringType()),
    _f("to_state", T.StringType()),
    _f("outcome", T.StringType()),
    _f("reason", T.StringType()),
    _f("leader", T.IntegerType()),
    _f("leader_epoch", T.IntegerType()),
    _f("isr", _INTS),
    _f("state", T.StringType()),
])

COMPARED_SCHEMA = T.StructType([
    _f("rtype", T.StringType()),  # E: a comparison row, T: a transition row
    *COMPARISON_SCHEMA.fields,
    *[f for f in TRANSITIONS_SCHEMA.fields if f.name not in COMPARISON_SCHEMA.fieldNames()],
])
