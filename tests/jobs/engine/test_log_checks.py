"""The log's facts read on the driver (`jobs.engine.log_checks`): pure pyarrow, no Spark."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa

from jobs.engine.log_checks import SeqFacts, facts_from_json, facts_to_json, log_facts, narrow
from schemas import event_types as ET
from tests.helpers.event_log import ARROW_EVENT_SCHEMA, ev

MINUTE_US = 60_000_000


def table(*rows: dict[str, Any]) -> pa.Table:
    return pa.Table.from_pylist(list(rows), schema=ARROW_EVENT_SCHEMA)


def facts(t: pa.Table, seen: int | None = None, applied: int | None = None) -> SeqFacts:
    found = log_facts(narrow(t), {} if seen is None else {"default": seen},
                      {} if applied is None else {"default": applied}, 5 * MINUTE_US)
    return found["default"]


def isr(seq: int, partition: int, members: list[int], **kw: Any) -> dict[str, Any]:
    return ev(seq, ET.ISR_CHANGED, topic="t", partition=partition, isr=members, **kw)


def test_gaps_inside_the_run_and_since_the_last_run_are_ranges() -> None:
    f = facts(table(isr(11, 0, [1]), isr(12, 0, [1]), isr(15, 0, [1]), isr(20, 0, [1])),
              seen=5, applied=5)
    assert f.gaps == ((6, 10), (13, 14), (16, 19))
    assert (f.seq_min, f.seq_max, f.missing, f.previous_seq_max) == (11, 20, 11, 5)


def test_late_rows_fill_no_gap_and_are_named() -> None:
    f = facts(table(isr(3, 0, [1]), isr(4, 0, [1])), seen=10, applied=10)
    assert (f.late, f.gaps) == ((3, 4), ())


def test_rows_without_a_usable_seq_are_left_to_the_row_validation() -> None:
    f = facts(table(isr(1, 0, [1]), ev(None, ET.ISR_CHANGED), ev(-3, ET.ISR_CHANGED),
                    isr(2, 0, [1])))
    assert (f.seq_min, f.gaps) == (1, ())


def test_one_controller_event_may_span_rows_but_not_two_events() -> None:
    same_event = table(ev(1, ET.BROKER_STARTUP, broker_id=1), ev(1, ET.BROKER_FAILURE, broker_id=2),
                       isr(2, 0, [1]), isr(2, 1, [1]),  # one AlterPartition, two partitions
                       isr(3, 0, [1]), {**isr(3, 0, [1]), "source": "again"})  # re-exported
    assert facts(same_event).conflicting == ()
    two_events = table(isr(4, 0, [1, 2]), isr(4, 0, [2]),
                       ev(5, ET.BROKER_FAILURE, broker_id=3), ev(5, ET.TOPIC_DELETION_REQUESTED,
                                                                topic="t"))
    assert facts(two_events).conflicting == (4, 5)


def test_time_running_backwards_beyond_the_tolerance_is_found() -> None:
    base = datetime(2026, 11, 20, tzinfo=UTC)
    rows = [isr(s, 0, [1]) for s in range(1, 5)]
    for row, minutes in zip(rows, (0, 10, 7, 30), strict=True):  # 7 is within 5 min of 10
        row["ts"] = base + timedelta(minutes=minutes)
    rows.append({**isr(5, 0, [1]), "ts": base + timedelta(minutes=1)})
    f = facts(table(*rows))
    assert (f.ts_backwards, f.ts_backwards_count) == ((5,), 1)


def test_quarantined_rows_do_not_run_time_backwards() -> None:
    """A row quarantined for an absurd time (1970, or years ahead) or as one of two events
    at one seq is not applied: its time neither regresses nor moves time on."""
    base = datetime(2026, 11, 20, tzinfo=UTC)
    rows = [{**isr(s, 0, [1]), "ts": base + timedelta(minutes=s)} for s in range(1, 7)]
    rows[1]["ts"] = datetime(1970, 1, 1, tzinfo=UTC)  # seq 2: before ts_min
    rows[3]["ts"] = datetime(2099, 1, 1, tzinfo=UTC)  # seq 4: after ts_max
    rows.append({**isr(5, 0, [2]), "ts": base - timedelta(hours=1)})  # seq 5: a conflict
    ts_range = (int(datetime(2011, 1, 1, tzinfo=UTC).timestamp() * 1_000_000),
                int((base + timedelta(days=1)).timestamp() * 1_000_000))
    judged = log_facts(narrow(table(*rows)), {}, {}, 5 * MINUTE_US, ts_range)["default"]
    assert (judged.ts_backwards, judged.ts_backwards_count, judged.conflicting) == \
        ((), 0, (5,))
    # Without the time rules, seq 2 (1970) and seq 6 (after 2099) run time backwards; the
    # conflicting seq 5 is left out all the same.
    assert facts(table(*rows)).ts_backwards == (2, 6)


def test_facts_survive_the_history_json() -> None:
    f = facts(table(isr(1, 0, [1]), isr(4, 0, [1]), isr(4, 0, [2])), seen=0, applied=0)
    assert facts_from_json(facts_to_json({"default": f})) == {"default": f}


def test_requests_count_distinct_on_time_rows_and_survive_the_history() -> None:
    t = table(
        ev(3, ET.PREFERRED_LEADER_ELECTION, topic="t", partition=0),  # late: applied before
        ev(7, ET.PREFERRED_LEADER_ELECTION, topic="t", partition=1),
        ev(7, ET.PREFERRED_LEADER_ELECTION, topic="t", partition=1),  # an exact duplicate
        ev(8, ET.TOPIC_CONFIG_CHANGED, topic="t", unclean_leader_election=False),
        isr(9, 0, [1]),
    )
    found = facts(t, seen=6, applied=5)
    assert [(change, count, [r[0] for r in first]) for change, count, first in found.requested] \
        == [("preferred_election", 1, [7]), ("topic_config_changed", 1, [8])]
    assert found.requested[1][2][0][5] == "unclean.leader.election.enable=false"
    assert facts_from_json(facts_to_json({"c": found}))["c"] == found
