"""What an unclean election lost (`jobs.engine.data_loss`), pure: hand-made histories in both
modes (tests/fixtures/dataloss, README there) read by the pure ingest, the ZooKeeper one
replayed by the pure core, and the rules on small made-up line sets.

The histories: topic orders, partition 0 on brokers 1 (leader) and 2. Broker 2 falls out of
the ISR at offset 1000 (broker 1's `Shrinking ISR ... endOffset: 1000` line); broker 1 takes
100 more messages and dies with 1100. The partition is offline until unclean leader
election is enabled for the topic: broker 2 is elected at leader epoch 2 with log end offset
1000 (its high watermark 980). Broker 1 comes back with 1100 and truncates to 1000.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from jobs.engine.data_loss import (
    BOUNDED,
    EXACT,
    UNKNOWN,
    Election,
    Truncation,
    Window,
    Write,
    compute,
)
from jobs.ingest.logparse import pipeline
from jobs.ingest.logparse.offsets.rows import EvidenceRow
from schemas import event_types as ET
from statemachine.cluster import build_timeline
from statemachine.context import ReplayConfig
from statemachine.replay import replay
from tests.helpers import FIXTURES

ZK = FIXTURES / "dataloss" / "zk-ak3.7"
KRAFT = FIXTURES / "dataloss" / "kraft-ak3.9"
T_ELECTION = 1772446320_000000  # 2026-03-02 10:12:00 UTC


def _zk_replay(folder: Path) -> tuple[Election, list[Write], list[Window], list[EvidenceRow]]:
    r = pipeline.ingest([str(folder)])
    assert r.unparsed == []
    tl = build_timeline([e for e in r.events if e.event_type in ET.CLUSTER_EVENTS])
    _, out = replay(None, [e for e in r.events if e.event_type not in ET.CLUSTER_EVENTS], tl,
                    ReplayConfig(kafka_version="3.7", scala_binary="2.13"))
    [f] = [f for f in out.findings if f.kind == "unclean_leader_election"]
    writes = [Write(w.seq, w.ts, w.leader, w.leader_epoch, w.isr)
              for w in out.partition_state_writes]
    windows = [Window(w.kind, w.start_seq, w.end_seq, w.incident_id)
               for w in out.partition_windows]
    assert f.ts is not None and f.seq is not None
    return (Election(f.seq, f.ts, "orders", 0, f.broker_id, f.detail), writes, windows,
            r.evidence)


def _without(folder: Path, tmp: Path, word: str) -> Path:
    """The history with every line holding `word` removed."""
    copy = tmp / folder.name
    shutil.copytree(folder, copy)
    for p in copy.rglob("*.log"):
        p.write_text("".join(x for x in p.read_text().splitlines(keepends=True) if word not in x))
    return copy


def test_zookeeper_history_loses_exactly_100_messages_with_the_lines_that_prove_it() -> None:
    e, writes, windows, evidence = _zk_replay(ZK)
    assert (e.seq, e.ts, e.broker_id) == (5, T_ELECTION, 2)
    row = compute(e, writes, evidence, windows)
    assert (row.result, row.messages_lost, row.messages_lost_at_least,
            row.messages_lost_at_most) == (EXACT, 100, None, None)
    assert (row.incident_id, row.new_leader, row.leader_epoch, row.new_leader_end_offset,
            row.new_leader_high_watermark) == (4, 2, 2, 1000, 980)
    assert (row.old_leader, row.old_isr, row.old_leader_end_offset,
            row.old_leader_high_watermark, row.old_leader_final_end_offset) == (
        1, (1,), 1000, 1000, 1100)
    assert row.truncations == (Truncation(1, 1000, 1100, 100),)
    assert [(p.role, p.broker_id, p.source) for p in row.evidence] == [
        ("election", 2, "broker-2/state-change.log:3"),
        ("new_leader_start", 2, "broker-2/state-change.log:4"),
        ("old_leader_before", 1, "broker-1/server.log:2"),
        ("returning_replica", 1, "broker-1/state-change.log:2"),
        ("returning_replica", 1, "broker-1/server.log:7"),
        ("returning_replica", 1, "broker-1/server.log:8"),
    ]
    assert row.evidence[-1].text.endswith(
        "[UnifiedLog partition=orders-0, dir=/var/lib/kafka/data] Truncating to offset 1000 "
        "(kafka.log.UnifiedLog)")
    assert row.detail == (
        "100 messages lost on orders-0: broker 1 truncated to 1000 from log end offset 1100 "
        "(broker 2 elected at leader epoch 2 with log end offset 1000 and high watermark 980; "
        "old leader broker 1)")


def test_zookeeper_history_without_the_truncation_lines_gives_the_bounds(tmp_path: Path) -> None:
    e, writes, windows, evidence = _zk_replay(_without(ZK, tmp_path, "Truncating"))
    row = compute(e, writes, evidence, windows)
    # At least 1100 - 1000 (what broker 1 came back with past broker 2's start), at most
    # 1100 - 980 (broker 2's high watermark: below it both logs hold the same messages).
    assert (row.result, row.messages_lost, row.messages_lost_at_least,
            row.messages_lost_at_most) == (BOUNDED, None, 100, 120)
    assert row.truncations == (Truncation(1, None, 1100, None),)
    assert "no truncation line of the old leader" in row.detail


def test_without_the_returning_broker_the_last_known_offsets_bound_it_from_below(
        tmp_path: Path) -> None:
    """Only the lines before the election: broker 1's ISR shrink (end offset 1000 then)
    and broker 2's start at 1000 prove at least 0 lost, nothing more: a bound, not a 0."""
    e, writes, windows, evidence = _zk_replay(ZK)
    before = [r for r in evidence if r.ts < T_ELECTION or r.broker_id == 2]
    row = compute(e, writes, before, windows)
    assert (row.result, row.messages_lost, row.messages_lost_at_least,
            row.messages_lost_at_most) == (BOUNDED, None, 0, None)
    assert (row.old_leader_end_offset, row.old_leader_final_end_offset) == (1000, None)


