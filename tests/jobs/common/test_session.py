"""Which Python the session's workers run (pure: no session is started)."""

from __future__ import annotations

import os
import sys

import pytest

from jobs.common.session import WORKER_PYTHON, choose_worker_python


def test_unconfigured_workers_run_the_drivers_interpreter(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    settings: dict[str, str] = {}
    assert choose_worker_python(settings) == sys.executable
    assert settings == {WORKER_PYTHON: sys.executable}
    assert os.environ["PYSPARK_PYTHON"] == sys.executable


def test_pyspark_python_variable_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/env/bin/python")
    settings: dict[str, str] = {}
    assert choose_worker_python(settings) is None
    assert settings == {}


def test_spark_pyspark_python_setting_is_kept_and_exported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    settings = {WORKER_PYTHON: "./environment/bin/python"}
    assert choose_worker_python(settings) is None
    assert settings == {WORKER_PYTHON: "./environment/bin/python"}

    assert os.environ["PYSPARK_PYTHON"] == "./environment/bin/python"


def test_no_command_prints_progress_bars_into_cron_logs() -> None:
    # Ingest and compare read no properties file: the defaults alone must keep them quiet.
    from jobs.common.session import DEFAULTS

    assert DEFAULTS["spark.ui.showConsoleProgress"] == "false"


def test_every_session_keeps_the_same_state_store_versions() -> None:
    # A checkpoint is written by local runs, spark-submit and the commands without a
    # properties file alike: the state store's versioning must not depend on which.
    from jobs.common.session import DEFAULTS, ROOT, read_properties

    state_keys = [k for k in DEFAULTS if k.startswith("spark.sql.streaming.")]
    assert "spark.sql.streaming.stateStore.unloadOnCommit" in state_keys
    assert "spark.sql.streaming.minBatchesToRetain" in state_keys
    for name in ("local.conf", "cluster.conf"):
        props = read_properties(ROOT / "conf" / "spark" / name)
        assert {k: props.get(k) for k in state_keys} == {k: DEFAULTS[k] for k in state_keys}
