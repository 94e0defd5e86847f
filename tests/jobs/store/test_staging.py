"""Tables written by the workers into a staging directory and committed by the driver."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from jobs.engine.codec import file_batch
from jobs.store.layout import STAGING
from jobs.store.staging import StagingArea
from jobs.store.tables import file_schema, read_table
from schemas.tables import TABLES
from statemachine.rows import FindingRow

ROWS = [FindingRow(1, 1_700_000_000_000_000, "t", 0, None, "late_event", "d", "s"),
        FindingRow(2, 1_700_000_000_000_001, "t", 1, 3, "late_event", "e", None)]


def stage(area: StagingArea, bucket: int, rows: list[FindingRow], chunk: int = 0) -> None:
    area.write("findings", "c1", bucket, chunk, file_batch("findings", "c1", rows))


def test_a_retried_task_rewrites_its_own_files(tmp_path: Path) -> None:
    area = StagingArea(str(tmp_path), "r1", 3)
    stage(area, 5, ROWS)
    stage(area, 5, ROWS)  # the same group again: a retry
    files = sorted(p.name for p in Path(area.batch_dir("findings")).iterdir())
    assert len(files) == 1 and files[0].startswith("part-b3-") and files[0].endswith(
        "-5-00000.parquet")
    table = pq.read_table(Path(area.batch_dir("findings")) / files[0])
    assert table.schema.names == file_schema("findings").names
    assert table.column("cluster").to_pylist() == ["c1", "c1"]


def test_first_batch_replaces_the_partition_later_batch_appends(
    spark: Any, tmp_path: Path
) -> None:
    out = str(tmp_path)
    old = StagingArea(out, "r1", 0)
    stage(old, 1, ROWS)
    assert old.commit(spark, "findings", replace=True)
    again = StagingArea(out, "r1", 0)  # the same run id replayed: its rows replace
    stage(again, 2, ROWS[:1])
    assert again.commit(spark, "findings", replace=True)
    later = StagingArea(out, "r1", 1)
    stage(later, 2, ROWS[1:])
    assert later.commit(spark, "findings", replace=False)
    assert not StagingArea(out, "r1", 2).commit(spark, "findings", replace=False)
    later.clean(spark, ("findings",))
    rows = read_table(spark, out, "findings").orderBy("seq").collect()
    assert [(r["seq"], r["run_id"], r["cluster"]) for r in rows] == [(1, "r1", "c1"),
                                                                    (2, "r1", "c1")]
    assert rows[0]["ts"].timestamp() == pytest.approx(1_700_000_000.0)
    assert not (tmp_path / "findings" / STAGING).exists()


def test_a_cleared_batch_commits_nothing_and_an_empty_table_reads_back(
    spark: Any, tmp_path: Path
) -> None:
    area = StagingArea(str(tmp_path), "r1", 0)
    stage(area, 1, ROWS)
    area.clear(spark, ("findings",))
    assert not area.commit(spark, "findings", replace=True)
    area.write_empty(spark, "findings")
    area.clean(spark, ("findings",))
    df = read_table(spark, str(tmp_path), "findings")
    assert df.count() == 0
    assert sorted(df.columns) == sorted(TABLES["findings"].fieldNames())
    assert [p.name for p in (tmp_path / "findings").iterdir()] == ["run_id=r1"]