def test_a_partition_without_offset_lines_is_unknown_never_zero() -> None:
    e, writes, windows, _ = _zk_replay(ZK)
    row = compute(e, writes, [], windows)
    assert (row.result, row.messages_lost, row.messages_lost_at_least,
            row.messages_lost_at_most) == (UNKNOWN, None, None, None)
    assert (row.new_leader, row.old_leader, row.leader_epoch) == (2, 1, 2)
    assert row.detail.startswith("unknown for orders-0: no offset line of this partition")


def test_kraft_history_lines_prove_100_from_the_metadata_log_writes() -> None:
    """The KRaft variant's lines with the leadership `metadata_writes` holds for it (the
    records' own fields: a PartitionChangeRecord's None or -2 leave a field unchanged; the
    epochs the image derives). The controller's UNCLEAN line is part of the proof."""
    r = pipeline.ingest([str(KRAFT)])
    assert r.unparsed == []
    writes = [Write(6, 0, 1, 0, (1, 2)), Write(7, 0, -2, 0, (1,)), Write(9, 0, -1, 1, None),
              Write(11, 0, 2, 2, (2,)), Write(12, 0, -2, 2, None), Write(15, 0, -2, 2, (2, 1))]
    e = Election(11, T_ELECTION + 100_000, "orders", 0, None)
    rows = [x for x in r.evidence if (x.topic, x.partition) == ("orders", 0)]
    row = compute(e, writes, rows, [Window("offline", 8, 11, 8)])
    assert (row.result, row.messages_lost, row.incident_id) == (EXACT, 100, 8)
    assert (row.new_leader, row.leader_epoch, row.old_leader, row.old_isr) == (2, 2, 1, (1,))
    assert ("election", None, "controller-3000/controller.log:5") in [
        (p.role, p.broker_id, p.source) for p in row.evidence]


def _row(kind: str, broker: int | None, ts: int, line: int, **kw: object) -> EvidenceRow:
    values = {f: None for f in EvidenceRow._fields}
    values.update(file="b.log", line=line, source=f"b.log:{line}", ts=ts, broker_id=broker,
                  broker_from="line", kind=kind, topic="t", partition=0, text=f"line {line}")
    values.update(kw)
    return EvidenceRow(**values)  # type: ignore[arg-type]


E = Election(10, 1000, "t", 0, 3)
HISTORY = [Write(1, 0, 1, 0, (1, 2, 3)), Write(5, 500, 1, 0, (1, 2)), Write(10, 1000, 3, 1, (3,))]


