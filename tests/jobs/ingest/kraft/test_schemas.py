"""The KRaft tables' schemas (`schemas.ingest`) are what the decoder fills and what
docs/tables.md documents, column by column."""

from __future__ import annotations

import pytest
from pyspark.sql.types import StructType

from jobs.ingest.kraft.job import summary_rows
from jobs.ingest.kraft.rows import MetadataRow, Summary
from schemas.ingest import METADATA_RECORDS_SCHEMA, METADATA_SUMMARY_SCHEMA
from tests.test_docs import (
    COLUMN_HEADER,
    TABLES_DOC,
    _schema_columns,
    _section,
    _table_with_header,
)


def test_rows_are_the_records_table_after_its_cluster() -> None:
    assert METADATA_RECORDS_SCHEMA.fieldNames() == ["cluster", *MetadataRow._fields]


def test_summary_rows_fill_the_summary_table() -> None:
    doc = Summary("a.log", "segment").as_dict()
    assert set(METADATA_SUMMARY_SCHEMA.fieldNames()) - {"cluster"} <= set(doc)
    rows = summary_rows("c", [doc])
    assert [len(r) for r in rows] == [len(METADATA_SUMMARY_SCHEMA.fields)] * 2
    assert [dict(zip(METADATA_SUMMARY_SCHEMA.fieldNames(), r, strict=True))["source"]
            for r in rows] == ["a.log", "*"]


@pytest.mark.parametrize("table,schema", [("metadata_records", METADATA_RECORDS_SCHEMA),
                                          ("metadata_summary", METADATA_SUMMARY_SCHEMA)])
def test_tables_doc_matches_schema(table: str, schema: StructType) -> None:
    section = _section(TABLES_DOC.read_text(encoding="utf-8"), "### ", f"`{table}`")
    rows = _table_with_header(section.lines, COLUMN_HEADER)
    assert [(r[0], r[1]) for r in rows] == _schema_columns(schema)
    assert all(r[2] for r in rows)
