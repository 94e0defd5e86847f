"""The job on a real standalone Spark cluster: a master and two workers started from the
installed pyspark on loopback, the code shipped with `spark-submit --py-files dist/replay.zip`.

The executors import `jobs`, `statemachine` and `schemas` only from the zip (their working
directory is the worker's), so this is the test of `make package`. Marked `cluster`;
`make cluster-test` runs it.
"""

from __future__ import annotations

import json
import os
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
    env = dict(os.environ)
    env.update(SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_NO_DAEMONIZE="1")
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


def _package(target: Path) -> Path:
    """What `make package` builds (jobs, statemachine, schemas; no caches), into `target`:
    the test does not touch dist/, which other runs may be using."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for package in ("jobs", "statemachine", "schemas"):
            for path in sorted((ROOT / package).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    z.write(path, path.relative_to(ROOT).as_posix())
    return target


def test_spark_submit_on_standalone_cluster(cluster: str, tmp_path: Path) -> None:
    zipped = _package(tmp_path / "replay.zip")
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
    cmd = [
        str(BIN / "spark-submit"), "--master", cluster,
        "--properties-file", "conf/spark/cluster.conf",
        "--driver-memory", "1g",
        "--conf", "spark.executor.memory=1g", "--conf", "spark.executor.cores=1",
        "--conf", "spark.sql.shuffle.partitions=4",
        "--conf", f"spark.pyspark.python={sys.executable}",
        "--py-files", str(zipped),
        "jobs/submit.py", "replay",
        "--events", str(events), "--out", str(out), "--checkpoint", str(tmp_path / "chk"),
        "--run-id", "c1", "--buckets", "8",
    ]
    done = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "rows read 6 = applied 5 + duplicate 0 + quarantined 1 + late 0" in done.stdout

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
