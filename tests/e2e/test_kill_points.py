"""A nightly run killed (driver, JVM and workers, SIGKILL) at each point between "batch
computed" and "run marker written", then run again with the same command: every table of
both nights equals a clean run's, row for row."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from jobs.common.kill_points import ENV, POINTS
from jobs.replay.job import main
from jobs.store.staging import KILL_WORKER_ENV
from jobs.store.tables import file_schema
from schemas import event_types as ET
from schemas.tables import TABLES
from tests.helpers import ROOT
from tests.helpers.event_log import created, ev, failover, write_log
from tests.helpers.same_tables import CLOCKS, run_rows
from tests.helpers.same_tables import assert_same_tables as same_rows

pytestmark = pytest.mark.slow

NIGHT1 = [
    failover(1, 1, [1, 2, 3]),
    created(2, "orders", 0, [1, 2]),
    created(2, "orders", 1, [2, 3]),
    created(3, "solo", 0, [3]),
    ev(4, ET.ISR_CHANGED, topic="orders", partition=0, isr=[1], leader_epoch=0),
]
NIGHT2 = [
    ev(10, ET.BROKER_FAILURE, broker_id=3),
    ev(11, ET.TOPIC_DELETION_REQUESTED, topic="orders"),
    ev(12, ET.BROKER_STARTUP, broker_id=3),
    created(13, "later", 0, [1, 3]),
    ev(14, "Bogus", topic="later"),
]


def args(base: Path, run_id: str) -> list[str]:
    return ["--events", str(base / "events"), "--out", str(base / "out"),
            "--checkpoint", str(base / "chk"), "--run-id", run_id, "--buckets", "4"]


def night(base: Path, n: int) -> None:
    write_log(base / "events", NIGHT1 if n == 1 else NIGHT2, f"night{n}")


def killed(base: Path, run_id: str, point: str) -> int:
    """The job in its own process group, killed with it at `point`."""
    env = {**os.environ, ENV: point, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-m", "jobs.replay", *args(base, run_id)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          start_new_session=True)
    return done.returncode


@pytest.fixture(scope="module")
def clean(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("clean")
    for n in (1, 2):
        night(base, n)
        assert main(args(base, f"n{n}")) == 0
    return base


def assert_same_tables(got: Path, want: Path) -> None:
    """Both nights' tables, row for row (read with pyarrow: the tables are the evidence
    here, not what is under test)."""
    same_rows(got / "out", want / "out", TABLES, ("n1", "n2"))


def summary(base: Path, run_id: str) -> dict[str, int]:
    names = ("rows_read", "rows_quarantined", "batches")
    [row] = run_rows(base / "out", "run_summary", run_id)
    columns = [c for c in file_schema("run_summary").names if c not in CLOCKS["run_summary"]]
    return {n: row[columns.index(n)] for n in names}


@pytest.mark.parametrize("point", POINTS)
def test_a_run_killed_at_each_point_reruns_to_a_clean_runs_tables(
    spark: SparkSession, clean: Path, tmp_path: Path, point: str
) -> None:
    night(tmp_path, 1)
    assert main(args(tmp_path, "n1")) == 0
    night(tmp_path, 2)
    assert killed(tmp_path, "n2", point) == -signal.SIGKILL
    assert not (tmp_path / "chk" / "runs" / "n2.json").exists()  # the run did not finish
    assert main(args(tmp_path, "n2")) == 0  # the same command again
    assert (tmp_path / "chk" / "runs" / "n2.json").exists()
    assert_same_tables(tmp_path, clean)
    assert summary(tmp_path, "n2") == {"rows_read": 5, "rows_quarantined": 1, "batches": 1}


def test_without_the_ledger_a_rerun_after_the_commit_would_count_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The check above can fail: without the batch records, the rerun of a run killed
    after Spark's commit finds nothing left to replay, and its summary would say the night
    read no rows."""
    night(tmp_path, 1)
    assert main(args(tmp_path, "n1")) == 0
    night(tmp_path, 2)
    assert killed(tmp_path, "n2", "query_committed") == -signal.SIGKILL
    for record in (tmp_path / "chk" / "runs" / "n2").iterdir():
        record.unlink()
    assert main(args(tmp_path, "n2")) == 0
    got = summary(tmp_path, "n2")
    assert (got["rows_read"], got["batches"]) == (0, 0)


def test_a_worker_killed_after_staging_a_file_is_retried_to_a_clean_runs_tables(
    spark: SparkSession, clean: Path, tmp_path: Path
) -> None:
    """A Python worker dies after writing its first staged file (os._exit, mid-task); Spark
    retries the task (`local[2,4]`: four attempts), which rewrites the same files."""
    marker = tmp_path / "worker-killed"
    for n in (1, 2):
        night(tmp_path, n)
        env = {**os.environ, KILL_WORKER_ENV: str(marker), "PYTHONPATH": str(ROOT),
               "SPARK_LOCAL_IP": "127.0.0.1"}
        done = subprocess.run(
            [sys.executable, "-m", "jobs.replay", *args(tmp_path, f"n{n}"),
             "--master", "local[2,4]"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert marker.exists()  # a worker was killed (in night 1)
    assert_same_tables(tmp_path, clean)
    assert not list((tmp_path / "out").glob("*/_staging"))


def test_files_staged_by_a_killed_attempt_are_never_read(
    spark: SparkSession, clean: Path, tmp_path: Path
) -> None:
    """Files an earlier attempt left in the staging directory of the batch (or of another
    batch of the run) are removed, never committed."""
    night(tmp_path, 1)
    assert main(args(tmp_path, "n1")) == 0
    night(tmp_path, 2)
    n1 = sorted((tmp_path / "out" / "state_changes" / "run_id=n1").glob("*.parquet"))[0]
    stray = pq.read_table(n1).slice(0, 1)
    for batch in (1, 7):
        staged = tmp_path / "out" / "state_changes" / "_staging" / "n2" / f"batch-{batch}"
        staged.mkdir(parents=True)
        pq.write_table(stray, staged / f"part-b{batch}-stray.parquet")
    assert main(args(tmp_path, "n2")) == 0
    assert_same_tables(tmp_path, clean)
    assert not (tmp_path / "out" / "state_changes" / "_staging").exists()
