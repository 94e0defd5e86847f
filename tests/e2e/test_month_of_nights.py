"""A month of small nights on one checkpoint: the `tiny` simulated log cut into six nights
by seq, replayed night after night with `state_refresh_runs = 2`, so the state's chain is
compacted (each night rewrites half of the buckets whole) four times inside the month, and
one night is killed after saving its history and finished by the same command.

After every night: the state after it is one read (`jobs.store.latest_state_arrow`) over at
most two runs, and the roll-ups' carry equals the one rebuilt from every run's tables. After
the last: its state tables, timelines, and every incident's latest row equal a full replay
of the whole log, row for row."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from jobs.common.kill_points import ENV
from jobs.engine.rollup_carry import carry_of_runs, load_carry
from jobs.replay.job import main
from jobs.sim.cli import main as simulate
from jobs.store.latest_state_arrow import arrow_state
from schemas.arrow import arrow_schema
from schemas.events import EVENT_SCHEMA
from schemas.tables import STATE_TABLES, TIMELINE_TABLES
from tests.helpers import ROOT

pytestmark = pytest.mark.slow
NIGHTS, CYCLE, KILLED = 6, 2, 4


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> list[pa.Table]:
    """The `tiny` simulated log cut into NIGHTS nights by seq (no seq in two nights)."""
    base = tmp_path_factory.mktemp("sim")
    assert simulate(["--out", str(base), "--preset", "tiny", "--quiet"]) == 0
    log = ds.dataset(str(base), format="parquet").to_table().cast(arrow_schema(EVENT_SCHEMA))
    seq = log.column("seq")
    top = pc.max(seq).as_py() + 1
    cuts = [top * i // NIGHTS for i in range(NIGHTS + 1)]
    return [log.filter(pc.and_(pc.greater_equal(seq, a), pc.less(seq, b)))
            for a, b in zip(cuts, cuts[1:], strict=False)]


def args(base: Path, run_id: str, *extra: str) -> list[str]:
    return ["--events", str(base / "events"), "--out", str(base / "out"), "--run-id", run_id,
            "--buckets", "4", "--config", str(base / "replay.toml"), *extra]


def killed(base: Path, run_id: str, point: str) -> int:
    """The job in its own process group, killed with it at `point`."""
    env = {**os.environ, ENV: point, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-m", "jobs.replay",
                           *args(base, run_id, "--checkpoint", str(base / "chk"))],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          start_new_session=True)
    return done.returncode


def rows(table: pa.Table) -> list[str]:
    """The rows as comparable text, whichever run wrote them."""
    names = [n for n in table.schema.names if n != "run_id"]
    return sorted(map(repr, table.select(names).to_pylist()))


def run_rows(out: Path, table: str, run_id: str) -> pa.Table:
    return ds.dataset(str(out / table / f"run_id={run_id}"), format="parquet").to_table()


def summary(out: Path, run_id: str) -> dict[str, Any]:
    [row] = run_rows(out, "run_summary", run_id).to_pylist()
    return row


def carried(carry: Any) -> tuple[Any, ...]:
    return (sorted(map(repr, carry.windows)), sorted(map(repr, carry.elections)),
            sorted(carry.reassigning), sorted(map(repr, carry.leaders.to_pylist())))


def latest_incidents(out: Path, run_ids: list[str]) -> dict[tuple[str, int], str]:
    """Each incident's row of the latest run that lists it."""
    found: dict[tuple[str, int], str] = {}
    for run_id in run_ids:
        for r in run_rows(out, "incidents", run_id).to_pylist():
            found[(r["cluster"], r["incident_id"])] = repr(r)
    return found


def test_a_month_of_nights_with_compaction_equals_a_full_replay(
    spark: Any, nights: list[pa.Table], tmp_path: Path
) -> None:
    full, month = tmp_path / "full", tmp_path / "month"
    for base in (full, month):
        (base / "events").mkdir(parents=True)
        (base / "replay.toml").write_text(f"[replay]\nstate_refresh_runs = {CYCLE}\n")
    for n, night in enumerate(nights, start=1):
        pq.write_table(night, full / "events" / f"night-{n}.parquet")
    last = f"n{NIGHTS}"
    assert main(args(full, last)) == 0

    ran: list[str] = []
    for n, night in enumerate(nights, start=1):
        run_id = f"n{n}"
        pq.write_table(night, month / "events" / f"night-{n}.parquet")
        if n == KILLED:  # killed once its history is saved: the same command finishes it
            assert killed(month, run_id, "history_saved") == -signal.SIGKILL
            assert not (month / "chk" / "runs" / f"{run_id}.json").exists()
        assert main(args(month, run_id, "--checkpoint", str(month / "chk"))) == 0
        ran.append(run_id)
        chain = summary(month / "out", run_id)["state_runs"]
        assert chain == ran[-CYCLE:]  # the state after the night is in its last CYCLE runs
        carry = load_carry(str(month / "chk"), run_id)
        assert carry is not None
        assert carried(carry) == carried(carry_of_runs(str(month / "out"), ran))
        assert sorted(os.listdir(month / "chk" / "rollup")) == [run_id]  # the older removed

    assert "n1" not in chain  # the first night's rows are no longer read
    for table in STATE_TABLES:
        got = arrow_state(month / "out", table, last)
        assert got.num_rows > 0
        assert rows(got) == rows(arrow_state(full / "out", table, last)), table
    for table in TIMELINE_TABLES:
        assert rows(run_rows(month / "out", table, last)) == rows(
            run_rows(full / "out", table, last)), table
    nightly = latest_incidents(month / "out", ran)
    assert nightly and nightly == latest_incidents(full / "out", [last])
