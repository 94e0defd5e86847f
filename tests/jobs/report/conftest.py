"""Fixtures of the report's tests (the helpers are in report_fixtures.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.jobs.report.report_fixtures import run_chromium, small_tables


@pytest.fixture
def tables(tmp_path: Path) -> Path:
    return small_tables(tmp_path / "tables")


@pytest.fixture(scope="session")
def sample_tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample (`jobs.sim` preset `sample`) replayed by the real job."""
    from jobs.replay.job import main as replay_main
    from jobs.sim.cli import write_log

    base = tmp_path_factory.mktemp("sample")
    write_log(str(base / "events"), preset="sample", seed=1)
    assert replay_main(["--events", str(base / "events"), "--out", str(base / "tables"),
                        "--run-id", "sample"]) == 0
    return base / "tables"


@pytest.fixture
def chromium() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_chromium
