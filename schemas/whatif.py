"""Spark schemas of the what-if job's tables (docs/whatif.md).

Every replay table (`schemas.tables.TABLES`) is written by `jobs.whatif` with a `variant`
column right after `cluster` (`baseline` for the unedited log); `variant_schema` derives
them, so a replay table's columns are stated once. `whatif_impact` and
`whatif_partition_diff` are the what-if's own tables; the report job reads them, so their
columns are a contract.

A variant stores only the rows that differ from its base's (the baseline's, as a rule):
`whatif_sharing` says, per variant and replay group (a bucket of topics), which of the
base's rows are the variant's too; `jobs.store.variant_rows.read_variant_table` (Spark) and
`jobs.store.variant_rows_arrow.arrow_variant_table` (pyarrow) read a variant's whole table.
`SHARED_EVENT_KEYS` and `SHARED_STATE_TABLES` name the tables stored that way.
"""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.tables import TABLES

# The variant of the unedited log; no scenario variant may take the name.
BASELINE = "baseline"
# Joins a cluster and a variant into the one key the replay groups by, inside the job only
# (SYMBOL FOR UNIT SEPARATOR): the job refuses a log whose cluster names hold it.
VARIANT_SEPARATOR = "\u241f"


def _f(name: str, dtype: T.DataType) -> T.StructField:
    return T.StructField(name, dtype, True)


def variant_schema(schema: T.StructType) -> T.StructType:
    """A replay table's schema with `variant` (string) inserted right after `cluster`."""
    fields = list(schema.fields)
    assert fields[0].name == "cluster", fields[0].name
    return T.StructType([fields[0], _f("variant", T.StringType()), *fields[1:]])


# Replay tables the what-if does not copy: `changes` digests a run of the log as it
# happened (its requests are counted by the log scan, which never sees a variant's edits);
# what a variant changes is its impact against the baseline (`whatif_impact`). `data_loss`
# is proven from the brokers' own offset lines, which speak only of the elections that
# happened: a variant's unclean elections have no such evidence (its findings list them).
NOT_PER_VARIANT = frozenset({"changes", "data_loss"})
# Table name -> schema of the what-if's copy of every other replay table.
WHATIF_TABLES: dict[str, T.StructType] = {
    name: variant_schema(s) for name, s in TABLES.items() if name not in NOT_PER_VARIANT}

WHATIF_IMPACT = T.StructType([
    _f("cluster", T.StringType()),
    _f("run_id", T.StringType()),
    _f("variant", T.StringType()),
    _f("rank", T.IntegerType()),
    _f("partitions_offline_at_end", T.LongType()),
    _f("max_partitions_offline_at_once", T.LongType()),
    _f("offline_partition_seconds", T.DoubleType()),
    _f("under_min_isr_partition_seconds", T.DoubleType()),
    _f("unclean_elections", T.LongType()),
    _f("topics_losing_only_isr", T.LongType()),
    _f("leader_and_isr_requests", T.LongType()),
    _f("update_metadata_requests", T.LongType()),
    _f("stop_replica_requests", T.LongType()),
    _f("findings_by_kind", T.MapType(T.StringType(), T.LongType(), True)),
    _f("offline_partition_seconds_vs_baseline", T.DoubleType()),
    _f("max_partitions_offline_at_once_vs_baseline", T.LongType()),
    _f("unclean_elections_vs_baseline", T.LongType()),
    _f("partitions_offline_at_end_vs_baseline", T.LongType()),
    _f("events_dropped", T.LongType()),
    _f("events_injected", T.LongType()),
    _f("events_edited", T.LongType()),
    _f("partitions_edited", T.LongType()),
    _f("buckets_replayed", T.LongType()),
    _f("events_shared", T.LongType()),
    _f("events_no_longer_applying", T.LongType()),
    _f("no_edit", T.BooleanType()),
    _f("same_as_baseline", T.BooleanType()),
])

# Fields of `partition_states` the diff compares (ISR as a set, printed sorted).
DIFF_FIELDS: tuple[str, ...] = ("state", "leader", "isr", "leader_epoch", "replicas")

WHATIF_PARTITION_DIFF = T.StructType([
    _f("cluster", T.StringType()),
    _f("run_id", T.StringType()),
    _f("variant", T.StringType()),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("field", T.StringType()),
    _f("baseline", T.StringType()),
    _f("value", T.StringType()),
])

# The what-if's own tables (name = directory under --out).
IMPACT_TABLES: dict[str, T.StructType] = {
    "whatif_impact": WHATIF_IMPACT,
    "whatif_partition_diff": WHATIF_PARTITION_DIFF,
}

# Per-event tables a variant shares with its base up to where its fold leaves the base's,
# and the column that says where a row belongs: the seq of the event that wrote it (a
# window is written when it closes: its end; a window still open at the end, with a null
# end_seq, is never shared from a group the variant folds itself).
SHARED_EVENT_KEYS: dict[str, str] = {
    "state_changes": "seq",
    "partition_state_writes": "seq",
    "leader_and_isr_requests": "seq",
    "update_metadata_requests": "seq",
    "stop_replica_requests": "seq",
    "findings": "seq",
    "partition_windows": "end_seq",
}
# State tables a variant shares partition by partition: the base's rows of a shared group,
# less the partitions the variant wrote rows for or removed.
SHARED_STATE_TABLES: tuple[str, ...] = ("partition_states", "replica_states")
# The rest (quarantine, the timelines, incidents, run_summary: a few rows per variant) each
# variant holds whole.

_PARTITION_KEY = T.StructType([_f("topic", T.StringType()), _f("partition", T.IntegerType())])

# One row per (cluster, variant, replay group) whose rows the variant takes from its base.
# A variant without a row for a group holds that group's rows itself (a variant that differs
# from the first event; every variant of a KRaft log or of `--no-share`).
WHATIF_SHARING = T.StructType([
    _f("cluster", T.StringType()),
    _f("run_id", T.StringType()),
    _f("variant", T.StringType()),
    _f("base", T.StringType()),  # the variant whose rows it takes
    _f("buckets", T.IntegerType()),  # the run's bucket count: a topic's group
    _f("bucket", T.IntegerType()),
    # null: every row of the group is the base's; else the base's rows of the per-event
    # tables whose SHARED_EVENT_KEYS column is below it, and the base's state rows of the
    # partitions the variant holds no row for and did not remove.
    _f("before_seq", T.LongType()),
    _f("removed", T.ArrayType(_PARTITION_KEY, True)),  # partitions only the base has
    _f("rows_shared", T.MapType(T.StringType(), T.LongType(), True)),  # per table
])

# Tables that describe how the variants' rows are stored.
STORAGE_TABLES: dict[str, T.StructType] = {"whatif_sharing": WHATIF_SHARING}
