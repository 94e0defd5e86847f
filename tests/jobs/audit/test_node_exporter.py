"""Two clusters' textfiles in one node_exporter directory, scraped from a real
node_exporter (Debian's prometheus-node-exporter, `make node-exporter` installs it): both
verdicts are served, neither hides the other, and the collector reports no error.

node_exporter's textfile collector (`collector/textfile.go`, 1.5.0) merges the files'
metric families by name; a family must have one help text and type in every file, and
two files with the same series (name and labels) are an error of the whole scrape. The
`cluster` label on every series of `jobs/audit/publish.py` keeps the jobs apart."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from jobs.audit import publish as P
from jobs.audit.run import FAIL, PASS, AuditResult, CheckCount

BINARY = "prometheus-node-exporter"
AT = datetime(2026, 11, 22, 2, 30, tzinfo=UTC)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape(url: str, process: subprocess.Popen[bytes]) -> str:
    """/metrics once node_exporter listens (it starts in well under a second; the loop
    only waits for it, it asserts nothing about time)."""
    for _ in range(200):
        assert process.poll() is None, "node_exporter exited"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return str(response.read().decode("utf-8"))
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"node_exporter never answered on {url}")


@pytest.fixture
def textfile_dir(tmp_path: Path) -> Path:
    """The textfiles of two nightly jobs, east (FAIL) and west (PASS), as they write them."""
    east = AuditResult("20261122", FAIL, 1, "critical",
                       [CheckCount("critical", "unavailable_partition", 2)])
    west = AuditResult("20261122", PASS, 0, "critical")
    for name, result, figures in (
            ("east", east, P.ClusterFigures(rows_read=40, offline_partitions=2)),
            ("west", west, P.ClusterFigures(rows_read=12))):
        P.publish(result, {name: figures}, verdict_json=None,
                  prometheus=str(tmp_path / f"kafka_replay_{name}.prom"), finished_at=AT)
    return tmp_path


@pytest.fixture
def node_exporter(textfile_dir: Path) -> Iterator[str]:
    binary = shutil.which(BINARY)
    assert binary is not None, f"{BINARY} is not installed: run `make node-exporter`"
    port = free_port()
    process = subprocess.Popen(
        [binary, "--collector.disable-defaults", "--collector.textfile",
         f"--collector.textfile.directory={textfile_dir}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield scrape(f"http://127.0.0.1:{port}/metrics", process)
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_two_clusters_textfiles_in_one_directory_are_both_scraped(node_exporter: str) -> None:
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(node_exporter):
        for s in family.samples:
            found.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    assert found["node_textfile_scrape_error"] == {(): 0.0}
    assert found["kafka_replay_verdict"] == {(("cluster", "east"),): 1.0,
                                             (("cluster", "west"),): 0.0}
    assert found["kafka_replay_run_info"] == {
        (("cluster", "east"), ("run_id", "20261122")): 1.0,
        (("cluster", "west"), ("run_id", "20261122")): 1.0}
    assert found["kafka_replay_last_success_timestamp_seconds"] == {
        (("cluster", "east"),): AT.timestamp(), (("cluster", "west"),): AT.timestamp()}
    assert found["kafka_replay_check_rows"][
        (("check", "unavailable_partition"), ("cluster", "east"), ("severity", "critical"))] \
        == 2.0
    assert found["kafka_replay_check_rows"][
        (("check", "unavailable_partition"), ("cluster", "west"), ("severity", "critical"))] \
        == 0.0
    assert found["kafka_replay_offline_partitions"] == {(("cluster", "east"),): 2.0,
                                                        (("cluster", "west"),): 0.0}
    assert found["kafka_replay_rows_read"] == {(("cluster", "east"),): 40.0,
                                               (("cluster", "west"),): 12.0}
    # Both files were read (the collector's own series, one per file).
    mtimes = found["node_textfile_mtime_seconds"]
    assert {dict(labels)["file"].rsplit("/", 1)[-1] for labels in mtimes} == {
        "kafka_replay_east.prom", "kafka_replay_west.prom"}
