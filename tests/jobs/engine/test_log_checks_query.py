"""The log checks as Spark aggregations (`jobs.engine.log_checks_query`) find what the pure
reading of the same rows finds (`jobs.engine.log_checks.log_facts`): every finding case of
tests/jobs/engine/test_log_checks.py, each in a cluster of its own in one log, with blocks
of four seqs (gaps, late rows and time running backwards across blocks) and of the default
size (one block)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pytest

from jobs.engine import log_checks_query as Q
from jobs.engine.event_log import read_events
from jobs.engine.log_checks import log_facts, narrow
from schemas import event_types as ET
from tests.helpers.event_log import ARROW_EVENT_SCHEMA, T0, ev, write_log

MINUTE_US = 60_000_000
TS_RANGE = (int(datetime(2011, 1, 1, tzinfo=UTC).timestamp() * 1_000_000),
            int((T0 + timedelta(days=1)).timestamp() * 1_000_000))


def isr(seq: int, partition: int, members: list[int | None] | None, **kw: Any) -> dict[str, Any]:
    return ev(seq, ET.ISR_CHANGED, topic="t", partition=partition, isr=members, **kw)


def at(row: dict[str, Any], minutes: float) -> dict[str, Any]:
    return {**row, "ts": T0 + timedelta(minutes=minutes)}


def in_cluster(cluster: str | None, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**r, "cluster": cluster} for r in rows]


def across_blocks() -> list[dict[str, Any]]:
    """Seqs 1..22 in blocks of four: a leading seq without an applied time, holes across
    block boundaries, conflicts in two blocks, time running backwards inside a block and
    against an earlier block only."""
    rows = [at(isr(s, 0, [1]), s) for s in (2, 3, 5, 6, 7, 9, 12, 13, 14, 15, 17, 20, 21, 22)]
    rows.append({**isr(1, 0, [1]), "ts": datetime(1970, 1, 1, tzinfo=UTC)})  # implausible
    rows.append(at(isr(6, 0, [2]), 6))  # seq 6: two contents
    rows.append(at(isr(14, 1, [1]), -30))  # seq 14: back against seq 13 (same block)
    rows.append(at(isr(17, 1, [1]), 1))  # seq 17: back against block 3's seqs only
    rows.append(at(ev(21, ET.BROKER_FAILURE, broker_id=1), 21))  # seq 21: two families
    rows += [at(isr(s, 2, [1]), 2) for s in (19, 23)]  # back against earlier blocks
    return rows


CASES: dict[str | None, tuple[list[dict[str, Any]], int | None, int | None]] = {
    "gaps": ([isr(11, 0, [1]), isr(12, 0, [1]), isr(15, 0, [1]), isr(20, 0, [1])], 5, 5),
    "late": ([isr(3, 0, [1]), isr(4, 0, [1]), isr(9, 0, [1])], 10, 8),
    "no-seq": ([isr(1, 0, [1]), ev(None, ET.ISR_CHANGED), ev(-3, ET.ISR_CHANGED),
                isr(2, 0, [1])], None, None),
    "one-event": ([ev(1, ET.BROKER_STARTUP, broker_id=1), ev(1, ET.BROKER_FAILURE, broker_id=2),
                   isr(2, 0, [1]), isr(2, 1, [1]), isr(3, 0, [1]),
                   {**isr(3, 0, [1]), "source": "again"}], None, None),
    "two-events": ([isr(4, 0, [1, 2]), isr(4, 0, [2]), isr(4, 1, [None, 2]), isr(4, 1, None),
                    ev(5, ET.BROKER_FAILURE, broker_id=3),
                    ev(5, ET.TOPIC_DELETION_REQUESTED, topic="t")], None, None),
    "backwards": ([at(isr(s, 0, [1]), m) for s, m in ((1, 0), (2, 10), (3, 7), (4, 30), (5, 1))],
                  None, None),
    "quarantined": ([at(isr(1, 0, [1]), 1), {**isr(2, 0, [1]), "ts": datetime(1970, 1, 1,
                                                                            tzinfo=UTC)},
                     at(isr(3, 0, [1]), 3), {**isr(4, 0, [1]), "ts": datetime(2099, 1, 1,
                                                                            tzinfo=UTC)},
                     at(isr(5, 0, [1]), 5), at(isr(5, 0, [2]), -60), at(isr(6, 0, [1]), 6)],
                    None, None),
    "requests": ([ev(3, ET.PREFERRED_LEADER_ELECTION, topic="t", partition=0),
                  ev(7, ET.PREFERRED_LEADER_ELECTION, topic="t", partition=1),
                  ev(7, ET.PREFERRED_LEADER_ELECTION, topic="t", partition=1),
                  *[ev(s, ET.PREFERRED_LEADER_ELECTION, topic=f"t{s}", partition=0)
                    for s in range(10, 18)],
                  ev(8, ET.TOPIC_CONFIG_CHANGED, topic="t", unclean_leader_election=None),
                  ev(8, ET.TOPIC_CONFIG_CHANGED, topic="t", unclean_leader_election=False),
                  ev(9, ET.TOPIC_DELETION_REQUESTED, topic="u"),
                  isr(9, 0, [1])], 6, 5),
    "across": (across_blocks(), None, None),
    None: ([isr(1, 0, [1]), isr(3, 0, [1])], 0, 0),  # the default cluster
}


@pytest.fixture(scope="module")
def log(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, pa.Table]:
    rows = [r for c, (rs, _, _) in CASES.items() for r in in_cluster(c, rs)]
    directory = tmp_path_factory.mktemp("checks") / "events"
    write_log(directory, rows[: len(rows) // 2], "a")  # two files: `first` reads in order
    write_log(directory, rows[len(rows) // 2:], "b")
    return read_events(spark, str(directory)), pa.Table.from_pylist(rows,
                                                                    schema=ARROW_EVENT_SCHEMA)


def bounds() -> tuple[dict[str, int], dict[str, int]]:
    seen = {c or ET.DEFAULT_CLUSTER: s for c, (_, s, _) in CASES.items() if s is not None}
    applied = {c or ET.DEFAULT_CLUSTER: a for c, (_, _, a) in CASES.items() if a is not None}
    return seen, applied


@pytest.mark.parametrize("block_bits", [2, Q.BLOCK_BITS])
def test_spark_checks_find_what_the_pure_checks_find(log: tuple[Any, pa.Table],
                                                     block_bits: int) -> None:
    events, table = log
    seen, applied = bounds()
    expected = log_facts(narrow(table), seen, applied, 5 * MINUTE_US, TS_RANGE)
    found = Q.log_facts(events, seen, applied, 5 * MINUTE_US, TS_RANGE, block_bits)
    assert sorted(found) == sorted(expected) == sorted(c or ET.DEFAULT_CLUSTER for c in CASES)
    for cluster in expected:
        assert found[cluster] == expected[cluster], cluster
    across = found["across"]
    assert (across.gaps, across.conflicting) == (((4, 4), (8, 8), (10, 11), (16, 16),
                                                  (18, 18)), (6, 21))
    assert (across.ts_backwards, across.ts_backwards_count) == ((14, 17, 19, 23), 4)
    assert found["requests"].requested[0][1] == 9  # every on-time election, five listed
    assert found["requests"].requested[1][2][0][5] == "unclean.leader.election.enable=false"


def test_time_running_back_across_blocks_is_judged_against_every_earlier_block() -> None:
    blocks = [{"cluster": "a", "block": 0, "applied_lo": 0, "applied_hi": 100},
              {"cluster": "a", "block": 1, "applied_lo": 95, "applied_hi": 120},
              {"cluster": "a", "block": 2, "applied_lo": 50, "applied_hi": 60},
              {"cluster": "b", "block": 3, "applied_lo": 10, "applied_hi": None},
              {"cluster": "b", "block": 4, "applied_lo": None, "applied_hi": 30}]
    assert Q.recheck(blocks, 10) == {"a\x002": 120}
