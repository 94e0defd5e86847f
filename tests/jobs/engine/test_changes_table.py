"""The `changes` table the replay writes: a hand-made log with a hand-derived digest,
replayed at once and as two nights on a checkpoint (the nights add up to the full replay)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from jobs.replay.job import main
from schemas import event_types as ET
from tests.helpers.event_log import created, ev, failover, write_log

pytestmark = pytest.mark.slow

NIGHT1 = [
    failover(1, 1, [1, 2, 3]),
    created(2, "t", 0, [1, 2]),  # leader 1
    created(2, "t", 1, [2, 3]),  # leader 2
    ev(3, ET.TOPIC_CONFIG_CHANGED, topic="t", unclean_leader_election=True),
    ev(4, ET.REASSIGNMENT_REQUESTED, topic="t", partition=0, replicas=[1, 3]),  # adds 3
    created(5, "u", 0, [1]),
    ev(10, ET.BROKER_FAILURE, broker_id=2),  # t-1's leader moves 2 -> 3
]
NIGHT2 = [
    ev(20, ET.ISR_CHANGED, topic="t", partition=0, isr=[1, 3]),  # the reassignment completes
    ev(21, ET.BROKER_STARTUP, broker_id=2),
    ev(22, ET.ISR_CHANGED, topic="t", partition=1, isr=[3, 2]),
    ev(23, ET.PREFERRED_LEADER_ELECTION, topic="t", partition=1),  # 3 -> 2, the preferred
    created(24, "t", 2, [3, 1]),  # a partition added: leader 3
    ev(25, ET.CONTROLLED_SHUTDOWN, broker_id=3),  # t-2's leader moves 3 -> 1
    ev(26, ET.TOPIC_DELETION_REQUESTED, topic="u"),
    ev(27, ET.STOP_REPLICA_RESPONSE, topic="u", partition=0, broker_id=1),  # u deleted
    ev(28, ET.BROKER_FAILURE, broker_id=3),  # the end of 3's controlled shutdown
]
# change -> (count, [(seq, topic, partition, broker_id, detail)] of its first rows)
FULL = {
    "topic_created": (2, [(2, "t", None, None, "2 partitions"),
                          (5, "u", None, None, "1 partition")]),
    "partitions_added": (1, [(24, "t", 2, None, None)]),
    "topic_deletion_requested": (1, [(26, "u", None, None, None)]),
    "topic_deleted": (1, [(27, "u", None, None, None)]),
    "reassignment_started": (1, [(4, "t", 0, None, None)]),
    "reassignment_completed": (1, [(20, "t", 0, None, None)]),
    "preferred_election": (1, [(23, "t", 1, None, None)]),
    "leader_moved": (3, [(10, "t", 1, None, "2 -> 3"), (23, "t", 1, None, "3 -> 2"),
                         (25, "t", 2, None, "3 -> 1")]),
    "topic_config_changed": (1, [(3, "t", None, None, "unclean.leader.election.enable=true")]),
    "controller_failover": (1, [(1, None, None, 1, "the new controller, epoch 1")]),
    "broker_started": (1, [(21, None, None, 2, None)]),
    "broker_shutdown": (1, [(25, None, None, 3, None)]),
    "broker_failed": (1, [(10, None, None, 2, None)]),
}


def run(events: Path, out: Path, run_id: str, *extra: str) -> int:
    return main(["--events", str(events), "--out", str(out), "--run-id", run_id,
                 "--buckets", "4", *extra])


def changes(spark: Any, out: Path, run_id: str) -> dict[str, tuple[int, list[tuple[Any, ...]]]]:
    rows = spark.read.parquet(str(out / "changes")).where(F.col("run_id") == run_id).collect()
    return {r["change"]: (r["count"], [(f["seq"], f["topic"], f["partition"], f["broker_id"],
                                        f["detail"]) for f in r["first"]]) for r in rows}


def test_one_replay_lists_every_change_of_the_log(spark: Any, tmp_path: Path) -> None:
    write_log(tmp_path / "events", NIGHT1, "n1")
    write_log(tmp_path / "events", NIGHT2, "n2")
    assert run(tmp_path / "events", tmp_path / "out", "full") == 0
    found = changes(spark, tmp_path / "out", "full")
    assert found == FULL
    first = spark.read.parquet(str(tmp_path / "out" / "changes")) \
        .where(F.col("change") == "leader_moved").select(F.col("first")[0]["ts"]).first()[0]
    assert first is not None  # the rows carry their event's time


def test_two_nights_add_up_to_the_full_replay(spark: Any, tmp_path: Path) -> None:
    events, out, chk = tmp_path / "events", tmp_path / "out", tmp_path / "chk"
    write_log(events, NIGHT1, "n1")
    assert run(events, out, "night1", "--checkpoint", str(chk)) == 0
    night1 = changes(spark, out, "night1")
    # Still reassigning at the end of the first night, completed in the second.
    assert night1["reassignment_in_progress"] == (1, [(4, "t", 0, None, "open since this seq")])
    write_log(events, NIGHT2, "n2")
    assert run(events, out, "night2", "--checkpoint", str(chk)) == 0
    night2 = changes(spark, out, "night2")
    assert "reassignment_in_progress" not in night2
    for change, (count, first) in FULL.items():
        one, two = night1.get(change, (0, [])), night2.get(change, (0, []))
        assert one[0] + two[0] == count, change
        assert sorted(one[1] + two[1], key=lambda r: r[0]) == first, change
