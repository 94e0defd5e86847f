"""The replay job gives Kafka's rows for the controller actions that span every topic
(`TopicDeletionManager.resumeDeletions`, the leaderless retries of a broker change) with
one bucket, with several, and cut into two nightly runs, and the same rows as the pure
core (tests/statemachine/test_cross_group.py derives them from the Kafka source)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobs.replay.job import main
from jobs.store.latest_state import read_state
from jobs.store.tables import read_table
from schemas import event_types as ET
from statemachine.events import Event
from statemachine.replay import bucket_of
from tests.helpers.core import replay_log
from tests.helpers.event_log import created, ev, failover, ts_of, write_log

pytestmark = pytest.mark.slow

DOOMED, SIBLING = "doomed", "sibling"  # in different buckets for 2, 3, 4 and 8 buckets
DAY1 = [
    failover(1, 1, [1, 2, 3]),
    created(2, DOOMED, 0, [3]),
    created(3, SIBLING, 0, [1]),
    ev(4, ET.BROKER_FAILURE, broker_id=3),  # doomed-0 loses its only replica
    ev(5, ET.BROKER_FAILURE, broker_id=2),  # hosts nothing: doomed-0 retried anyway
    ev(6, ET.TOPIC_DELETION_REQUESTED, topic=SIBLING),  # started on broker 1
    ev(7, ET.TOPIC_DELETION_REQUESTED, topic=DOOMED),  # ineligible: broker 3 is dead
]
DAY2 = [ev(8, ET.STOP_REPLICA_RESPONSE, topic=SIBLING, partition=0, broker_id=1)]
COLUMNS = ("seq", "step", "topic", "partition", "broker_id", "machine", "from_state",
           "to_state", "outcome", "reason")


def _changes(spark: Any, out: Path) -> list[tuple[Any, ...]]:
    df = read_table(spark, str(out), "state_changes")
    return sorted(tuple(r) for r in df.select(*COLUMNS).collect())


def _run(events: Path, out: Path, run_id: str, buckets: int, *extra: str) -> None:
    assert main(["--events", str(events), "--out", str(out), "--run-id", run_id,
                 "--buckets", str(buckets), *extra]) == 0


def _core_changes() -> list[tuple[Any, ...]]:
    events = [Event(r["seq"], int(ts_of(r["seq"]).timestamp() * 1_000_000), r["event_type"],
                    r["broker_id"], r["topic"], r["partition"],
                    None if r["replicas"] is None else tuple(r["replicas"]), None, None,
                    None if r["brokers"] is None else tuple(r["brokers"]))
              for r in DAY1 + DAY2]
    _, out = replay_log(events)
    return sorted((c.seq, c.step, c.topic, c.partition, c.broker_id, c.machine, c.from_state,
                   c.to_state, c.outcome, c.reason) for c in out.state_changes)


def test_cross_topic_rows_whatever_the_bucket_count(spark: Any, tmp_path: Path) -> None:
    assert bucket_of(ET.DEFAULT_CLUSTER, DOOMED, 4) != bucket_of(ET.DEFAULT_CLUSTER, SIBLING, 4)
    write_log(tmp_path / "events", DAY1, "day1")
    write_log(tmp_path / "events", DAY2, "day2")
    _run(tmp_path / "events", tmp_path / "one", "r", 1)
    _run(tmp_path / "events", tmp_path / "four", "r", 4)
    one = _changes(spark, tmp_path / "one")
    assert _changes(spark, tmp_path / "four") == one == _core_changes()
    # Broker 2's failure (seq 5) retries doomed-0, which it does not host: Offline ->
    # Offline (partitionsWithOfflineLeader), then a failed election
    # (triggerOnlinePartitionStateChange; KafkaController.scala:668-673 at 3.7.1).
    assert [(c[1], c[6], c[7]) for c in one if c[0] == 5] == [
        (1, "OfflinePartition", "OfflinePartition"), (2, "OfflinePartition", "OnlinePartition")]
    # sibling's StopReplica response (seq 8) walks every queued topic: doomed's ineligible
    # replica is retried (TopicDeletionManager.scala:206-211, 318-357 at 3.7.1).
    assert [(c[2], c[4], c[6], c[7]) for c in one if c[0] == 8 and c[2] == DOOMED] == [
        (DOOMED, 3, "ReplicaDeletionIneligible", "OfflineReplica")]


def test_cross_topic_rows_over_two_nightly_runs(spark: Any, tmp_path: Path) -> None:
    """Day 2 holds only sibling's response: doomed's bucket has no event that night and
    still walks at seq 8, from the timeline."""
    events, out, chk = tmp_path / "events", tmp_path / "out", tmp_path / "chk"
    write_log(events, DAY1, "day1")
    _run(events, out, "d1", 4, "--checkpoint", str(chk))
    write_log(events, DAY2, "day2")
    _run(events, out, "d2", 4, "--checkpoint", str(chk))
    assert _changes(spark, out) == _core_changes()
    states = read_state(spark, str(out), "replica_states", "d2")
    assert [(r["topic"], r["broker_id"], r["state"]) for r in states.collect()] == [
        (DOOMED, 3, "OfflineReplica")]
