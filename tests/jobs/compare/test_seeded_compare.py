"""How much more the comparison holds once the partitions that predate an excerpt are seeded
(PartitionSnapshot events of the failover block, `jobs/ingest/logparse/seeding.py`): every
format fixture of `failover-snapshot/` compares nothing without them and agrees on every
observed point of topic `old` with them; the real logs are unchanged (no excerpt logs a
failover block with the partitions' requests).

`failover-elections/ak1.1` is a 1.1.0 failover whose own election moves the partition it
seeds (its leader, broker 2, is dead): `PartitionStateMachine.startup` ->
`triggerOnlinePartitionStateChange` logs `Changed partition old-0 from OfflinePartition to
OnlinePartition` inside the block, before the PartitionSnapshot's seq; a broker that joins
later gets the full UpdateMetadata of `KafkaController.onBrokerStartup` (1.1.0:
`sendUpdateMetadataRequest(controllerContext.liveOrShuttingDownBrokerIds.toSeq)`, every
partition), which the replay writes no row for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobs.compare.partitions import ENTITY_COLUMNS, compare_all
from jobs.ingest.logparse import pipeline
from schemas import event_types as ET
from statemachine.cluster import build_timeline
from statemachine.context import ReplayConfig
from statemachine.replay import replay
from tests.helpers import INGEST_FIXTURES, REAL_LOGS

SNAPSHOTS = INGEST_FIXTURES / "failover-snapshot"


def compare(path: Path, seed: bool, seeds: bool = True, kafka_version: str = "3.7",
            edit: Any = None) -> tuple[list[dict[str, Any]], list[Any]]:
    """Every comparison row and transition row. `seeds`: whether compare is given the
    PartitionSnapshot events' leadership; `edit`: rewrites the observations first."""
    r = pipeline.ingest([str(path)])
    evs = [e for e in r.events if seed or e.event_type != ET.PARTITION_SNAPSHOT]
    tl = build_timeline([e for e in evs if e.event_type in ET.CLUSTER_EVENTS])
    config = ReplayConfig(kafka_version=kafka_version,
                          scala_binary="2.13" if kafka_version >= "3" else "2.12")
    _, out = replay(None, [e for e in evs if e.event_type not in ET.CLUSTER_EVENTS], tl,
                    config)
    observations = [o._asdict() for o in r.observations]
    rows, transitions = compare_all(
        "default", [edit(o) for o in observations] if edit else observations,
        [c._asdict() for c in out.state_changes],
        [x._asdict() for x in out.leader_and_isr + out.update_metadata],
        [x._asdict() for x in out.partition_states], [x._asdict() for x in out.replica_states],
        [w._asdict() for w in out.partition_state_writes],
        [e._asdict() for e in evs if e.event_type == ET.PARTITION_SNAPSHOT] if seeds else ())
    return [dict(zip(ENTITY_COLUMNS, x, strict=True)) for x in rows], transitions


def compared(path: Path, seed: bool) -> list[dict[str, Any]]:
    """The comparison rows of partitions and replicas both sides know (agree or differ)."""
    rows, _ = compare(path, seed)
    return [x for x in rows if x["status"] in ("agree", "differ")]


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


ELECTIONS = INGEST_FIXTURES / "failover-elections" / "ak1.1"


def test_the_failovers_own_transitions_are_held_against_the_state_it_seeds() -> None:
    rows, transitions = compare(ELECTIONS, seed=True, kafka_version="2.0")
    assert {(x["broker_id"], x["status"]) for x in rows} == {
        (None, "agree"), (1, "agree"), (2, "agree"), (3, "agree")}
    part = next(x for x in rows if x["broker_id"] is None)
    assert (part["state_agree"], part["leader_agree"], part["observed_only_transitions"]) == (
        True, True, 0)
    logged = sorted((t.broker_id or 0, t.from_state, t.to_state, t.evidence)
                    for t in transitions if t.step is None)
    assert logged == [(0, "OfflinePartition", "OnlinePartition", "seeded"),
                      (1, "OnlineReplica", "OnlineReplica", "seeded"),
                      (3, "OnlineReplica", "OnlineReplica", "seeded")]


def test_a_failover_transition_that_did_not_lead_to_the_seeded_state_differs() -> None:
    # Had Kafka logged the election as failed, the partition would have stayed Offline,
    # not the OnlinePartition the snapshot seeded.
    def failed(o: dict[str, Any]) -> dict[str, Any]:
        return {**o, "outcome": "failed"} if o["kind"] == "partition_transition" else o

    rows, _ = compare(ELECTIONS, seed=True, kafka_version="2.0", edit=failed)
    part = next(x for x in rows if x["broker_id"] is None)
    assert (part["status"], part["first_divergence_field"], part["observed_value"],
            part["replayed_value"]) == ("differ", "state", "OfflinePartition",
                                        "OnlinePartition")


def test_a_joining_brokers_full_update_metadata_is_held_against_the_seeded_leader() -> None:
    # Broker 4 hosts nothing: the only request for old-0 at its startup is the full
    # UpdateMetadata, leader 3 (the failover's election). The replay sends none; the
    # leadership in force is the one the snapshot seeded.
    rows, _ = compare(ELECTIONS, seed=True, kafka_version="2.0")
    part = next(x for x in rows if x["broker_id"] is None)
    assert (part["leader_agree"], part["isr_agree"], part["leader_epoch_agree"]) == (
        True, True, True)
    bare, _ = compare(ELECTIONS, seed=True, kafka_version="2.0", seeds=False)
    part = next(x for x in bare if x["broker_id"] is None)
    assert (part["status"], part["first_divergence_field"], part["observed_value"],
            part["replayed_value"]) == ("differ", "leader", "3", None)
