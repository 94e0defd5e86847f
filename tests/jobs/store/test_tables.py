"""jobs.store.tables: a table directory never written reads as an empty table; a run's
partition written with pyarrow reads back through Spark with the table's schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from jobs.store.tables import (
    ensure_run_partitions,
    file_schema,
    read_table_or_empty,
    write_partition,
)
from schemas.tables import TABLES


def test_a_missing_table_reads_empty_with_its_schema(spark: Any, tmp_path: Path) -> None:
    df = read_table_or_empty(spark, str(tmp_path), "partition_state_writes")
    assert df.schema == TABLES["partition_state_writes"]
    assert df.count() == 0


def test_a_written_table_reads_its_rows(spark: Any, tmp_path: Path) -> None:
    row = {name: None for name in file_schema("findings").names} | {
        "cluster": "c", "seq": 1, "kind": "unknown_topic"}
    rows = pa.Table.from_pylist([row], schema=file_schema("findings"))
    assert write_partition(str(tmp_path), "findings", "r1", rows) == 1
    assert write_partition(str(tmp_path), "findings", "r2", None) == 0
    read = read_table_or_empty(spark, str(tmp_path), "findings")
    assert sorted(read.columns) == sorted(TABLES["findings"].fieldNames())
    assert [(r.cluster, r.seq, r.kind, r.run_id) for r in read.collect()] == [
        ("c", 1, "unknown_topic", "r1")]
    # Replaced, never appended to: the same run again holds only its new rows.
    again = rows.set_column(rows.schema.get_field_index("seq"), "seq", pa.array([2]))
    write_partition(str(tmp_path), "findings", "r1", again)
    assert [r.seq for r in read_table_or_empty(spark, str(tmp_path), "findings").collect()] \
        == [2]


def test_every_table_gets_the_runs_partition(tmp_path: Path) -> None:
    ensure_run_partitions(str(tmp_path), "r1")
    written = tmp_path.glob("*/run_id=r1/part-00000.parquet")
    assert sorted(p.parent.parent.name for p in written) == sorted(TABLES)