def test_two_returning_replicas_lose_the_union_of_their_ranges() -> None:
    """Broker 1 (old leader) held up to 1100, broker 2 up to 1050; both truncate to 1000:
    100 offsets are gone (broker 2's 50 are among them)."""
    rows = [_row("leader_start", 3, 1001, 1, leader_epoch=1, offset=1000, high_watermark=990),
            _row("follower_start", 1, 2000, 2, leader_epoch=1, offset=1100, log_end_offset=1100),
            _row("truncate", 1, 2001, 3, offset=1000),
            _row("follower_start", 2, 2000, 4, leader_epoch=1, offset=1050, log_end_offset=1050),
            _row("truncate", 2, 2001, 5, offset=1000)]
    row = compute(E, HISTORY, rows)
    assert (row.result, row.messages_lost) == (EXACT, 100)
    assert row.truncations == (Truncation(1, 1000, 1100, 100), Truncation(2, 1000, 1050, 50))


def test_a_truncation_that_removed_nothing_proves_zero() -> None:
    rows = [_row("leader_start", 3, 1001, 1, leader_epoch=1, offset=1000),
            _row("truncate_no_effect", 1, 2001, 2, offset=1000, log_end_offset=1000)]
    row = compute(E, HISTORY, rows)
    assert (row.result, row.messages_lost) == (EXACT, 0)
    assert row.truncations == (Truncation(1, 1000, 1000, 0),)


def test_a_1_0_history_with_the_log_load_and_the_fetch_reset() -> None:
    """Before 2.6 no follower-start line: the end offset the old leader came back with is
    its log load; 1.0's fetcher reset names both offsets itself."""
    rows = [_row("leader_start", 3, 1001, 1, leader_epoch=1, offset=1000),
            _row("log_loaded", 1, 1900, 2, log_end_offset=1100),
            _row("truncate", 1, 2001, 3, offset=1000, log_end_offset=1100)]
    row = compute(E, HISTORY, rows)
    assert (row.result, row.messages_lost) == (EXACT, 100)
    assert [p.source for p in row.evidence if p.role == "returning_replica"] == [
        "b.log:2", "b.log:3"]


def test_a_line_before_the_election_is_not_a_return() -> None:
    """Broker 1's truncation an hour before the election (an earlier follower episode)
    says nothing of this election's loss."""
    rows = [_row("truncate", 1, 10, 1, offset=400),
            _row("leader_start", 3, 1001, 2, leader_epoch=1, offset=1000, high_watermark=990),
            _row("isr_shrink", 1, 900, 3, log_end_offset=1040, high_watermark=1000)]
    row = compute(E, HISTORY, rows)
    assert (row.result, row.messages_lost_at_least, row.messages_lost_at_most) == (
        BOUNDED, 40, None)
    assert row.truncations == ()


def test_without_a_history_the_old_leader_is_the_last_to_start_leading() -> None:
    rows = [_row("leader_start", 1, 10, 1, leader_epoch=0, offset=0),
            _row("leader_start", 3, 1001, 2, leader_epoch=1, offset=1000),
            _row("follower_start", 1, 2000, 3, leader_epoch=1, offset=1100, log_end_offset=1100),
            _row("truncate", 1, 2001, 4, offset=1000)]
    row = compute(E, [], rows)
    assert (row.old_leader, row.new_leader, row.leader_epoch) == (1, 3, None)
    assert (row.result, row.messages_lost) == (EXACT, 100)


def test_before_2_6_a_later_restart_ends_the_return() -> None:
    """No follower-start line: the old leader's return ends at its next restart; a
    truncation after that belongs to another story."""
    rows = [_row("leader_start", 3, 1001, 1, leader_epoch=1, offset=1000),
            _row("log_loaded", 1, 1900, 2, log_end_offset=1100),
            _row("truncate", 1, 2001, 3, offset=1000),
            _row("log_loaded", 1, 9000, 4, log_end_offset=1500),
            _row("truncate", 1, 9001, 5, offset=200)]
    row = compute(E, HISTORY, rows)
    assert (row.result, row.messages_lost) == (EXACT, 100)
    assert row.truncations == (Truncation(1, 1000, 1100, 100),)
