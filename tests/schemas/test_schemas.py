"""The table schemas agree with the core's row types, and the job's bucket expression agrees
with the core's `bucket_of` (pure: no SparkSession needed except for the last test)."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from jobs.engine.data_loss import DataLossRow
from schemas.events import EVENT_SCHEMA
from schemas.state import REPLAY_INPUT_SCHEMA, STATE_SCHEMA, TAGGED_SCHEMA
from schemas.tables import QUARANTINE, TABLES, payload_columns
from statemachine import rows
from statemachine.events import Event

ROW_TYPES = {
    "partition_states": rows.PartitionStateRow,
    "replica_states": rows.ReplicaStateRow,
    "state_changes": rows.StateChangeRow,
    "partition_state_writes": rows.PartitionStateWriteRow,
    "leader_and_isr_requests": rows.LeaderAndIsrRow,
    "update_metadata_requests": rows.UpdateMetadataRow,
    "stop_replica_requests": rows.StopReplicaRow,
    "findings": rows.FindingRow,
    "partition_windows": rows.PartitionWindowRow,
    "broker_timeline": rows.BrokerIntervalRow,
    "controller_timeline": rows.ControllerRow,
    "data_loss": DataLossRow,
}


@pytest.mark.parametrize("table", sorted(ROW_TYPES))
def test_table_columns_follow_the_core_rows(table: str) -> None:
    assert payload_columns(table) == ROW_TYPES[table]._fields


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_table_starts_with_cluster_and_run_id(table: str) -> None:
    names = [f.name for f in TABLES[table].fields]
    assert names[:2] == ["cluster", "run_id"]
    assert len(set(names)) == len(names)


def test_quarantine_holds_the_row_as_read_and_a_reason() -> None:
    assert payload_columns("quarantine") == (*Event._fields, "reason")
    by_name = {f.name: f.dataType for f in QUARANTINE.fields}
    for f in EVENT_SCHEMA.fields:
        assert by_name[f.name] == f.dataType


def test_state_schema_has_no_collections() -> None:
    # PySpark 4.3.0 crashes on array/map in a state schema (`KeyError: 'elementType'`).
    def flat(dtype: T.DataType) -> bool:
        if isinstance(dtype, (T.ArrayType, T.MapType)):
            return False
        if isinstance(dtype, T.StructType):
            return all(flat(f.dataType) for f in dtype.fields)
        return True

    assert flat(STATE_SCHEMA)


def test_operator_schemas_are_flat_and_keyed() -> None:
    assert [f.name for f in REPLAY_INPUT_SCHEMA.fields][:4] == [
        "cluster", "bucket", "wake", "reason"]
    assert [f.name for f in TAGGED_SCHEMA.fields][:5] == [
        "cluster", "bucket", "table", "rows", "payload"]


def test_bucket_expression_matches_the_core(spark) -> None:
    from pyspark.sql import functions as F

    from jobs.engine.keying import bucket_sql
    from statemachine.replay import bucket_of

    def bucket_column(buckets: int):  # the group column key_events selects
        return F.expr(bucket_sql(buckets))

    pairs = [("default", "orders"), ("east", "payments-ü"), ("default", "t1"), ("x", "")]
    df = spark.createDataFrame(
        [(c, t, "PartitionCreated") for c, t in pairs],
        "cluster string, topic string, event_type string",
    )
    got = df.select("cluster", "topic", bucket_column(97).alias("b")).collect()
    assert {(r["cluster"], r["topic"]): r["b"] for r in got} == {
        (c, t): bucket_of(c, t, 97) for c, t in pairs
    }
    cluster_row = df.select(
        F.lit("default").alias("cluster"),
        F.lit(None).cast("string").alias("topic"),
        F.lit("BrokerFailure").alias("event_type"),
    )
    assert cluster_row.select(bucket_column(97)).first()[0] == -1
