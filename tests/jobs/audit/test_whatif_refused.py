"""A what-if's output given to the audit as --tables: its variants would be summed as one
cluster (a sweep of 13 variants reads as 13 failovers), so it is refused with exit 2
before Spark starts, with the ERROR verdict published."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.audit.job import main
from tests.jobs.report.report_fixtures import small_tables


def as_whatif_output(tables: Path) -> None:
    """Every table file with the what-if's `variant` column after `cluster`."""
    for path in sorted(tables.glob("*/run_id=*/*.parquet")):
        table = pq.read_table(path)
        pq.write_table(table.add_column(1, "variant", pa.array(["baseline"] * table.num_rows,
                                                               pa.string())), path)


def test_a_whatif_output_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tables = small_tables(tmp_path / "whatif")
    as_whatif_output(tables)
    verdict = tmp_path / "verdict.json"
    assert main(["--tables", str(tables), "--verdict-json", str(verdict)]) == 2
    error, = capsys.readouterr().err.strip().splitlines()
    assert f"--tables {tables} is a what-if output" in error
    assert "'variant' column" in error
    assert not (tables / "audit_checks").exists()  # nothing written under the tables
    assert json.loads(verdict.read_text())["verdict"] == "ERROR"


def test_a_replay_output_is_not_refused_as_one(tmp_path: Path) -> None:
    from jobs.store.tables import variant_table

    tables = small_tables(tmp_path / "replay")
    assert variant_table(str(tables), ("run_summary", "partition_states")) is None
    as_whatif_output(tables)
    assert variant_table(str(tables), ("run_summary", "partition_states")) == "run_summary"
