"""Fixtures of the report's tests (the helpers are in report_fixtures.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.jobs.report.report_fixtures import run_chromium, small_tables


@pytest.fixture
def tables(tmp_path: Path) -> Path:
    return small_tables(tmp_path / "tables")


@pytest.fixture
def chromium() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_chromium
