"""A preferred election after a restart, in a 2.3.0 log (`isr-notification/ak2.3`): broker 2
comes back, its leader 1 adds it to the ISR through ZooKeeper (an ISR change notification:
`Sending MetadataRequest ... for TopicPartitions`, then the UpdateMetadata line with ISR
[1, 2]), and the auto-rebalance elects it (`Changed partition orders-0 from OnlinePartition
to OnlinePartition with state LeaderAndIsr(leader=2, ...)`). Without the ISR change the
replay's ISR is [1] and `PreferredReplicaPartitionLeaderElectionStrategy` has no leader to
elect: the election fails."""

from __future__ import annotations

from jobs.compare.partitions import ENTITY_COLUMNS, compare_all
from jobs.ingest.logparse import pipeline
from schemas import event_types as ET
from statemachine.cluster import build_timeline
from statemachine.context import ReplayConfig
from statemachine.replay import replay
from tests.helpers import INGEST_FIXTURES

FIX = INGEST_FIXTURES / "isr-notification" / "ak2.3"


def test_the_preferred_election_after_a_restart_agrees_with_kafka() -> None:
    r = pipeline.ingest([str(FIX)])
    tl = build_timeline([e for e in r.events if e.event_type in ET.CLUSTER_EVENTS])
    _, out = replay(None, [e for e in r.events if e.event_type not in ET.CLUSTER_EVENTS], tl,
                    ReplayConfig(kafka_version="2.3", scala_binary="2.12"))
    [state] = out.partition_states
    assert (state.leader, state.isr, state.leader_epoch) == (2, (1, 2), 2)
    assert [c.outcome for c in out.state_changes if c.from_state == c.to_state] == ["applied"]
    rows, _ = compare_all(
        "default", [o._asdict() for o in r.observations],
        [c._asdict() for c in out.state_changes],
        [x._asdict() for x in out.leader_and_isr + out.update_metadata],
        [x._asdict() for x in out.partition_states], [x._asdict() for x in out.replica_states],
        [w._asdict() for w in out.partition_state_writes])
    part = next(dict(zip(ENTITY_COLUMNS, x, strict=True)) for x in rows if x[3] is None)
    assert (part["status"], part["observed_points"], part["matched_transitions"]) == (
        "agree", 4, 3)
