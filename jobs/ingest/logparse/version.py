"""Which Kafka release lines a log's line formats fit (docs/ingest-compare.md, "The log
formats"): each marker is a rendering that only some release lines write; a file's range is
the intersection of the ranges of the markers seen in it. Absence proves nothing (a marker
may sit at a level the configuration drops), so a file with no marker has no range.

The patterns are plain regular expressions that Java (Spark's `rlike`) and Python read
alike. Pure: no Spark.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from statemachine.profiles import parse_version


class Marker(NamedTuple):
    name: str
    pattern: str
    low: str  # first release line that writes it
    high: str  # last release line that writes it


MARKERS: tuple[Marker, ...] = (
    # logIdent of KafkaController: `[Controller 1]: ` up to 0.11, `[Controller id=1] ` from 1.0.
    Marker("controller_colon", r"\[Controller \d+\]: ", "0.8", "0.11"),
    Marker("controller_id", r"\[Controller id=\d+\] ", "1.0", "3.9"),
    # StateChangeLogger's controller side: `Controller 1 epoch 2 ...` up to 0.11.
    Marker("state_change_plain", r"(TRACE|DEBUG|INFO|WARN|ERROR) Controller \d+ epoch \d+ ",
           "0.8", "0.11"),
    # ControllerChannelManager's RequestSendThread logIdent from 1.1.
    Marker("request_send_thread_id", r"\[RequestSendThread controllerId=\d+\]", "1.1", "3.9"),
    # TopicDeletionManager's logIdent lost its comma in 2.3.
    Marker("topic_deletion_comma", r"\[Topic Deletion Manager \d+\], ", "0.8", "2.2"),
    Marker("topic_deletion_no_comma", r"\[Topic Deletion Manager \d+\] [^,]", "2.3", "3.9"),
    # The partition state machine's class (its logger) became ZkPartitionStateMachine in 2.3.
    Marker("partition_state_machine_logger", r"\(kafka\.controller\.PartitionStateMachine[):]",
           "0.8", "2.2"),
    Marker("zk_partition_state_machine_logger",
           r"\(kafka\.controller\.ZkPartitionStateMachine[):]", "2.3", "3.9"),
    # LeaderAndIsr rendered as JSON up to 1.0; generated request classes from 2.4.
    Marker("leader_and_isr_json", r"\{\"leader\":-?\d+,", "0.8", "1.0"),
    Marker("leader_and_isr_partition_state", r"LeaderAndIsrPartitionState\(", "2.4", "3.9"),
    Marker("topic_id_replica_assignment", r"TopicIdReplicaAssignment\(", "2.8", "3.9"),
    # LeaderAndIsr fields: leaderRecoveryState (3.2, KIP-704), partitionEpoch (3.3),
    # isrWithBrokerEpoch (3.5, KIP-903).
    Marker("leader_recovery_state", r"leaderRecoveryState=", "3.2", "3.9"),
    Marker("partition_epoch", r"partitionEpoch=", "3.3", "3.9"),
    Marker("isr_with_broker_epoch", r"isrWithBrokerEpoch=", "3.5", "3.9"),
)
_COMPILED = tuple((m, re.compile(m.pattern)) for m in MARKERS)


class VersionRange(NamedTuple):
    low: str
    high: str

    def text(self) -> str:
        """`2.3` for one line, `2.4-3.9` for several: the summary's `kafka_version`."""
        return self.low if self.low == self.high else f"{self.low}-{self.high}"


def markers_in(line: str) -> list[str]:
    """The names of the markers `line` carries (Python side, for tests and small inputs)."""
    return [m.name for m, rx in _COMPILED if rx.search(line)]


def detect(seen: Iterable[str]) -> VersionRange | None:
    """The release lines every marker in `seen` (names) allows; None when none was seen or
    they contradict each other (files of two releases, a rolling upgrade)."""
    by_name = {m.name: m for m in MARKERS}
    marks = [by_name[n] for n in seen]
    if not marks:
        return None
    low = max(marks, key=lambda m: parse_version(m.low)).low
    high = min(marks, key=lambda m: parse_version(m.high)).high
    if parse_version(low) > parse_version(high):
        return None
    return VersionRange(low, high)


def parse_range(text: str) -> VersionRange:
    """The inverse of `VersionRange.text` (ValueError when malformed)."""
    low, _, high = text.partition("-")
    parse_version(low)
    parse_version(high or low)
    return VersionRange(low, high or low)
