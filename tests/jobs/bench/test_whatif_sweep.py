"""`make bench-whatif` on the tiny log: the sweep and one plain replay, side by side in
bench.json and BENCHMARKS.md, with the sweep's stages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobs.bench import whatif_sweep as bench
from jobs.bench.core import cached_log

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
    # Each process's peak: the driver's Python is the one that grows with the log.
    memory = result["sweep"]["memory_mb"]
    assert "driver python / JVM / workers" in table
    assert (f"| {memory['driver_python']:,.0f} / {memory['driver_jvm']:,.0f} / "
            f"{memory['python_workers']:,.0f} |") in table


def test_a_rack_sweep_deals_the_brokers_into_racks(tmp_path: Path) -> None:
    """`--sweep fail_each_rack --racks 3`: every broker in one rack, one variant per rack
    failing all of its brokers at once, as the what-if reads the scenario."""
    from jobs.whatif.facts import facts_from_arrow
    from jobs.whatif.scenario import load_scenario
    from jobs.whatif.sweeps import sweep_variants

    events, _ = cached_log("tiny", 1, tmp_path / "logs")
    path = tmp_path / "sweep.toml"
    variants, _ = bench.sweep_scenario(str(events), path, "fail_each_rack", 3)
    scenario = load_scenario(str(path))
    facts = facts_from_arrow(str(events))
    assert facts is not None
    assert sorted(b for b, _ in scenario.racks) == sorted(facts.all_brokers)
    specs = sweep_variants(scenario.sweeps[0], scenario.racks, facts)
    assert variants == len(specs) + 1 == 4  # tiny's 4 brokers in racks r0, r1, r2
    failed = [sorted(i.get("broker_id") for i in s.injections) for s in specs]
    assert sorted(b for bs in failed for b in bs) == sorted(facts.all_brokers)
    assert [len(bs) for bs in failed] == [2, 1, 1]
