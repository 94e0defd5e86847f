"""The pure roll-up behind `changes` (`jobs.engine.change_digest`), on hand-made rows."""

from __future__ import annotations

from jobs.engine.change_digest import (
    Change,
    cluster_changes,
    created,
    in_order,
    leaders_moved,
    reassignments,
)
from schemas import event_types as ET
from statemachine.cluster import build_timeline
from statemachine.events import Event

S = 1_000_000


def _event(seq: int, event_type: str, **kw: object) -> Event:
    fields = {name: None for name in Event._fields}
    fields.update(seq=seq, ts=seq * S, event_type=event_type, **kw)
    return Event(**fields)


def test_partition_zero_creates_the_topic_and_later_creations_add_partitions() -> None:
    topics, added = created([(5, 5, "t", 0), (5, 5, "t", 1), (9, 9, "t", 2), (7, 7, "u", 3)])
    assert (topics.count, topics.first) == (1, ((5, 5, "t", None, None, "2 partitions"),))
    # u's partition 3 belongs to a topic created before the run.
    assert added.count == 2
    assert [r[:4] for r in added.first] == [(7, 7, "u", 3), (9, 9, "t", 2)]


def test_reassignments_open_in_one_run_and_close_in_another() -> None:
    windows = [
        ("r1", "t", 0, 4, 4, None, None),  # opened by r1, still open at its end
        ("r2", "t", 0, 4, 4, 20, 20),  # closed by r2
        ("r2", "t", 1, 21, 21, None, None),  # opened by r2, open at its end
    ]
    r1 = {c.change: c for c in reassignments([w for w in windows if w[0] == "r1"], "r1")}
    assert (r1["reassignment_started"].count, r1["reassignment_in_progress"].count) == (1, 1)
    r2 = {c.change: c for c in reassignments(windows, "r2")}
    assert [r[:4] for r in r2["reassignment_started"].first] == [(21, 21, "t", 1)]
    assert [r[:4] for r in r2["reassignment_completed"].first] == [(20, 20, "t", 0)]
    assert [r[:4] for r in r2["reassignment_in_progress"].first] == [(21, 21, "t", 1)]


def test_a_leader_moves_against_the_write_before_it_in_any_run() -> None:
    writes = [
        ("r1", 2, 0, 2, "t", 0, 1, "initialization"),
        ("r1", 10, 0, 10, "t", 0, -1, "isr_shrink"),  # leader lost
        ("r2", 12, 0, 12, "t", 0, 2, "election"),  # from none: a recovery, not a move
        ("r2", 15, 0, 15, "t", 0, 3, "election"),  # 2 -> 3
        ("r2", 16, 0, 16, "t", 0, 3, "election"),  # same leader, new epoch
        ("r1", 3, 0, 3, "t", 1, 4, "initialization"),
        ("r2", 11, 0, 11, "t", 1, 5, "election"),  # 4 (written by r1) -> 5
    ]
    moved = leaders_moved(writes, "r2")
    assert moved.count == 2
    assert [(r[0], r[3], r[5]) for r in moved.first] == [(11, 1, "4 -> 5"), (15, 0, "2 -> 3")]
    assert leaders_moved(writes, "r1").count == 0


def test_cluster_changes_after_the_committed_runs() -> None:
    timeline = build_timeline([
        _event(1, ET.CONTROLLER_FAILOVER, broker_id=1, brokers=(1, 2, 3)),
        _event(5, ET.BROKER_FAILURE, broker_id=3),
        _event(6, ET.CONTROLLED_SHUTDOWN, broker_id=2),
        _event(7, ET.BROKER_FAILURE, broker_id=2),  # the end of 2's controlled shutdown
        _event(8, ET.CONTROLLER_FAILOVER, broker_id=4, brokers=(4,)),  # 1 gone, 4 found
    ])
    found = {c.change: c for c in cluster_changes(timeline, None)}
    assert [r[0] for r in found["controller_failover"].first] == [1, 8]
    # The first controller's brokers are where the log starts, not starts.
    assert [(r[0], r[4], r[5]) for r in found["broker_started"].first] == [
        (8, 4, "found by the new controller")]
    assert [(r[0], r[4]) for r in found["broker_failed"].first] == [(5, 3), (8, 1)]
    assert [(r[0], r[4]) for r in found["broker_shutdown"].first] == [(6, 2)]
    later = {c.change: c for c in cluster_changes(timeline, 6)}
    assert later["controller_failover"].count == 1 and later["broker_shutdown"].count == 0


def test_the_digest_keeps_its_order_and_drops_empty_changes() -> None:
    found = in_order([Change("broker_failed", 1, ()), Change("topic_deleted", 0, ()),
                      Change("topic_created", 2, ())])
    assert [c.change for c in found] == ["topic_created", "broker_failed"]
