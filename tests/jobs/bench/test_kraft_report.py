"""BENCHMARKS.md's KRaft section (`jobs.bench.kraft_report`): one row per history size,
smallest first, the job's cells empty when it did not run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jobs.bench.job import record_section
from jobs.bench.kraft_report import kraft_table


def _run(records: int, spark: dict[str, Any]) -> dict[str, Any]:
    return {"measured_at": "2026-11-29 04:00", "load_avg_1m": {"start": 1.0, "end": 2.0},
            "fold": {"records": records, "partitions": 10, "process_s": 3.5, "cpu_s": 2.5,
                     "stages_s": {"read": 0.5, "fold": 1.0}},
            "spark": spark}


def test_one_row_per_size_smallest_first() -> None:
    spark = {"rc": 0, "spark_seconds": 40.0, "cpu_s": {"total": 55.0},
             "spark_stages_s": {"replay": 9.0}, "memory_mb": {"driver_python": 300,
                                                              "driver_jvm": 900}}
    bench = {**_run(2000, spark), "spark_split": {"process_s": 90.0, "cpu_s": 50.5}}
    lines = kraft_table({"bench": bench, "small": _run(100, {})})
    rows = [line for line in lines if line.startswith("| small") or line.startswith("| bench")]
    assert [r.split(" | ")[0] for r in rows] == ["| small", "| bench"]
    assert "| 40 | 55 | replay 9 | 300 / 900 | 90 / 50.5 |" in rows[1]
    assert "| – | – | – | – | – |" in rows[0]
    assert kraft_table({}) == []


def test_the_section_is_kept_in_bench_json_and_shown(tmp_path: Path) -> None:
    json_path, markdown = tmp_path / "bench.json", tmp_path / "BENCHMARKS.md"
    record_section("kraft", "small", _run(100, {}), json_path, markdown)
    record_section("kraft", "bench", _run(2000, {}), json_path, markdown)
    data = json.loads(json_path.read_text())
    assert sorted(data["kraft"]) == ["bench", "small"]
    assert "size" not in data and "fold" not in data  # a section, not the top-level run
    assert "## KRaft metadata logs" in markdown.read_text()
