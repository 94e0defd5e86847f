"""The post-mortem's "what changed" lines (`jobs.audit.changes`), from rows of `changes`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from jobs.audit.changes import change_line
from jobs.audit.postmortem import ClusterPostMortem, format_post_mortem


def first(seq: int, topic: str | None = None, partition: int | None = None,
          broker: int | None = None, detail: str | None = None) -> dict[str, Any]:
    return {"seq": seq, "ts": None, "topic": topic, "partition": partition,
            "broker_id": broker, "detail": detail}


def test_a_line_names_the_count_and_the_first_three() -> None:
    rows = [first(701, "t", 0, detail="6 -> 5"), first(702, "t", 1, detail="6 -> 1"),
            first(703, "u", 0, detail="6 -> 3"), first(704, "u", 1, detail="6 -> 2")]
    assert change_line("leader_moved", 9, rows) == (
        "leader moved 9: seq 701 t-0 (6 -> 5), seq 702 t-1 (6 -> 1), seq 703 u-0 (6 -> 3), ...")
    assert change_line("broker_failed", 1, [first(10, broker=3)]) == \
        "broker failed 1: seq 10 broker 3"
    assert change_line("topic_created", 2, [first(2, "t", detail="2 partitions"),
                                            first(5, "u", detail="1 partition")]) == \
        "topic created 2: seq 2 t (2 partitions), seq 5 u (1 partition)"


def test_the_post_mortem_ends_each_cluster_with_what_changed() -> None:
    quiet = ClusterPostMortem("east", 0, 0, 0, 0.0, None, datetime(2026, 1, 1, tzinfo=UTC),
                              [], [], [])
    text = format_post_mortem("r1", [quiet], {}, {"east": ["broker failed 1: seq 10 broker 3"]})
    assert text.splitlines()[-2:] == ["  what changed in this run:",
                                      "    broker failed 1: seq 10 broker 3"]
