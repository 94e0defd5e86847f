"""`statemachine.scala_order` against orders derived by hand from the Scala library source
and against orders the real scala-library jars produced (data/scala_orders.json, written by
data/make_scala_orders.py), so that no JVM is needed here.

Derivations use, for each key k (an Int, so `k.##` is k):

* the trie hash `improve(k)` (2.13 `Hashing.improve`, 2.12 `HashMap.improve`) and its 5-bit
  chunks, lowest first (`(hash >>> 5 * level) & 0x1f`);
* for 2.11/2.12's `mutable.HashMap`, the bucket of a 16-bucket table:
  `rotateRight(byteswap32(k), 4) >>> 28`, buckets visited from 15 down to 0, the key
  inserted last first within a bucket.

| k | improve(k) | chunks 0, 1 | byteswap32(k) | rotated | bucket |
|---|---|---|---|---|---|
| 0 | ff83ef00 | 0, 24 | 00000000 | 00000000 | 0 |
| 1 | ff83cee7 | 7, 23 | 903abf86 | 6903abf8 | 6 |
| 2 | ff83acce | 14, 6 | 5eccb20c | c5eccb20 | 12 |
| 5 | ff834681 | 1, 20 | ff4e666b | bff4e666 | 11 |
| 10 | ff82bc02 | 2, 0 | fe9cccd6 | 6fe9cccd | 6 |
| 20 | ff814905 | 5, 8 | | | |
| 29 | ff8037e5 | 5, 31 | | | |
| 100 | fff6b3df | 31, 30 | 61d77729 | 961d7772 | 9 |
| 101 | fff69140 | 0, 10 | ba9c69af | fba9c69a | 15 |
| 102 | fff67748 | 8, 26 | b198d202 | 2b198d20 | 2 |
| 1001 | ff8740a3 | 3, 5 | 0f42c1ee | e0f42c1e | 14 |
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from statemachine.context import ReplayConfig
from statemachine.scala_order import (
    byteswap32,
    chunks,
    group_by_order,
    immutable_hash_order,
    improve,
    small_mutable_hash_map_order,
    table_index,
    to_set_order,
)
from tests.helpers.core import Log, final, replay_log

DATA = Path(__file__).parent / "data" / "scala_orders.json"


def test_improve_of_1_step_by_step() -> None:
    """improve(1): h = 1 + ~(1 << 9) = 0xfffffe00; h ^= h >>> 14 -> 0xfffc01ff;
    h += h << 4 -> 0xffbc21ef; h ^ (h >>> 10) = 0xff83cee7. Chunks: 0xe7 & 0x1f = 7,
    (0xff83cee7 >>> 5) & 0x1f = 23."""
    assert improve(1) == 0xFF83CEE7
    assert chunks(1)[:2] == (7, 23)


def test_bucket_of_1_step_by_step() -> None:
    """byteswap32(1): 1 * 0x9e3775cd = 0x9e3775cd; reverseBytes -> 0xcd75379e;
    * 0x9e3775cd (mod 2^32) = 0x903abf86. rotateRight(., 4) = 0x6903abf8; a 16-bucket table
    takes the top 4 bits (>>> numberOfLeadingZeros(15) = 28): bucket 6."""
    assert byteswap32(1) == 0x903ABF86
    assert table_index(1, 16) == 6
    assert table_index(1, 32) == 0x6903ABF8 >> 27


def test_hashes_of_the_table() -> None:
    assert [improve(k) for k in (0, 2, 5, 100, 101, 102, 1001)] == [
        0xFF83EF00, 0xFF83ACCE, 0xFF834681, 0xFFF6B3DF, 0xFFF69140, 0xFFF67748, 0xFF8740A3]
    assert [improve(k) for k in (20, 29)] == [0xFF814905, 0xFF8037E5]
    assert [chunks(k)[:2] for k in (0, 1, 2, 5, 10, 20, 29)] == [
        (0, 24), (7, 23), (14, 6), (1, 20), (2, 0), (5, 8), (5, 31)]
    assert [table_index(k, 16) for k in (0, 1, 2, 5, 10, 100, 101, 102, 1001)] == [
        0, 6, 12, 11, 6, 9, 15, 2, 14]


def test_1_5() -> None:
    """2.13: chunk0 of 5 is 1, of 1 is 7: both payload of the root, 5 first.
    2.12: a Map2 copied from the mutable map: bucket 11 (5) before bucket 6 (1).
    Both builds visit 5 before 1, whatever order the keys came in."""
    for binary in ("2.13", "2.12", "2.11"):
        assert group_by_order((1, 5), binary) == (5, 1)
        assert group_by_order((5, 1), binary) == (5, 1)


def test_0_1_2() -> None:
    """2.13: chunks 0, 7, 14, all payload: 0, 1, 2. 2.12: buckets 0, 6, 12 visited from
    the top: 2, 1, 0."""
    assert group_by_order((0, 1, 2), "2.13") == (0, 1, 2)
    assert group_by_order((0, 1, 2), "2.12") == (2, 1, 0)


def test_1_to_10() -> None:
    """Ten keys: a hash trie in both builds. Chunk0: 1:7 2:14 3:20 4:29 5:1 6:8 7:18 8:27
    9:11 10:2, all distinct, so both orders are the keys by chunk0."""
    expected = (5, 10, 1, 6, 9, 2, 7, 3, 8, 4)
    assert group_by_order(tuple(range(1, 11)), "2.13") == expected
    assert group_by_order(tuple(range(1, 11)), "2.12") == expected


def test_100_101_102_1001() -> None:
    """2.13: chunk0 31, 0, 8, 3 -> 101, 1001, 102, 100. 2.12 (a Map4): buckets 9, 15, 2, 14
    -> 101 (15), 1001 (14), 100 (9), 102 (2)."""
    keys = (100, 101, 102, 1001)
    assert group_by_order(keys, "2.13") == (101, 1001, 102, 100)
    assert group_by_order(keys, "2.12") == (101, 1001, 100, 102)


def test_champ_visits_payload_before_sub_nodes() -> None:
    """{0, 1, 2, 20, 29}: 20 and 29 share chunk0 5, so 2.13 puts them in a sub-node visited
    after the payload 0 (0), 1 (7), 2 (14); inside it chunk1 8 (20) before 31 (29).
    2.12's HashTrieMap keeps the sub-trie at its chunk's place: 0, 20, 29, 1, 2."""
    keys = (0, 1, 2, 20, 29)
    assert group_by_order(keys, "2.13") == (0, 1, 2, 20, 29)
    assert group_by_order(keys, "2.12") == (0, 20, 29, 1, 2)


def test_champ_order_depends_on_the_other_keys() -> None:
    """Why the replay orders a broker change's call by all its failed brokers: {1, 20} is
    visited 20 (chunk0 5), 1 (chunk0 7); add 29 (chunk0 5, like 20) and 20 moves into a
    sub-node visited after the payload 1, so 1 now comes before 20."""
    assert group_by_order((1, 20), "2.13") == (20, 1)
    assert group_by_order((1, 20, 29), "2.13") == (1, 20, 29)


def test_shared_bucket_keeps_the_later_key_first_in_2_12() -> None:
    """1 and 10 share bucket 6: the chain holds the key inserted last first, so up to four
    keys the 2.12 order depends on the order of first appearance; 2.13 never does."""
    assert group_by_order((1, 10), "2.12") == (10, 1)
    assert group_by_order((10, 1), "2.12") == (1, 10)
    assert group_by_order((1, 10), "2.13") == group_by_order((10, 1), "2.13") == (10, 1)
    assert small_mutable_hash_map_order((1, 10, 1)) == (10, 1)
    with pytest.raises(ValueError):
        small_mutable_hash_map_order((1, 2, 3, 4, 5))


def test_small_sets_keep_insertion_order() -> None:
    assert to_set_order((5, 1, 5), "2.13") == (5, 1)
    assert to_set_order((1, 5), "2.12") == (1, 5)
    assert to_set_order(tuple(range(1, 11)), "2.13") == immutable_hash_order(range(1, 11), "2.13")


def test_unknown_binary_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown Scala binary version '3'"):
        group_by_order((1, 2), "3")
    with pytest.raises(ValueError, match="2.13"):
        ReplayConfig(scala_binary="2.14")
    assert ReplayConfig().scala_binary == "2.13"


def _cases() -> list[dict[str, Any]]:
    doc = json.loads(DATA.read_text())
    assert doc["jars"] == {"2.13": "scala-library-2.13.18.jar",
                           "2.12": "scala-library-2.12.10.jar"}
    cases: list[dict[str, Any]] = doc["cases"]
    return cases


def test_fixture_covers_each_shape() -> None:
    """The jar-made cases hold every result class and shared-bucket small maps."""
    cases = _cases()
    assert len(cases) == 300
    assert {c["2.12"]["class"] for c in cases} == {"Map1", "Map2", "Map3", "Map4",
                                                    "HashTrieMap"}
    assert {c["2.13"]["class"] for c in cases} == {"HashMap"}
    distinct = [set(c["keys"]) for c in cases]
    shared = [ks for ks in distinct
              if len(ks) <= 4 and len({table_index(k, 16) for k in ks}) < len(ks)]
    assert len(shared) >= 10


@pytest.mark.parametrize("binary", ["2.13", "2.12"])
def test_matches_the_real_library(binary: str) -> None:
    for case in _cases():
        keys = tuple(case["keys"])
        real = case[binary]
        assert list(group_by_order(keys, binary)) == real["group_by"], keys
        assert list(to_set_order(keys, binary)) == real["to_set"], keys


# -- the order in the replay ----------------------------------------------------------------


def _double_failure(binary: str, isr_brokers: tuple[int, int], others: tuple[int, ...] = ()
                    ) -> tuple[int | None, tuple[int, ...] | None, int | None]:
    """Partition t-0 on `isr_brokers` (leader the first, both in the ISR) loses both, and
    `others` (hosting topic u), in one BrokerChange: (leader, ISR, epoch) at the end."""
    a, b = isr_brokers
    log = Log()
    log.failover(0, [0, a, b, *others])
    log.create("t", 0, [a, b])
    for i, o in enumerate(others):
        log.create("u", i, [o])
    log.failure(a, b, *others)
    _, out = replay_log(log, ReplayConfig(scala_binary=binary))
    row = final(out, "t", 0)
    assert row.state == "OfflinePartition"
    return row.leader, row.isr, row.leader_epoch


def test_rack_failure_1_5_keeps_1_in_the_isr() -> None:
    """Assignment and ISR [1, 5], leader 1; brokers 1 and 5 fail in one broker change.
    `handleStateChanges(OfflineReplica)` visits 5 first under both builds (see test_1_5):
    removing 5 leaves ISR [1] with leader 1 (epoch 1); removing 1 then clears the leader and
    keeps the last member (epoch 2). Kafka 3.7.1 ends with ISR [1]; ascending ids gave [5]."""
    assert _double_failure("2.13", (1, 5)) == (-1, (1,), 2)
    assert _double_failure("2.12", (1, 5)) == (-1, (1,), 2)


def test_the_builds_differ_on_1_2() -> None:
    """ISR [1, 2] (leader 1) loses both: 2.13 visits 1 (chunk0 7) before 2 (chunk0 14) and
    keeps 2; 2.12 visits bucket 12 (2) before bucket 6 (1) and keeps 1."""
    assert _double_failure("2.13", (1, 2)) == (-1, (2,), 2)
    assert _double_failure("2.12", (1, 2)) == (-1, (1,), 2)


def test_the_order_is_that_of_all_failed_brokers() -> None:
    """Kafka's one OfflineReplica call holds the replicas of every failed broker, so 29
    (hosting only topic u) takes part in t's order: {1, 20} alone is visited 20, 1 (ISR [1]
    would stay); with 29, 20 and 29 share a sub-node after 1, so 1 goes first and 20 stays
    (see test_champ_order_depends_on_the_other_keys)."""
    assert _double_failure("2.13", (1, 20)) == (-1, (1,), 2)
    assert _double_failure("2.13", (1, 20), others=(29,)) == (-1, (20,), 2)
