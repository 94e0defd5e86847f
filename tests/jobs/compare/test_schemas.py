"""The compare job's schemas (`schemas.compare`) and the pure comparison's rows agree: the
columns of each written table are, in order, the fields of the row that fills it."""

from __future__ import annotations

from jobs.compare.brokers import BrokerRow
from jobs.compare.partitions import ComparisonRow, Observation, TransitionRow
from schemas.compare import (
    BROKERS_SCHEMA,
    COMPARED_SCHEMA,
    COMPARISON_SCHEMA,
    TRANSITIONS_SCHEMA,
)
from schemas.ingest import OBSERVED_SCHEMA


def test_written_tables_have_the_rows_fields() -> None:
    assert COMPARISON_SCHEMA.fieldNames() == list(ComparisonRow._fields)
    assert TRANSITIONS_SCHEMA.fieldNames() == list(TransitionRow._fields)
    assert BROKERS_SCHEMA.fieldNames() == list(BrokerRow._fields)


def test_the_cogroup_output_holds_both_tables() -> None:
    names = COMPARED_SCHEMA.fieldNames()
    assert names[0] == "rtype"
    assert set(names[1:]) == set(ComparisonRow._fields) | set(TransitionRow._fields)
    for schema in (COMPARISON_SCHEMA, TRANSITIONS_SCHEMA):
        for f in schema.fields:
            assert COMPARED_SCHEMA[f.name].dataType == f.dataType


def test_observations_read_are_columns_of_the_ingest() -> None:
    assert set(Observation._fields) <= set(OBSERVED_SCHEMA.fieldNames())
