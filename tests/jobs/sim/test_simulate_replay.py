"""Replaying a simulated log with the pure core agrees with the simulator's own truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.bench.core import fold_groups, group_log, read_log, sort_log
from jobs.sim.cli import simulate


def replay_against_truth(tmp: Path, preset: str, seed: int) -> tuple[list[str], list[str]]:
    counts, sim = simulate(str(tmp), preset, seed)
    groups = group_log(sort_log(read_log(tmp)))
    res = fold_groups(groups, keep_outputs=True)
    findings = [f for tl in res.timelines.values() for f in tl.findings]
    states = {}
    for out in res.outputs.values():
        findings += out.findings
        for row in out.partition_states:
            states[(row.topic, row.partition)] = row
    bad = [
        f"{f.kind} seq={f.seq} {f.topic}-{f.partition}: {f.detail}"
        for f in findings
        if f.kind == "invalid_transition"
    ]
    mismatches = []
    truth = sim.truth
    for p in truth.parts:
        if p is None:
            continue
        row = states.get((p.topic, p.partition))
        if row is None:
            mismatches.append(f"{p.topic}-{p.partition}: missing from partition_states")
            continue
        got = (-1 if row.leader is None else row.leader, row.leader_epoch, tuple(row.isr or ()))
        want = (p.leader, p.epoch, p.isr)
        if got != want:
            mismatches.append(
                f"{p.topic}-{p.partition}: core (leader, epoch, isr)={got} "
                f"truth={want} last_seq={row.last_seq}"
            )
    return bad, mismatches


@pytest.mark.parametrize(("preset", "seed"), [("tiny", 1), ("tiny", 2), ("tiny", 3), ("sample", 1)])
def test_replay_matches_truth(tmp_path: Path, preset: str, seed: int) -> None:
    bad, mismatches = replay_against_truth(tmp_path, preset, seed)
    assert not bad, "\n".join(bad[:20])
    assert not mismatches, f"{len(mismatches)} partitions differ:\n" + "\n".join(mismatches[:20])
