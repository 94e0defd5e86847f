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
    # Lines only older releases print (each range checked against the source at every tag).
    # KafkaController's epoch line: `Incremented epoch to N` (1.0), `Epoch incremented to N`
    # (1.1-2.0), then `N successfully elected as the controller. Epoch incremented to N and
    # epoch zk version is now N` (2.1+).
    Marker("incremented_epoch", r"Incremented epoch to \d+", "1.0", "1.0"),
    Marker("epoch_incremented_alone", r"Epoch incremented to \d+( \(|$)", "1.1", "2.0"),
    Marker("epoch_zk_version", r"and epoch zk version is now \d+", "2.1", "3.9"),
    # The broker change line names bounced brokers from 2.2 (KIP-380).
    Marker("broker_change_without_bounced",
           r"Newly added brokers: [-\d,]*, deleted brokers: [-\d,]*, all live brokers: ",
           "0.8", "2.1"),
    Marker("broker_change_bounced", r"deleted brokers: [-\d,]*, bounced brokers: ", "2.2", "3.9"),
    # TopicDeletionManager's `Delete topic callback invoked for` (up to 2.2), its
    # `Topic deletion callback for` / `Partition deletion callback for` (up to 2.4).
    Marker("delete_topic_callback", r"Delete topic callback invoked for ", "0.8", "2.2"),
    Marker("deletion_callback", r"(Topic|Partition) deletion callback for ", "0.8", "2.4"),
    # Pre-KIP-455 reassignment and the election API before KIP-460 (2.4).
    Marker("handling_reassignment", r"Handling reassignment of partition ", "0.8", "2.3"),
    Marker("preferred_election_start",
           r"Starting preferred replica leader election for partitions", "0.8", "2.3"),
    # The auto-rebalance check's DEBUG line.
    Marker("preferred_replicas_by_broker", r"Preferred replicas by broker ", "0.8", "2.4"),
    # The request classes' own PartitionState (LeaderAndIsr `..., isNew=..)`, UpdateMetadata
    # `..., offlineReplicas=[..])`) before the generated messages of 2.4.
    Marker("request_partition_state", r"(?<![A-Za-z])PartitionState\(controllerEpoch=",
           "0.10", "2.3"),
    # ControllerChannelManager's per-partition UpdateMetadata TRACE line (1.0-2.5; from 2.6
    # only the INFO summary `... for N partitions`) and its StopReplica DEBUG line.
    Marker("update_metadata_per_partition",
           r"Sending UpdateMetadata request .+ to brokers .+ for partition ", "1.0", "2.5"),
    Marker("stop_replica_sent_to_broker", r"The stop replica request \(delete = ", "0.8", "2.5"),
    # LeaderAndIsr.toString with zkVersion right after the ISR (1.1-3.1); the AlterIsr
    # handler's `ISR for partition t-0 updated to [..]` (2.7-3.2).
    Marker("leader_and_isr_zk_version",
           r"LeaderAndIsr\(leader=-?\d+, leaderEpoch=-?\d+, isr=\w*\([-\d, ]*\), zkVersion=",
           "1.1", "3.1"),
    Marker("isr_updated_brackets", r"ISR for partition \S+ updated to \[", "2.7", "3.2"),
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
