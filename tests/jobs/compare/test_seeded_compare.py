"""How much more the comparison holds once the partitions that predate an excerpt are seeded
(PartitionSnapshot events of the failover block, `jobs/ingest/logparse/seeding.py`): every
format fixture of `failover-snapshot/` compares nothing without them and agrees on every
observed point of topic `old` with them; the real logs are unchanged (no excerpt logs a
failover block with the partitions' requests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobs.compare.partitions import ENTITY_COLUMNS, compare_all
from jobs.ingest.logparse import pipeline
from schemas import event_types as ET
from statemachine.cluster import build_timeline
from statemachine.replay import replay
from tests.helpers import INGEST_FIXTURES, REAL_LOGS

SNAPSHOTS = INGEST_FIXTURES / "failover-snapshot"


def compared(path: Path, seed: bool) -> list[dict[str, Any]]:
    """The comparison rows of partitions and replicas both sides know (agree or differ)."""
    r = pipeline.ingest([str(path)])
    evs = [e for e in r.events if seed or e.event_type != ET.PARTITION_SNAPSHOT]
    tl = build_timeline([e for e in evs if e.event_type in ET.CLUSTER_EVENTS])
    _, out = replay(None, [e for e in evs if e.event_type not in ET.CLUSTER_EVENTS], tl)
    rows, _ = compare_all(
        "default", [o._asdict() for o in r.observations],
        [c._asdict() for c in out.state_changes],
        [x._asdict() for x in out.leader_and_isr + out.update_metadata],
        [x._asdict() for x in out.partition_states], [x._asdict() for x in out.replica_states])
    both = [dict(zip(ENTITY_COLUMNS, x, strict=True)) for x in rows]
    return [x for x in both if x["status"] in ("agree", "differ")]


@pytest.mark.parametrize("release", ["ak0.8", "ak0.10", "ak1.1", "ak2.0", "ak3.7"])
def test_seeding_lets_the_failover_fixtures_be_compared(release: str) -> None:
    assert compared(SNAPSHOTS / release, seed=False) == []
    seeded = compared(SNAPSHOTS / release, seed=True)
    assert {x["topic"] for x in seeded} == {"old"}
    assert [x["status"] for x in seeded] == ["agree"] * len(seeded)
    assert sum(x["observed_points"] for x in seeded) >= 5


def test_the_real_logs_compare_the_same_seeded_or_not() -> None:
    for path in sorted(REAL_LOGS.glob("*.log")):
        seeded, bare = compared(path, seed=True), compared(path, seed=False)
        assert seeded == bare, path.name
