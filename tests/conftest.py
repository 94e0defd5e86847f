"""One SparkSession for the whole test run, tuned for a 2-core machine: local[2], two
shuffle partitions, no UI, a 1 GB driver with the C1 JIT and the serial GC (the JVM starts in
about 10 s instead of 15)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from jobs.common.session import build_session
    from jobs.engine.sizing import SMALL_JVM_OPTIONS

    session = build_session(
        app_name="tests",
        master="local[2]",
        conf={
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.driver.memory": "1g",
            "spark.driver.extraJavaOptions": SMALL_JVM_OPTIONS,
        },
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def sample_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample log (`jobs.sim` preset `sample`, seed 1), simulated once per test
    session (per worker process under pytest-xdist). Read only: copy what you edit."""
    from jobs.sim.cli import write_log

    path = tmp_path_factory.mktemp("sample") / "events"
    write_log(str(path), preset="sample", seed=1)
    return path


@pytest.fixture(scope="session")
def sample_tables(spark: Any, sample_log: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`sample_log` replayed once per test session by the real job (run id `sample`, the
    default buckets): the canonical replay the report and what-if tests read. Read only."""
    from jobs.replay.job import main as replay_main

    out = tmp_path_factory.mktemp("sample-replay") / "tables"
    assert replay_main(["--events", str(sample_log), "--out", str(out),
                        "--run-id", "sample"], spark=spark) == 0
    return out


def pytest_collection_modifyitems(items: list[Any]) -> None:
    # Anything that asks for the `spark` fixture is a Spark test, so `make test-core` can
    # select the pure tests without each file remembering the marker.
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
