"""Exit codes as a scheduler sees them, from a real process: an executor that cannot run
the replay is an internal error (3, one line), not a finding (1) or bad input (2); a
SIGTERM leaves nothing behind outside --out."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.helpers.event_log import created, failover, write_log

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
LOG = [failover(1, 1, [1, 2]), created(2, "orders", 0, [1, 2])]


def command(events: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "jobs.replay", "--events", str(events), "--out", str(out),
            "--run-id", "r1", "--buckets", "2"]


def environment(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1", **extra}


def test_an_executor_without_pyarrow_is_an_internal_error(tmp_path: Path) -> None:
    # The executors' interpreter finds a `pyarrow` that cannot be imported, as on a
    # cluster whose system python3 lacks it.
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "pyarrow.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pyarrow'\", name='pyarrow')\n")
    worker = tmp_path / "python-without-pyarrow"
    worker.write_text(f"#!/bin/sh\nPYTHONPATH={shadow}:$PYTHONPATH exec {sys.executable} "
                      "\"$@\"\n")
    worker.chmod(0o755)
    events, out = tmp_path / "events", tmp_path / "out"
    write_log(events, LOG)
    done = subprocess.run(command(events, out), cwd=ROOT, capture_output=True, text=True,
                          env=environment(PYSPARK_PYTHON=str(worker)), timeout=300)
    ours = [line for line in done.stderr.splitlines() if line.startswith("[replay]")]
    assert done.returncode == 3, done.stderr[-2000:]
    assert len(ours) == 1 and "INTERNAL ERROR" in ours[0] and "pyarrow" in ours[0]
    assert "Physical Plan" not in done.stderr and "Traceback" not in done.stderr
    assert list((out / "_errors").iterdir())


def test_sigterm_leaves_nothing_outside_out(tmp_path: Path) -> None:
    events, out = tmp_path / "events", tmp_path / "out"
    write_log(events, LOG)
    before = set(Path(tempfile.gettempdir()).glob("replay-checkpoint-*"))
    proc = subprocess.Popen(command(events, out), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=environment())
    assert proc.stdout is not None
    for line in proc.stdout:  # the temporary checkpoint exists once the timeline runs
        if "schema check" in line:
            break
    time.sleep(3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
    assert "stopped by SIGTERM" in err
    assert not (out / "_scratch").exists()
    assert set(Path(tempfile.gettempdir()).glob("replay-checkpoint-*")) == before


def test_a_whatif_stopped_by_sigterm_leaves_nothing_outside_out(tmp_path: Path) -> None:
    events, out = tmp_path / "events", tmp_path / "out"
    sim = subprocess.run([sys.executable, "-m", "jobs.sim", "--out", str(events), "--preset",
                          "sample"], cwd=ROOT, env=environment(), capture_output=True, timeout=120)
    assert sim.returncode == 0
    before = set(Path(tempfile.gettempdir()).glob("whatif-checkpoint-*"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "jobs.whatif", "--events", str(events), "--out", str(out),
         "--scenario", str(ROOT / "conf" / "scenarios" / "sample-sweep.toml")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment())
    assert proc.stdout is not None
    for line in proc.stdout:
        if "variant(s) to replay" in line:
            break
    time.sleep(8)  # into the replay of the variants: the scratch checkpoint exists
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
    assert not (out / "_scratch").exists()
    assert set(Path(tempfile.gettempdir()).glob("whatif-checkpoint-*")) == before
