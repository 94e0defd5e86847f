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

import pyarrow.dataset as ds
import pytest

from schemas import event_types as ET
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


def local_cluster_block(url: str, tmp: Path, events: Path, out: Path) -> str:
    """The README's block with only what names the operator's machines replaced: the master,
    the `hdfs://` paths, `dist/` (others may be using the repository's) and `.venv/bin/` (the
    test's interpreter's venv); and executors sized for the 1.5 GB loopback workers."""
    block = readme_cluster_block()
    block = _replace(block, r"spark://HOST:7077", url + SIZING)
    block = _replace(block, r"--events hdfs://\S+", f"--events {events}")
    block = _replace(block, r"--out hdfs://\S+", f"--out {out}")
    block = _replace(block, r"--checkpoint hdfs://\S+", f"--checkpoint {tmp / 'chk'}")
    block = _replace(block, r"(?m)^make package\b", f"make package DIST={tmp / 'dist'}")
    block = _replace(block, r"\bdist/replay\.zip\b(?!:)", str(tmp / "dist" / "replay.zip"))
    return _replace(block, r"(?<![\w/])\.venv/bin/", f"{BIN}/")


# conf/spark/cluster.conf asks 4 GB executors; the loopback workers have 1.5 GB each.
SIZING = (" --driver-memory 1g --conf spark.executor.memory=1g --conf spark.executor.cores=1"
          " --conf spark.sql.shuffle.partitions=4")


def test_spark_submit_on_standalone_cluster(cluster: str, tmp_path: Path) -> None:
    events = tmp_path / "events"
    write_log(events, [
        failover(1, 1, [1, 2, 3]),
        created(2, "orders", 0, [1, 2]),
        created(2, "orders", 1, [2, 3]),
        created(3, "solo", 0, [3]),
        ev(4, ET.BROKER_FAILURE, broker_id=3),
        ev(5, "Bogus", topic="x"),
    ])
    out = tmp_path / "out"
    block = local_cluster_block(cluster, tmp_path, events, out)
    # As on a fresh clone: nothing names the executors' Python, the job picks its own.
    env = {k: v for k, v in _env().items() if k != "PYSPARK_DRIVER_PYTHON"}  # the README's
    done = subprocess.run(["bash", "-ec", block], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "rows read 6 = applied 5 + duplicate 0 + quarantined 1 + late 0" in done.stdout
    # spark-submit joins the Python driver's stderr to its stdout.
    assert f"[replay] spark.pyspark.python={sys.executable}:" in done.stdout + done.stderr
    with zipfile.ZipFile(tmp_path / "dist" / "replay.zip") as z:
        names = z.namelist()
    assert "jobs/submit.py" in names and "statemachine/__init__.py" in names
    assert not [n for n in names if "__pycache__" in n]

    states = ds.dataset(out / "partition_states", partitioning="hive").to_table().to_pylist()
    got = {(r["topic"], r["partition"]): (r["state"], r["leader"], r["leader_epoch"], r["isr"])
           for r in states}
    assert got == {
        ("orders", 0): ("OnlinePartition", 1, 0, [1, 2]),
        # Broker 3 failed: leadership stays with 2, the ISR shrinks, the epoch is bumped.
        ("orders", 1): ("OnlinePartition", 2, 1, [2]),
        # RF=1 on the failed broker: offline, no leader, epoch bumped.
        ("solo", 0): ("OfflinePartition", -1, 1, [3]),
    }
    quarantine = ds.dataset(out / "quarantine", partitioning="hive").to_table().to_pylist()
    assert [(r["seq"], r["reason"]) for r in quarantine] == [(5, "unknown event_type Bogus")]
