"""The whole job with the driver's pyarrow reads (the timeline scan, the offline roll-up)
and with the Spark jobs they replace writes the same tables, row for row: the sample log
with contract-breaking rows, a first run and a nightly run on a checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import jobs.engine.offline_rollup as rollup
from jobs.engine import timeline
from jobs.replay.job import main
from jobs.store.tables import read_table
from schemas.tables import TABLES

pytestmark = pytest.mark.slow

CLOCKS = {"started_at", "finished_at", "stage_seconds"}


def tables(spark: Any, out: Path, run_id: str) -> dict[str, list[str]]:
    got = {}
    for table in TABLES:
        df = read_table(spark, str(out), table).where(f"run_id = '{run_id}'")
        columns = [c for c in df.columns if c not in CLOCKS]
        got[table] = sorted(repr(tuple(r)) for r in df.select(*columns).collect())
    return got


def replay_days(spark: Any, base: Path, name: str) -> dict[str, dict[str, list[str]]]:
    """Day 1 over the first file, then the night over both, on one checkpoint."""
    events = base / name / "events"
    files = sorted((base / "log").glob("*.parquet"))
    assert len(files) >= 2
    events.mkdir(parents=True)
    for f in files[:-1]:
        (events / f.name).write_bytes(f.read_bytes())
    common = ["--out", str(base / name / "out"), "--checkpoint", str(base / name / "ck"),
              "--events", str(events), "--buckets", "4"]
    assert main([*common, "--run-id", "d1"], spark=spark) == 0
    (events / files[-1].name).write_bytes(files[-1].read_bytes())
    assert main([*common, "--run-id", "d2"], spark=spark) == 0
    return {day: tables(spark, base / name / "out", day) for day in ("d1", "d2")}


def test_pyarrow_reads_and_spark_jobs_write_the_same_tables(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobs.sim.cli import write_log

    write_log(str(tmp_path / "log"), preset="sample", seed=3, bad_rows=0.02)
    fast = replay_days(spark, tmp_path, "fast")
    with monkeypatch.context() as m:
        m.setattr(timeline, "read_timeline_rows", lambda _: None)
        m.setattr(rollup, "arrow_windows", lambda *_: None)
        slow = replay_days(spark, tmp_path, "slow")
    assert fast == slow
    for day in ("d1", "d2"):
        assert fast[day]["run_summary"] and fast[day]["broker_timeline"]
