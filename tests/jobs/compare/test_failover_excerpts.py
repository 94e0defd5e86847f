"""Hand-made excerpts of what a ZooKeeper-mode controller logs at a failover, in the formats
of 2.5.1 (the lines of `KafkaController`, `ZkReplicaStateMachine`, `ZkPartitionStateMachine`
and `ControllerChannelManager` at that tag): each is ingested, replayed under the release
the ingest dates it to (2.4-2.5: the 2.5 profile) and compared, and every point agrees;
each test shows what differed before the replay read what the log says. How each was
derived from the source is in the fixtures' README (`tests/fixtures/ingest/README.md`).

* `controller-epoch/ak2.5`: an excerpt that starts mid-life (`--assume-controller 2`); its
  lines state the epoch (`[Controller id=2 epoch=16]`, `controllerEpoch=16`).
* `failover-deletions/ak2.5`: a deletion stuck on a dead broker's replica; its
  `/admin/delete_topics` marker removed by hand and a new controller elected, which lists
  no topic to delete (`List of topics to be deleted: `): it elects the partition, keeps
  the topic, and the broker's return deletes nothing.
* `zookeeper-reset/ak2.5`: ZooKeeper's data wiped under a running cluster: the controller
  is elected again in epoch 1 (`Epoch incremented to 1`) and finds no topic; `events` is
  then created anew.
* `failover-brokers-down/ak2.5`: brokers 2 and 3 (the controller) gone together, broker 1
  elected with itself alone live: the new controller's first UpdateMetadata carries every
  partition as ZooKeeper holds it, before the failover's ISR removals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jobs.compare.partitions import PartitionComparison
from jobs.ingest.release import Detected, choose_release
from statemachine.events import Event
from tests.helpers import INGEST_FIXTURES
from tests.helpers.excerpts import Excerpt, detected, differing, run, statuses

EPOCH = INGEST_FIXTURES / "controller-epoch" / "ak2.5"
DELETIONS = INGEST_FIXTURES / "failover-deletions" / "ak2.5"
RESET = INGEST_FIXTURES / "zookeeper-reset" / "ak2.5"
BROKERS_DOWN = INGEST_FIXTURES / "failover-brokers-down" / "ak2.5"


def replayed(path: Path, **kw: Any) -> Excerpt:
    """Under the release the ingest detects, as `jobs.replay` takes it by default."""
    found = detected(path)
    assert found is not None and found.text() == "2.4-2.5", path
    version = choose_release(None, Detected(found.text(), {}), "3.7", "config").version
    return run(path, version, **kw)


def without(field: str) -> Any:
    """An edit: the failovers' `field` as if the log had not said it."""
    def edit(e: Event) -> Event:
        return e._replace(**{field: None}) if e.event_type == "ControllerFailover" else e
    return edit


def test_the_logged_controller_epoch_is_the_one_replayed() -> None:
    x = replayed(EPOCH, assume_controller=2, assume_live=(1, 2, 3))
    [assumed] = [e for e in x.ingested.events if e.event_type == "ControllerFailover"]
    assert (assumed.seq, assumed.controller_epoch) == (0, 16)
    assert statuses(x) <= {"agree", "not_observed"} and differing(x) == []
    [state] = x.out.partition_states
    assert (state.leader, state.isr, state.leader_epoch, state.controller_epoch) == (1, (1,), 1, 16)
    assert {r.controller_epoch for r in x.out.leader_and_isr} == {16}
    counted = run(EPOCH, "2.5", edit=without("controller_epoch"), assume_controller=2,
                  assume_live=(1, 2, 3))
    assert counted.out.partition_states[0].controller_epoch == 1


def test_a_failovers_empty_deletion_list_keeps_the_topic() -> None:
    x = replayed(DELETIONS)
    failovers = [(e.broker_id, e.controller_epoch, e.topics_to_be_deleted)
                 for e in x.ingested.events if e.event_type == "ControllerFailover"]
    assert failovers == [(1, 3, ()), (2, 4, ())]
    assert statuses(x) == {"agree"}
    [state] = x.out.partition_states
    assert (state.state, state.leader, state.isr, state.leader_epoch) == (
        "OnlinePartition", 2, (2,), 3)
    assert [f.kind for f in x.out.findings] == ["deletion_queue_differs"]
    # Replayed without the list, the old deletion is resumed: no election at the failover.
    kept = replayed(DELETIONS, edit=without("topics_to_be_deleted"))
    assert differing(kept) == [
        ("audit", 0, None, "state", "OfflinePartition->OnlinePartition", "OfflinePartition",
         "broker-2/state-change.log:4")]


def test_a_controller_epoch_that_goes_back_starts_a_new_history() -> None:
    x = replayed(RESET)
    assert [(e.seq, e.controller_epoch) for e in x.ingested.events
            if e.event_type == "ControllerFailover"] == [(1, 16), (3, 1)]
    assert statuses(x) == {"agree"}
    assert [f.kind for f in x.timeline.findings] == ["controller_epoch_reset"]
    assert x.out.findings == []
    [state] = x.out.partition_states
    assert (state.leader, state.replicas, state.controller_epoch) == (2, (2, 1), 1)
    # Without the logged epochs, the creation is merged into the old partition.
    merged = replayed(RESET, edit=without("controller_epoch"))
    assert [f.kind for f in merged.out.findings] == ["partition_exists"]
    assert ("events", 0, None, "state", "NonExistentPartition->NewPartition",
            "OnlinePartition", "state-change.log:10") in differing(merged)


def test_a_state_logged_mid_failover_is_held_against_the_failovers_start(
    monkeypatch: Any
) -> None:
    x = replayed(BROKERS_DOWN)
    assert statuses(x) <= {"agree", "not_observed"} and differing(x) == []
    isr = {(s.partition, s.leader, s.isr) for s in x.out.partition_states}
    # pay-0, led by the live broker 1: its ISR loses 2 and 3 (ZkReplicaStateMachine
    # OfflineReplica); pay-1 elects 1; pay-2 has no live replica: leaderless.
    assert isr == {(0, 1, (1,)), (1, 1, (1,)), (2, -1, (3,))}
    # 2.5.0 `ReplicaStateMachine.startup` (ReplicaStateMachine.scala:35-44): the live
    # replicas' OnlineReplica first, whose LeaderAndIsr carries ZooKeeper's ISR [1, 2, 3]
    # (:188-213), then the dead ones' OfflineReplica, which writes the ISR without them
    # (`removeReplicasFromIsr`, :282-370: `zkClient.updateLeaderAndIsr`) and sends it.
    failover = max(e.seq for e in x.ingested.events if e.event_type == "ControllerFailover")
    assert [(r.isr, r.leader_epoch) for r in x.out.leader_and_isr
            if r.partition == 0 and r.seq == failover] == [((1, 2, 3), 0), ((1,), 2)]
    pay2 = next(r for r in x.rows if (r["partition"], r["broker_id"]) == (2, None))
    # Its creation, the failover's first UpdateMetadata (leader 3, ISR [3, 2]: ZooKeeper's),
    # the UpdateMetadata after the ISR removals (leader -1, ISR [3]), the failed election.
    assert (pay2["leader_agree"], pay2["isr_agree"], pay2["observed_points"]) == (
        True, True, 4)
    # Held only against the states the replay sent at the failover (all after its ISR
    # removals), ZooKeeper's state the first UpdateMetadata carried would differ.
    monkeypatch.setattr(PartitionComparison, "_before", lambda self, seq, kind: None)
    assert differing(replayed(BROKERS_DOWN)) == [
        ("pay", 2, None, "leader", "3", "-1", "state-change.log:6")]
