"""The sample's report (the bundled sample replayed by the real job): its figures equal the
tables, and it renders in a real headless browser with no network request and no error."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from jobs.report import write_report

Browser = Callable[..., subprocess.CompletedProcess[str]]
PAGE_SCHEMES = ("file:", "data:", "about:", "chrome:", "blob:")


@pytest.fixture(scope="module")
def page(sample_tables: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(sample_tables, tmp_path_factory.mktemp("page") / "report.html")


def windows(tables: Path) -> pd.DataFrame:
    part = ds.partitioning(pa.schema([("run_id", pa.string())]), flavor="hive")
    table = ds.dataset(str(tables / "partition_windows"), partitioning=part).to_table()
    return table.to_pandas()


def test_offline_peak_equals_partition_windows(sample_tables: Path, page: Path) -> None:
    offline = windows(sample_tables).query("kind == 'offline'")
    # After each event, the partitions whose offline window opened at or before it and had
    # not yet closed.
    peak = max(
        int(((offline.start_seq <= s) & (offline.end_seq.isna() | (offline.end_seq > s))).sum())
        for s in offline.start_seq.unique()
    )
    html = page.read_text(encoding="utf-8")
    assert peak > 0
    assert f'data-peak-offline="{peak}"' in html
    assert f"Most partitions offline at once: <strong>{peak}</strong>" in html


def test_worst_topics_equal_pandas(sample_tables: Path, page: Path) -> None:
    offline = windows(sample_tables).query("kind == 'offline'")
    assert offline.end_seq.notna().all()  # the sample ends with every partition online
    by_topic = (offline.groupby("topic")["seconds"].sum().reset_index()
                .sort_values(["seconds", "topic"], ascending=[False, True]).head(20))
    want = [(t, f"{s:.3f}") for t, s in zip(by_topic.topic, by_topic.seconds, strict=True)]
    html = page.read_text(encoding="utf-8")
    table = re.search(r'<table id="worst-topics">.*?</table>', html, re.DOTALL)
    assert table
    got = re.findall(r'data-topic="([^"]+)" data-seconds="([^"]+)"', table.group(0))
    assert got == want


def test_offline_at_end_equals_run_summary(sample_tables: Path, page: Path) -> None:
    part = ds.partitioning(pa.schema([("run_id", pa.string())]), flavor="hive")
    summary = ds.dataset(str(sample_tables / "run_summary"), partitioning=part).to_table()
    states = [dict(m) for m in summary.column("partitions_by_state").to_pylist()]
    offline = sum(int(m.get("OfflinePartition", 0)) for m in states)
    still_open = windows(sample_tables).query("kind == 'offline' and end_seq.isna()")
    html = page.read_text(encoding="utf-8")
    assert f'id="offline-at-end" class="card-end card-{"alert" if offline else "ok"}" ' \
           f'data-partitions="{offline}"' in html
    assert offline == len(still_open)


def _page_requests(net_log: Path) -> list[str]:
    """URLs the page itself asked for (the browser's own background requests carry the
    initiator `not an origin` and are not the page's)."""
    log = json.loads(net_log.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [e["params"]["url"] for e in log["events"]
            if e["type"] == start and "url" in e.get("params", {})
            and e["params"].get("initiator") != "not an origin"]


def test_renders_in_chromium(page: Path, tmp_path: Path, chromium: Browser) -> None:
    net_log = tmp_path / "net.json"
    dumped = chromium(tmp_path / "profile", f"--log-net-log={net_log}",
                      "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri())
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    assert "CONSOLE" not in dumped.stderr, [x for x in dumped.stderr.splitlines() if "CONSOLE" in x]
    figures = re.findall(r'<figure id="(fig-[a-z]+)" class="plot"[^>]*>(.*?)</figure>',
                         dumped.stdout, re.DOTALL)
    assert [name for name, _ in figures] == ["fig-windows", "fig-lanes", "fig-requests"]
    for name, body in figures:
        assert "<svg" in body and re.search(r"<path[^>]* d=\"M", body), name
    for title in ("Offline and under-min-ISR partitions", "Under-replicated partitions"):
        assert f">{title}</text>" in figures[0][1], title
    assert re.search(r'<g id="controller-lane-0-broker-\d+">', figures[1][1])
    requests = _page_requests(net_log)
    assert all(url.startswith(PAGE_SCHEMES) for url in requests), requests


def test_screenshot(page: Path, tmp_path: Path, chromium: Browser) -> None:
    shot = tmp_path / "report.png"
    done = chromium(tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,2000",
                    page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    # A blank page compresses to a few kilobytes; the figures and tables make it far larger.
    assert shot.stat().st_size > 50_000


def test_incidents_changes_card_and_controller_lane_in_chromium(
        sample_tables: Path, page: Path, tmp_path: Path, chromium: Browser) -> None:
    dumped = chromium(tmp_path / "profile", "--dump-dom", page.as_uri())
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = dumped.stdout
    part = ds.partitioning(pa.schema([("run_id", pa.string())]), flavor="hive")
    # The card, as the browser built it.
    assert re.search(r'<div id="offline-at-end" class="card-end card-(ok|alert)" '
                     r'data-partitions="\d+"', dom)
    # One row per incident, in time order, with its partition-seconds.
    found = ds.dataset(str(sample_tables / "incidents"), partitioning=part).to_table()
    want = sorted(zip(found.column("incident_id").to_pylist(),
                      found.column("offline_partition_seconds").to_pylist(), strict=True))
    assert 0 < len(want) <= 20
    table = re.search(r'<table id="incidents-table".*?</table>', dom, re.DOTALL)
    assert table
    rows = re.findall(r'data-incident="(\d+)"[^>]*data-offline-seconds="([^"]+)"', table.group(0))
    assert [(int(i), s) for i, s in rows] == [(i, f"{s:.3f}") for i, s in want]
    # One row per change, with its count.
    changes = ds.dataset(str(sample_tables / "changes"), partitioning=part).to_table()
    counts = dict(zip(changes.column("change").to_pylist(), changes.column("count").to_pylist(),
                      strict=True))
    table = re.search(r'<table id="changes-table".*?</table>', dom, re.DOTALL)
    assert table
    shown = re.findall(r'data-change="([a-z_]+)" data-cluster="[^"]*" data-count="(\d+)"',
                       table.group(0))
    assert {c: int(n) for c, n in shown} == counts
    assert {"topic_created", "leader_moved", "controller_failover"} <= set(counts)
    # The controller lane: one colour per controller, each term labelled with its epoch.
    elected = ds.dataset(str(sample_tables / "controller_timeline"),
                         partitioning=part).to_table().to_pylist()
    drawn = re.findall(r'<g id="controller-lane-0-broker-(\d+)">', dom)
    assert sorted(map(int, drawn)) == sorted({e["controller_id"] for e in elected})
    for e in elected:
        assert f">broker {e['controller_id']}, epoch {e['controller_epoch']}</text>" in dom
