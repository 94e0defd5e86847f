"""A failed election and a deleted topic's ISR shrinks, logged by Kafka 2.6 and replayed
(`tests/fixtures/ingest/outcomes-ak2.6/`, written from the 2.6.0 templates of
`PartitionStateMachine` / `ReplicaStateMachine`):

* broker 2, the only replica of t-1, fails: `failed to change state for partition t-1 from
  OfflinePartition to OnlinePartition` with a StateChangeFailedException, then `Partition
  t-1 state changed to (Leader:-1,ISR:2,LeaderEpoch:1,...) after removing replica 2`;
* topic d (replicas 3, 1) is deleted: two ISR shrinks written to ZooKeeper, and no
  LeaderAndIsr sent (the topic is queued for deletion), only the UpdateMetadata with the
  deletion's leader -2.
"""

from __future__ import annotations

from typing import Any

from jobs.compare.partitions import compare_all
from tests.helpers import INGEST_FIXTURES
from tests.jobs.compare.test_real_logs import ingest_replay

FIXTURE = INGEST_FIXTURES / "outcomes-ak2.6"


def _row(res: dict[str, Any], topic: str, partition: int) -> dict[str, Any]:
    (row,) = [x for x in res["rows"] if (x["topic"], x["partition"], x["broker_id"])
              == (topic, partition, None)]
    return row


def test_the_fixture_ingests_whole() -> None:
    res = ingest_replay(FIXTURE)
    assert res["ingest"].unparsed == []
    assert [(s.file, s.lines_unparsed) for s in res["ingest"].summary] == [
        ("controller.log", 0), ("state-change.log", 0)]


def test_a_failed_election_in_the_log_matches_the_replays_failed_attempt() -> None:
    res = ingest_replay(FIXTURE)
    (logged,) = [o for o in res["ingest"].observations
                 if o.kind == "partition_transition" and o.outcome != "applied"]
    assert (logged.topic, logged.partition, logged.from_state, logged.to_state,
            logged.outcome) == ("t", 1, "OfflinePartition", "OnlinePartition", "failed")
    (replayed,) = [c for c in res["out"].state_changes if c.outcome == "failed"]
    assert (replayed.topic, replayed.partition, replayed.from_state, replayed.to_state) == (
        "t", 1, "OfflinePartition", "OnlinePartition")
    t1 = _row(res, "t", 1)
    assert (t1["status"], t1["state_agree"], t1["matched_transitions"],
            t1["observed_only_transitions"]) == ("agree", True, 3, 0)
    # matched: NonExistent->New, New->Online and the failed Offline->Online (2.6 logs
    # Online->Offline at TRACE: only inferred)
    failed = [t for t in res["transitions"] if t.outcome == "failed"]
    assert [(t.topic, t.partition, t.evidence, t.source) for t in failed] == [
        ("t", 1, "observed", "state-change.log:7")]


def test_the_failed_attempt_does_not_match_an_applied_one() -> None:
    """Held against a replay whose election succeeded, the logged failure is observed_only
    and the partition differs, naming the failed attempt."""
    res = ingest_replay(FIXTURE)
    changes = [c._asdict() for c in res["out"].state_changes]
    for c in changes:
        if c["outcome"] == "failed":
            c["outcome"] = "applied"
    obs = [o._asdict() for o in res["ingest"].observations]
    out = res["out"]
    rows, _ = compare_all(
        "default", obs, changes, [x._asdict() for x in out.leader_and_isr + out.update_metadata],
        [x._asdict() for x in out.partition_states], [x._asdict() for x in out.replica_states],
        [w._asdict() for w in out.partition_state_writes])
    (t1,) = [r for r in rows if (r.topic, r.partition, r.broker_id) == ("t", 1, None)]
    assert (t1.status, t1.first_divergence_field, t1.observed_value) == (
        "differ", "state", "OfflinePartition->OnlinePartition (failed)")


def test_a_deleted_topics_isr_shrinks_compare_with_the_written_state() -> None:
    res = ingest_replay(FIXTURE)
    d0 = _row(res, "d", 0)
    assert (d0["status"], d0["leader_agree"], d0["isr_agree"], d0["leader_epoch_agree"]) == (
        "agree", True, True, True)
    assert "differ" not in {x["status"] for x in res["rows"]}


def test_without_the_writes_the_shrinks_meet_the_deletions_update_metadata() -> None:
    """A replay output written before `partition_state_writes` existed: compare falls back
    to the requests, where the only state of d-0 at the deletion is the UpdateMetadata's
    leader -2, and the partition differs, as it did before the table."""
    res = ingest_replay(FIXTURE)
    out = res["out"]
    rows, _ = compare_all(
        "default", [o._asdict() for o in res["ingest"].observations],
        [c._asdict() for c in out.state_changes],
        [x._asdict() for x in out.leader_and_isr + out.update_metadata],
        [x._asdict() for x in out.partition_states], [x._asdict() for x in out.replica_states])
    (d0,) = [r for r in rows if (r.topic, r.partition, r.broker_id) == ("d", 0, None)]
    assert (d0.status, d0.first_divergence_field, d0.observed_value, d0.replayed_value) == (
        "differ", "leader", "3", "-2")
