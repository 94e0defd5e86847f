"""Snapshots of a ZooKeeper-mode cluster's partitions, as operators already have them.

Two kinds of text describe the partitions at an instant, and both are read here (pure
Python, no pyspark, no pandas), to audit a replay against what was observed and to seed a
replay with the partitions that existed before its event log begins:

    describe   `kafka-topics --describe` output of Kafka 1.1 - 3.9 (TopicCommand.describeTopic,
               PartitionDescription.printDescription), as printed or pasted with spaces
    zookeeper  dumps of the znodes TopicPartitionStateZNode, TopicZNode, ConfigEntityZNode
               and DeleteTopicsTopicZNode: `<path> <json>` lines or zookeeper-shell output
    noise      blank lines, comments and the tools' logging, ignored explicitly
    merge      one ObservedPartition per partition, one TopicSettings per topic
    model      the NamedTuples

The format is detected line by line, so one file may hold both. Every line is accounted
for: it yields state, is ignorable by a named rule, or is reported as Unreadable with its
`file:line` and the reason.
"""

from __future__ import annotations

from collections.abc import Iterable

from jobs.ingest.snapshot import describe, noise
from jobs.ingest.snapshot.merge import merge_partitions, merge_topics
from jobs.ingest.snapshot.model import (
    DESCRIBE,
    EMPTY,
    MIXED,
    NO_LEADER,
    ZOOKEEPER,
    Finding,
    ObservedPartition,
    Snapshot,
    TopicSettings,
    Unreadable,
)
from jobs.ingest.snapshot.zookeeper import ZooKeeperReader

__all__ = [
    "DESCRIBE", "EMPTY", "MIXED", "NO_LEADER", "ZOOKEEPER", "ObservedPartition", "Snapshot",
    "TopicSettings", "Unreadable", "merge_snapshots", "parse_snapshot_text", "read_snapshot",
    "read_snapshots",
]


def parse_snapshot_text(text: str, name: str) -> Snapshot:
    """Every line of `text`; `name` is the file name used in each `source` ("name:line")."""
    zookeeper = ZooKeeperReader()
    findings: list[Finding] = []
    formats: set[str] = set()
    for number, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        source = f"{name}:{number}"
        read, fmt = _read_line(line.rstrip("\r\n"), source, zookeeper)
        findings.extend(read)
        if fmt is not None and any(not isinstance(f, Unreadable) for f in read):
            formats.add(fmt)
    return _assemble(findings, _format_name(formats))


def read_snapshot(path: str) -> Snapshot:
    """One snapshot file (UTF-8 text)."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        return parse_snapshot_text(handle.read(), path)


def read_snapshots(paths: Iterable[str]) -> Snapshot:
    """Several files taken together, e.g. state znodes in one and topic znodes in another."""
    return merge_snapshots([read_snapshot(path) for path in paths])


def merge_snapshots(snapshots: Iterable[Snapshot]) -> Snapshot:
    snapshots = list(snapshots)
    findings: list[Finding] = []
    for snapshot in snapshots:
        findings.extend(snapshot.unreadable)
        findings.extend(snapshot.partitions)
        findings.extend(snapshot.topics)
    formats = {s.format for s in snapshots} - {EMPTY}
    return _assemble(findings, MIXED if MIXED in formats else _format_name(formats))


def _read_line(line: str, source: str,
               zookeeper: ZooKeeperReader) -> tuple[list[Finding], str | None]:
    """One line: what it says and which format said it (None: ignorable or unreadable)."""
    if noise.is_blank_or_comment(line):
        return [], None
    level = noise.log_level(line)
    if level is not None:
        if noise.is_logged_error(level):
            return [Unreadable(source, line, "the tool logged an error; the snapshot may be "
                               "partial")], None
        return [], None
    read = describe.read_line(line, source)
    if read is not None:
        return read, DESCRIBE
    read = zookeeper.read_line(line, source)
    if read is not None:
        return read, ZOOKEEPER
    return [Unreadable(source, line, "neither kafka-topics --describe output nor a ZooKeeper "
                       "dump line")], None


def _assemble(findings: list[Finding], fmt: str) -> Snapshot:
    partitions, partition_conflicts = merge_partitions(
        f for f in findings if isinstance(f, ObservedPartition))
    topics, topic_conflicts = merge_topics(f for f in findings if isinstance(f, TopicSettings))
    unreadable = [f for f in findings if isinstance(f, Unreadable)]
    return Snapshot(partitions, topics, unreadable + partition_conflicts + topic_conflicts, fmt)


def _format_name(formats: set[str]) -> str:
    if not formats:
        return EMPTY
    return formats.pop() if len(formats) == 1 else MIXED
