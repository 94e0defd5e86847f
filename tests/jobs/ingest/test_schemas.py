"""The ingest job's schemas (`schemas.ingest`) and the pure parser's rows agree: each
schema's columns are, in order, the fields of the rows that fill it, and the stages' schemas
are the same as before they were moved (column for column)."""

from __future__ import annotations

from jobs.ingest.job import SummaryRow
from jobs.ingest.logparse.assemble import ObservedRow
from jobs.ingest.logparse.blocks import SORTED_COLUMNS, ParsedRow
from jobs.ingest.logparse.facts import Fact
from jobs.ingest.logparse.offsets.facts import OffsetFact
from jobs.ingest.logparse.offsets.rows import EvidenceRow
from schemas.events import EVENT_SCHEMA
from schemas.ingest import (
    ASSEMBLED_SCHEMA,
    BLOCK_SCHEMA,
    FACT_FIELDS,
    INGEST_SUMMARY_SCHEMA,
    OBSERVED_SCHEMA,
    OFFSET_EVIDENCE_SCHEMA,
    PARSED_SCHEMA,
)


def test_fact_fields_are_the_facts() -> None:
    assert [f.name for f in FACT_FIELDS] == list(Fact._fields)


def test_parsed_rows_fill_the_parsed_schema() -> None:
    assert PARSED_SCHEMA.fieldNames() == list(ParsedRow._fields)


def test_observed_rows_are_the_observed_table_after_its_cluster() -> None:
    assert OBSERVED_SCHEMA.fieldNames() == ["cluster", *ObservedRow._fields]


def test_assembled_rows_hold_every_event_column() -> None:
    assert set(EVENT_SCHEMA.fieldNames()) - {"cluster"} <= set(ASSEMBLED_SCHEMA.fieldNames())


def test_sorted_facts_come_from_the_located_rows() -> None:
    located = {*PARSED_SCHEMA.fieldNames(), *BLOCK_SCHEMA.fieldNames(), "line", "ts_eff"}
    assert set(SORTED_COLUMNS) <= located


def test_summary_counts_lines_then_rows() -> None:
    assert INGEST_SUMMARY_SCHEMA.fieldNames() == [
        "cluster", "file", "lines_read", "lines_used", "lines_extracted",
        "lines_informational", "lines_ignored", "lines_unparsed", "events", "observations",
        "kafka_version", "offset_lines", "broker_id"]


def test_summary_rows_fill_the_summary_schema() -> None:
    assert INGEST_SUMMARY_SCHEMA.fieldNames() == list(SummaryRow._fields)


def test_evidence_rows_are_the_offset_evidence_table_after_its_cluster() -> None:
    assert OFFSET_EVIDENCE_SCHEMA.fieldNames() == ["cluster", *EvidenceRow._fields]


def test_offset_facts_fill_the_parsed_rows() -> None:
    assert set(OffsetFact._fields) <= set(PARSED_SCHEMA.fieldNames())
