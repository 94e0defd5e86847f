"""`make bench-whatif` on the tiny log: the sweep and one plain replay, side by side in
bench.json and BENCHMARKS.md, with the sweep's stages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobs.bench import whatif_sweep as bench

pytestmark = pytest.mark.slow


def test_the_sweep_and_one_replay_side_by_side(tmp_path: Path) -> None:
    out_json, markdown = tmp_path / "bench.json", tmp_path / "B.md"
    out_json.write_text(json.dumps({"preset": "bench", "runs": {}, "nightly": {}}))
    assert bench.main(["--preset", "tiny", "--buckets", "2", "--json", str(out_json),
                       "--markdown", str(markdown), "--work", str(tmp_path / "work"),
                       "--cache", str(tmp_path / "logs")]) == 0
    data = json.loads(out_json.read_text())
    result = data["whatif"]["tiny"]
    assert data["preset"] == "bench"  # the last `make bench` run stays on top
    assert result["variants"] == 5  # tiny: 4 brokers, plus the baseline
    assert result["sweep"]["rc"] == result["replay"]["rc"] == 0
    assert {"plan", "replay", "publish", "impact", "total"} <= set(result["sweep"]["stages_s"])
    assert result["sweep_over_replay"] == round(
        result["sweep_seconds"] / result["replay_seconds"], 2)
    table = markdown.read_text().split("## What-if sweep (`make bench-whatif`)")[1]
    assert "| tiny |" in table and "| 5 |" in table
