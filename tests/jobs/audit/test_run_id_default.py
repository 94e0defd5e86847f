"""`jobs.audit` without `--run-id`: the latest run of `--tables`, said out loud (pure: the
choice is made before any Spark session)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from jobs.audit.job import parse_args
from jobs.common.exitcodes import BAD_INPUT
from tests.helpers.tables import summary_row


def test_run_id_defaults_to_the_latest_run(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    summary_row(tmp_path, "20261119", datetime(2026, 11, 19, 2, 0))
    summary_row(tmp_path, "20261120", datetime(2026, 11, 20, 2, 0))
    args = parse_args(["--tables", str(tmp_path)])
    assert args.run_id == "20261120"
    assert capsys.readouterr().out == (
        f"[audit] no --run-id: run 20261120, the latest in {tmp_path} "
        "(finished 2026-11-20 02:00:00 UTC)\n")


def test_a_given_run_id_is_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary_row(tmp_path, "20261120", datetime(2026, 11, 20, 2, 0))
    assert parse_args(["--tables", str(tmp_path), "--run-id", "old"]).run_id == "old"
    assert capsys.readouterr().out == ""


def test_tables_without_a_run_exit_2_with_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        parse_args(["--tables", str(tmp_path / "nowhere")])
    assert stop.value.code == BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("[audit] ERROR: no run under ")
    assert err.count("\n") == 1
