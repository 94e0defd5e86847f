"""PartitionSnapshot events from a failover block (`logparse/seeding.py`): one fixture per
release format of `PartitionStateMachine.startup`'s `Started partition state machine with
initial state` line (0.8.2 and 0.10.2.1 `[t,0]`, INFO; 1.1.1 and 2.0.0 `t-0`, INFO; 3.7.1
`t-0` in a HashMap, DEBUG), each with the request lines that release prints during the
failover, written from the templates at those tags (`ControllerChannelManager`,
`KafkaController.onControllerFailover`).

In every fixture topic `old` exists before the excerpt: old-0 has replicas [2, 3, 1],
leader 2, ISR [2, 3, 1], leader epoch 4; then broker 2 fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.ingest.logparse import pipeline
from schemas import event_types as ET
from statemachine.cluster import build_timeline
from statemachine.replay import replay
from tests.helpers import INGEST_FIXTURES

FIX = INGEST_FIXTURES / "failover-snapshot"
RELEASES = ["ak0.8", "ak0.10", "ak1.1", "ak2.0", "ak3.7"]
# 0.8.2 prints neither the znode version on the controller side nor on the broker side.
ZK_VERSION = {"ak0.8": None}


@pytest.mark.parametrize("release", RELEASES)
def test_the_failover_block_seeds_the_partitions_it_did_not_create(release: str) -> None:
    r = pipeline.ingest([str(FIX / release)])
    assert r.unparsed == [] and all(s.lines_unparsed == 0 for s in r.summary)
    snapshots = [e for e in r.events if e.event_type == ET.PARTITION_SNAPSHOT]
    assert [(e.topic, e.partition, e.replicas, e.leader, e.isr, e.leader_epoch, e.zk_version,
             e.controller_epoch, e.partition_state) for e in snapshots] == [
        ("old", 0, (2, 3, 1), 2, (2, 3, 1), 4, ZK_VERSION.get(release, 6), None,
         "OnlinePartition")]
    # Emitted where the block closes ("ready to serve"), after the failover, before the
    # failure.
    types = [e.event_type for e in r.events]
    assert types == [ET.CONTROLLER_FAILOVER, ET.PARTITION_SNAPSHOT, ET.BROKER_FAILURE]
    assert "ready to serve" in _line(release, snapshots[0].source).lower()


def _line(release: str, source: str | None) -> str:
    assert source is not None
    name, number = source.rsplit(":", 1)
    return (FIX / release / name).read_text().splitlines()[int(number) - 1]


@pytest.mark.parametrize("release", RELEASES)
def test_the_seeded_partition_elects_as_kafka_does_when_its_leader_fails(release: str) -> None:
    # Broker 2, the leader, fails: onReplicasBecomeOffline -> OfflinePartition, then
    # offlinePartitionLeaderElection (3.7.1 PartitionStateMachine.scala:532-533) takes the
    # first replica of [2, 3, 1] that is live and in the ISR: 3; the live ISR is [3, 1]
    # (Election.leaderForOffline, Election.scala:42); the leader epoch goes 4 -> 5.
    r = pipeline.ingest([str(FIX / release)])
    cluster = [e for e in r.events if e.event_type in ET.CLUSTER_EVENTS]
    other = [e for e in r.events if e.event_type not in ET.CLUSTER_EVENTS]
    _, out = replay(None, other, build_timeline(cluster))
    [state] = [p for p in out.partition_states if p.topic == "old"]
    assert (state.state, state.leader, state.isr, state.leader_epoch) == (
        "OnlinePartition", 3, (3, 1), 5)
    assert out.findings == []
    _, bare = replay(None, [], build_timeline(cluster))
    assert bare.partition_states == []


def test_a_state_line_without_a_logged_assignment_seeds_nothing() -> None:
    # 2.2: payments-0 is in the state line, but no request line gives its ordered
    # assignment or leader (state.change.logger TRACE lines are not in the excerpt).
    r = pipeline.ingest([str(INGEST_FIXTURES / "versions" / "ak2.2")])
    assert [e for e in r.events if e.event_type == ET.PARTITION_SNAPSHOT] == []
    assert any(o.kind == "partition_snapshot" and o.topic == "payments"
               for o in r.observations)


def test_a_partition_created_in_the_excerpt_is_not_seeded_by_a_later_failover(
        tmp_path: Path) -> None:
    text = (FIX / "ak3.7" / "controller.log").read_text().splitlines()
    created = ("[2024-04-30 10:00:00,000] INFO [Controller id=1] New topics: [HashSet(old)], "
               "deleted topics: [HashSet()], new partition replica assignment "
               "[HashMap(old-0 -> ReplicaAssignment(replicas=2,3,1, addingReplicas=, "
               "removingReplicas=))] (kafka.controller.KafkaController)")
    folder = tmp_path
    (folder / "controller.log").write_text("\n".join([created, *text]) + "\n")
    (folder / "state-change.log").write_text(
        (FIX / "ak3.7" / "state-change.log").read_text())
    r = pipeline.ingest([str(folder)])
    assert [e.event_type for e in r.events][:2] == [ET.PARTITION_CREATED,
                                                    ET.CONTROLLER_FAILOVER]
    assert [e for e in r.events if e.event_type == ET.PARTITION_SNAPSHOT] == []
