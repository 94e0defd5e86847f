"""What the roll-ups carry from run to run (`jobs.engine.rollup_carry`): only the incidents
still open, with the elections that may still count for them; only the reassignments
still open; per partition only the last write that may set its leader. The carry reads
back as written, and an incident's roll-up over the carry and one run's windows is the
roll-up over every run's windows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from jobs.engine.rollup_carry import (
    LEADER_SCHEMA,
    Carry,
    last_leader_writes,
    load_carry,
    open_incidents,
    open_reassignments,
    remove_carries,
    save_carry,
)
from schemas import event_types as ET
from statemachine.incidents import Election, incidents, of_run
from statemachine.rows import PartitionWindowRow

S = 1_000_000


def window(topic: str, start: int, end: int | None, kind: str = "offline",
           partition: int = 0) -> PartitionWindowRow:
    return PartitionWindowRow(topic, partition, kind, start, start * S, end,
                              None if end is None else end * S,
                              None if end is None else float(end - start),
                              ET.BROKER_FAILURE, 1, None if end is None else ET.BROKER_STARTUP,
                              None if end is None else 1, start)


# Night 1: incident 10 (a and b offline; b comes back at 12), incident 5 (c, over by 8),
# incident 15 (d, still open). An unclean election of a at 11, one of c at 6.
NIGHT1 = [window("a", 10, None), window("b", 10, 12), window("c", 5, 8), window("d", 15, None),
          window("a", 10, None, kind="under_replicated")]
ELECTIONS1 = [Election(11, "a", 0), Election(6, "c", 0), Election(3, "a", 0)]
# Night 2: a's window closes at 20 (every run lists the windows still open); d stays open.
NIGHT2 = [window("a", 10, 20), window("d", 15, None)]
ELECTIONS2 = [Election(18, "d", 0)]


def test_only_the_incidents_still_open_are_carried() -> None:
    windows, elections = open_incidents([("east", w) for w in NIGHT1],
                                        [("east", e) for e in ELECTIONS1])
    assert sorted((w.topic, w.start_seq, w.end_seq) for _, w in windows) == [
        ("a", 10, None), ("b", 10, 12), ("d", 15, None)]  # 10 and 15 are open; 5 is over
    # a's election at 11 may still count for incident 10; the one at 3 came before it.
    assert elections == [("east", Election(11, "a", 0))]


def test_the_roll_up_over_the_carry_is_the_roll_up_over_every_run() -> None:
    windows, elections = open_incidents([("east", w) for w in NIGHT1],
                                        [("east", e) for e in ELECTIONS1])
    carried = of_run([w for _, w in windows] + NIGHT2, NIGHT2,
                     [e for _, e in elections] + ELECTIONS2, 30 * S)
    every = of_run(NIGHT1 + NIGHT2, NIGHT2, ELECTIONS1 + ELECTIONS2, 30 * S)
    assert carried == every
    assert [(i.incident_id, i.end_seq, i.unclean_elections) for i in every] == [
        (10, 20, 1), (15, None, 1)]
    # What the carry left out is the incident that ended in night 1.
    assert [i.incident_id for i in incidents(NIGHT1 + NIGHT2)] == [5, 10, 15]


def test_only_the_reassignments_still_open_are_carried() -> None:
    rows = [("east", "t", 0, 4, 4 * S, None), ("east", "t", 0, 4, 4 * S, 9),  # open, closed
            ("east", "t", 1, 6, 6 * S, None), ("west", "t", 0, 4, 4 * S, None)]
    assert open_reassignments(rows) == [("east", "t", 1, 6, 6 * S), ("west", "t", 0, 4, 4 * S)]


def _writes(rows: list[tuple[str, str, int, int, int, int]]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(LEADER_SCHEMA.names, r, strict=True)) for r in rows],
                                LEADER_SCHEMA)


def test_the_last_write_of_each_partition_is_carried() -> None:
    earlier = _writes([("east", "t", 0, 5, 0, 1), ("east", "t", 1, 5, 0, 2)])
    night = _writes([("east", "t", 0, 9, 1, 3), ("east", "t", 0, 9, 0, 2),
                     ("west", "t", 0, 2, 0, 7)])
    last = last_leader_writes([earlier, night]).to_pylist()
    assert [(r["cluster"], r["partition"], r["seq"], r["write"], r["leader"]) for r in last] == [
        ("east", 0, 9, 1, 3), ("east", 1, 5, 0, 2), ("west", 0, 2, 0, 7)]


def test_a_carry_reads_back_as_written_and_only_the_last_is_kept(tmp_path: Path) -> None:
    windows, elections = open_incidents([("east", w) for w in NIGHT1],
                                        [("east", e) for e in ELECTIONS1])
    carry = Carry(windows, elections, [("east", "t", 1, 6, 6 * S)],
                  _writes([("east", "t", 0, 9, 1, 3)]))
    save_carry(str(tmp_path), "n1", carry)
    save_carry(str(tmp_path), "n2", Carry())
    back = load_carry(str(tmp_path), "n1")
    assert back is not None
    assert (back.windows, back.elections, back.reassigning) == (
        carry.windows, carry.elections, carry.reassigning)
    assert back.leaders.equals(carry.leaders)
    assert load_carry(str(tmp_path), "n0") is None
    remove_carries(str(tmp_path), "n2")
    assert load_carry(str(tmp_path), "n1") is None
    empty = load_carry(str(tmp_path), "n2")
    assert empty is not None and empty.windows == [] and empty.leaders.num_rows == 0
