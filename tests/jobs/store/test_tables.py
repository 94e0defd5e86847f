"""jobs.store.tables: a table directory never written reads as an empty table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jobs.store.tables import read_table_or_empty, write_table
from schemas.tables import TABLES


def test_a_missing_table_reads_empty_with_its_schema(spark: Any, tmp_path: Path) -> None:
    df = read_table_or_empty(spark, str(tmp_path), "partition_state_writes")
    assert df.schema == TABLES["partition_state_writes"]
    assert df.count() == 0


def test_a_written_table_reads_its_rows(spark: Any, tmp_path: Path) -> None:
    schema = TABLES["findings"]
    row = {f.name: None for f in schema.fields} | {
        "cluster": "c", "seq": 1, "kind": "unknown_topic", "run_id": "r1"}
    df = spark.createDataFrame([tuple(row[f.name] for f in schema.fields)], schema)
    write_table(spark, df, str(tmp_path), "findings", "r1", rows=1, replace=True)
    read = read_table_or_empty(spark, str(tmp_path), "findings")
    assert [(r.cluster, r.seq, r.kind, r.run_id) for r in read.collect()] == [
        ("c", 1, "unknown_topic", "r1")]
