"""A nightly run killed (driver, JVM and workers, SIGKILL) at each point between "batch
computed" and "run marker written", then run again with the same command: every table of
both nights equals a clean run's, row for row."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.common.kill_points import ENV, POINTS
from jobs.replay.job import main
from jobs.store.staging import KILL_WORKER_ENV
from jobs.store.tables import read_table
from schemas import event_types as ET
from schemas.tables import TABLES
from tests.helpers import ROOT
from tests.helpers.event_log import created, ev, failover, write_log

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
# Clocks differ from run to run; everything else must not.
CLOCKS = {"run_summary": ("started_at", "finished_at", "stage_seconds")}


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


def _table(spark: SparkSession, base: Path, table: str, run_id: str) -> DataFrame:
    df = read_table(spark, str(base / "out"), table).where(F.col("run_id") == run_id)
    df = df.drop(*CLOCKS.get(table, ()))
    # Maps cannot be sorted (chispa sorts the rows): compare their sorted entries.
    return df.select(*[F.array_sort(F.map_entries(f.name)).alias(f.name)
                       if isinstance(f.dataType, T.MapType) else F.col(f.name)
                       for f in df.schema.fields])


def assert_same_tables(spark: SparkSession, got: Path, want: Path) -> None:
    for run_id in ("n1", "n2"):
        for table in TABLES:
            assert_df_equality(_table(spark, got, table, run_id),
                               _table(spark, want, table, run_id),
                               ignore_row_order=True, ignore_nullable=True)


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
    assert_same_tables(spark, tmp_path, clean)
    [summary] = _table(spark, tmp_path, "run_summary", "n2").collect()
    assert (summary["rows_read"], summary["rows_quarantined"], summary["batches"]) == (5, 1, 1)


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
    [summary] = _table(spark, tmp_path, "run_summary", "n2").collect()
    assert (summary["rows_read"], summary["batches"]) == (0, 0)


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
    assert_same_tables(spark, tmp_path, clean)
    assert not list((tmp_path / "out").glob("*/_staging"))


def test_files_staged_by_a_killed_attempt_are_never_read(
    spark: SparkSession, clean: Path, tmp_path: Path
) -> None:
    """Files an earlier attempt left in the staging directory of the batch (or of another
    batch of the run) are removed, never committed."""
    night(tmp_path, 1)
    assert main(args(tmp_path, "n1")) == 0
    night(tmp_path, 2)
    stray = read_table(spark, str(tmp_path / "out"), "state_changes").limit(1).toPandas()
    for batch in (1, 7):
        staged = tmp_path / "out" / "state_changes" / "_staging" / "n2" / f"batch-{batch}"
        staged.mkdir(parents=True)
        stray.drop(columns=["run_id"]).to_parquet(staged / f"part-b{batch}-stray.parquet")
    assert main(args(tmp_path, "n2")) == 0
    assert_same_tables(spark, tmp_path, clean)
    assert not (tmp_path / "out" / "state_changes" / "_staging").exists()
