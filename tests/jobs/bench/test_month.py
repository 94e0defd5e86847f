"""The pieces of `make bench-month`: the log cut into nights never splits a seq and loses
no row; the process-tree meter counts the bytes of a process its command left behind; the
bytes a night wrote are the files it created or rewrote; BENCHMARKS.md gets the section."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from jobs.bench.core import REPO_ROOT
from jobs.bench.month import component, cut_log, cut_points, inventory, written
from jobs.bench.month_report import month_table, shown_nights


def test_cuts_fall_between_seqs() -> None:
    seqs = pa.array([1, 1, 1, 2, 3, 3, 4, 5, 5, 5, 6, 7])
    starts = cut_points(seqs, 4)
    assert starts[0] == 0 and starts == sorted(set(starts))
    values = seqs.to_pylist()
    assert all(values[s] != values[s - 1] for s in starts[1:])
    assert cut_points(pa.array([1] * 5), 3) == [0]  # one seq: one night


def test_the_nights_hold_every_row_once(tmp_path: Path) -> None:
    events = tmp_path / "events"
    events.mkdir()
    pq.write_table(pa.table({"seq": pa.array([5, 1, 3, 3, 2, 4, 4, 6], pa.int64())}),
                   events / "part-0.parquet")
    nights = cut_log(events, tmp_path / "work", 3)
    seqs = [pq.read_table(path).column("seq").to_pylist() for path, _ in nights]
    assert [n for _, n in nights] == [len(s) for s in seqs]
    assert sorted(sum(seqs, [])) == [1, 2, 3, 3, 4, 4, 5, 6]
    assert all(max(a) < min(b) for a, b in zip(seqs, seqs[1:], strict=False))


def test_the_meter_counts_what_an_orphaned_grandchild_writes(tmp_path: Path) -> None:
    target = tmp_path / "orphan.bin"
    # The child starts a grandchild and exits at once: the grandchild writes 3 MB after.
    script = ("import os, subprocess, sys; subprocess.Popen([sys.executable, '-c', "
              f"\"import time; time.sleep(0.5); open({str(target)!r}, 'wb')"
              ".write(bytes(3_000_000))\"]); os._exit(0)")
    result = tmp_path / "result.json"
    # In its own process: the meter makes itself the subreaper of whatever runs below it.
    done = subprocess.run([sys.executable, "-m", "jobs.bench.proc_io", str(result), "--",
                           sys.executable, "-c", script], cwd=REPO_ROOT, check=False)
    assert done.returncode == 0
    figures = json.loads(result.read_text())
    assert target.stat().st_size == 3_000_000  # it ran to the end, after its parent
    assert figures["subreaper"] and figures["stragglers"] == 0
    assert figures["io"]["wchar"] >= 3_000_000
    assert figures["cpu_s"] > 0


def test_bytes_written_are_the_files_a_night_created_or_rewrote(tmp_path: Path) -> None:
    (tmp_path / "query" / "state").mkdir(parents=True)
    (tmp_path / "history.json").write_text("x" * 10)
    (tmp_path / "query" / "state" / "1.zip").write_bytes(bytes(100))
    before = inventory(tmp_path)
    time.sleep(0.01)
    (tmp_path / "history.json").write_text("y" * 12)
    (tmp_path / "query" / "state" / "2.zip").write_bytes(bytes(50))
    assert written(before, inventory(tmp_path)) == {"history.json": 12, "query/state": 50}
    assert component("generation-r9/query/sources/0/1") == "query/sources"


def test_the_section_shows_the_ratios_and_some_nights() -> None:
    night = {"rows": 10, "seconds": 2.0, "cpu_s": 3.0, "rchar": 5_000_000, "wchar": 1_000_000,
             "files_written": 200_000, "state_runs": 2, "load_avg_1m": {"end": 1.5}}
    lines = month_table({"tiny": {
        "nights": 12, "per_night": [night] * 12, "load_avg_1m": {"start": 1.0, "end": 2.0},
        "last_over_second": {"seconds": 1.05, "cpu_s": 0.98, "rchar": 1.0, "wchar": 1.0,
                             "files_written": 1.1},
        "state_tables_equal_full_replay": {"partition_states": True}}})
    text = "\n".join(lines)
    assert "## A month of nights" in text and "wall 1.05" in text and "full replay's: True" in text
    assert shown_nights(12) == [1, 2, 5, 10, 12]
    assert sum(line.startswith("| 1") for line in lines) == 3  # nights 1, 10 and 12
