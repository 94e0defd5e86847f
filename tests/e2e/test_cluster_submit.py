"""The job on a real standalone Spark cluster: a master and two workers started from the
installed pyspark on loopback, the code shipped with `spark-submit --py-files dist/replay.zip`.

The test runs the README's "On a cluster" block itself (`make package`, then its
spark-submit line), replacing only what names the operator's machines, so the README and the
test cannot drift. The executors import `jobs`, `statemachine` and `schemas` only from the
zip (their working directory is the worker's), so this is also the test of `make package`.
Nothing sets `PYSPARK_PYTHON`: the job must point the executors at its own interpreter.
Marked `cluster`; `make cluster-test` runs it.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest

from jobs.bench.same_tables import compare
from jobs.replay.job import main
from jobs.store.latest_state_arrow import arrow_state
from schemas import event_types as ET
from schemas.tables import TABLES
from tests.helpers import ROOT
from tests.helpers.event_log import created, ev, failover, write_log

BIN = Path(sys.executable).parent
pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    """The test's environment minus any PYSPARK_PYTHON (a fresh clone has none), on loopback;
    PYSPARK_DRIVER_PYTHON lets spark-class find the venv's Spark."""
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}
    env.update(SPARK_LOCAL_IP="127.0.0.1", PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_NO_DAEMONIZE="1")
    return env


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    logs = tmp_path_factory.mktemp("cluster-logs")
    port, ui = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []

    def start(name: str, *args: str) -> None:
        log = (logs / f"{name}.log").open("wb")
        procs.append(subprocess.Popen([str(BIN / "spark-class"), *args], stdout=log,
                                      stderr=subprocess.STDOUT, env=_env(), cwd=logs))

    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
              "--port", str(port), "--webui-port", str(ui))
        for i in (1, 2):
            work = logs / f"work{i}"
            start(f"worker{i}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                  "--cores", "1", "--memory", "1536m", "--webui-port", str(_free_port()),
                  "--work-dir", str(work), url)
        deadline = time.time() + 90
        alive = 0
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
                    state = json.load(r)
                alive = sum(w.get("state") == "ALIVE" for w in state.get("workers", []))
            except OSError:
                alive = 0
            if alive == 2:
                break
            time.sleep(1)
        assert alive == 2, f"standalone cluster did not come up; logs in {logs}"
        yield url
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def readme_cluster_block() -> str:
    """The first `bash` block of the README's "On a cluster" section, as written."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## On a cluster\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert match is not None, "README's On a cluster section has no bash block"
    return match.group(1)


def _replace(text: str, pattern: str, replacement: str) -> str:
    """`text` with `pattern` (a regex) replaced; the README must still have it."""
    new, count = re.subn(pattern, lambda _m: replacement, text)
    assert count, f"README's On a cluster block no longer has {pattern!r}"
    return new


def local_cluster_block(url: str, tmp: Path, events: Path, out: Path, run_id: str) -> str:
    """The README's block with only what names the operator's machines replaced: the master,
    the `hdfs://` paths, `dist/` (others may be using the repository's), `.venv/bin/` (the
    test's interpreter's venv) and the date as the run id; and executors sized for the
    1.5 GB loopback workers."""
    block = readme_cluster_block()
    block = _replace(block, r"spark://HOST:7077", url + SIZING)
    block = _replace(block, r"--events hdfs://\S+", f"--events {events}")
    block = _replace(block, r"--out hdfs://\S+", f"--out {out}")
    block = _replace(block, r"--checkpoint hdfs://\S+", f"--checkpoint {tmp / 'chk'}")
    block = _replace(block, r"--run-id \"\$\(date -u \+%Y%m%d\)\"", f"--run-id {run_id}")
    block = _replace(block, r"(?m)^make package\b", f"make package DIST={tmp / 'dist'}")
    block = _replace(block, r"\bdist/replay\.zip\b(?!:)", str(tmp / "dist" / "replay.zip"))
    return _replace(block, r"(?<![\w/])\.venv/bin/", f"{BIN}/")


# conf/spark/cluster.conf asks 4 GB executors; the loopback workers have 1.5 GB each.
SIZING = (" --driver-memory 1g --conf spark.executor.memory=1g --conf spark.executor.cores=1"
          " --conf spark.sql.shuffle.partitions=4")


# Two clusters over two nights. east: broker 3 fails in night 1 (solo-0 offline until it
# comes back in night 2; an incident open across the nights), a reassignment completes in
# night 2, a row is quarantined. west: a topic deleted, a controlled shutdown.
NIGHT1 = [
    failover(1, 1, [1, 2, 3], cluster="east"),
    created(2, "orders", 0, [1, 2], cluster="east"),
    created(2, "orders", 1, [2, 3], cluster="east"),
    created(3, "solo", 0, [3], cluster="east"),
    ev(4, ET.BROKER_FAILURE, broker_id=3, cluster="east"),
    ev(5, "Bogus", topic="x", cluster="east"),
    ev(6, ET.REASSIGNMENT_REQUESTED, topic="orders", partition=0, replicas=[1, 3],
       cluster="east"),
    failover(1, 5, [5, 6], cluster="west"),
    created(2, "gone", 0, [5, 6], cluster="west"),
    created(3, "kept", 0, [6, 5], cluster="west"),
]
NIGHT2 = [
    ev(10, ET.BROKER_STARTUP, broker_id=3, cluster="east"),
    # The reassignment's epoch: 1 when requested (`updateLeaderEpochAndSendRequest`), 2 when
    # broker 3's startup resumes it (`KafkaController.onBrokerStartup` ->
    # `maybeResumeReassignments`, 3.7.1); an AlterPartition of another epoch is rejected.
    ev(11, ET.ISR_CHANGED, topic="orders", partition=0, isr=[1, 2, 3], leader_epoch=2,
       cluster="east"),
    ev(10, ET.TOPIC_DELETION_REQUESTED, topic="gone", cluster="west"),
    ev(11, ET.STOP_REPLICA_RESPONSE, topic="gone", partition=0, broker_id=5, cluster="west"),
    ev(11, ET.STOP_REPLICA_RESPONSE, topic="gone", partition=0, broker_id=6, cluster="west"),
    ev(12, ET.CONTROLLED_SHUTDOWN, broker_id=6, cluster="west"),
]


def submit(block: str) -> subprocess.CompletedProcess[str]:
    # As on a fresh clone: nothing names the executors' Python, the job picks its own.
    env = {k: v for k, v in _env().items() if k != "PYSPARK_DRIVER_PYTHON"}  # the README's
    return subprocess.run(["bash", "-ec", block], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_spark_submit_on_standalone_cluster_equals_the_local_run(
    cluster: str, spark: Any, tmp_path: Path
) -> None:
    """Two nights of a log of two clusters, spark-submitted to the standalone cluster on one
    checkpoint directory, as the README writes it; the same nights replayed locally: every
    table of both nights is the same, row for row."""
    events, out = tmp_path / "events", tmp_path / "out"
    local = tmp_path / "local"
    for n, night in ((1, NIGHT1), (2, NIGHT2)):
        write_log(events, night, f"night-{n}")
        done = submit(local_cluster_block(cluster, tmp_path, events, out, f"n{n}"))
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert main(["--events", str(events), "--out", str(local / "out"), "--run-id", f"n{n}",
                     "--checkpoint", str(local / "chk")]) == 0
        if n == 1:
            assert ("cluster east: rows read 7 = applied 6 + duplicate 0 + quarantined 1 "
                    "+ late 0") in done.stdout
            # spark-submit joins the Python driver's stderr to its stdout.
            assert f"[replay] spark.pyspark.python={sys.executable}:" in (
                done.stdout + done.stderr)
    with zipfile.ZipFile(tmp_path / "dist" / "replay.zip") as z:
        names = z.namelist()
    assert "jobs/submit.py" in names and "statemachine/__init__.py" in names
    assert not [n for n in names if "__pycache__" in n]

    for run_id in ("n1", "n2"):
        compared = compare(local / "out", out, run_id)
        assert {table for table, *_ in compared} == set(TABLES)
        assert [t for t, _, _, equal in compared if not equal] == [], run_id
    states = {(r["cluster"], r["topic"], r["partition"]): (r["state"], r["leader"], r["isr"])
              for r in arrow_state(out, "partition_states", "n2").to_pylist()}
    assert states == {
        # Broker 3 is back and in sync: the reassignment to [1, 3] has completed.
        ("east", "orders", 0): ("OnlinePartition", 1, [1, 3]),
        ("east", "orders", 1): ("OnlinePartition", 2, [2]),
        ("east", "solo", 0): ("OnlinePartition", 3, [3]),  # offline from seq 4 to 10
        ("west", "gone", 0): ("NonExistentPartition", None, None),
        ("west", "kept", 0): ("OnlinePartition", 5, [5]),  # 6 shut down: 5 leads
    }
    incidents = ds.dataset(out / "incidents", partitioning="hive").to_table().to_pylist()
    assert [(r["cluster"], str(r["run_id"]), r["incident_id"], r["end_seq"])
            for r in sorted(incidents, key=lambda r: str(r["run_id"]))] == [
        ("east", "n1", 4, None), ("east", "n2", 4, 10)]
