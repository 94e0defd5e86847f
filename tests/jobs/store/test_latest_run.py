"""The run a command picks when `--run-id` is not given (pure: pyarrow only)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from jobs.store.latest_run import LatestRun, NoRunError, latest_run
from tests.helpers.tables import summary_row


def test_latest_is_the_run_that_finished_last_not_the_greatest_id(tmp_path: Path) -> None:
    summary_row(tmp_path, "9", datetime(2026, 11, 20, 3, 0))
    summary_row(tmp_path, "10", datetime(2026, 11, 20, 1, 0))
    summary_row(tmp_path, "nightly-2", datetime(2026, 11, 19, 1, 0))
    assert latest_run(str(tmp_path)) == LatestRun("9", datetime(2026, 11, 20, 3, 0))


def test_a_tie_goes_to_the_greatest_run_id(tmp_path: Path) -> None:
    summary_row(tmp_path, "b", datetime(2026, 11, 20, 3, 0))
    summary_row(tmp_path, "c", datetime(2026, 11, 20, 3, 0))
    summary_row(tmp_path, "a", datetime(2026, 11, 20, 3, 0))
    assert latest_run(str(tmp_path)).run_id == "c"


def test_a_file_uri_names_the_same_directory(tmp_path: Path) -> None:
    summary_row(tmp_path, "only", datetime(2026, 11, 20, 3, 0))
    assert latest_run(tmp_path.as_uri()).run_id == "only"


@pytest.mark.parametrize("make", ["nothing", "empty run_summary"])
def test_no_run_is_one_clear_error(tmp_path: Path, make: str) -> None:
    if make == "empty run_summary":
        (tmp_path / "run_summary").mkdir()
    with pytest.raises(NoRunError, match=r"no run under .*give --run-id"):
        latest_run(str(tmp_path))
