"""What a snapshot says: partitions, topics, and the lines that could not be read.

Every field the text does not state is None, never a guessed default: a `kafka-topics
--describe` line has no leader epoch, a TopicPartitionStateZNode has no replica assignment,
a Kafka 1.x TopicZNode (version 1) has no adding/removing replicas. A consumer compares only
the fields that are not None.
"""

from __future__ import annotations

from typing import NamedTuple

NO_LEADER = -1
"""`LeaderAndIsr.NoLeader`: what a state znode stores and what `Leader: none` means."""


class ObservedPartition(NamedTuple):
    """One partition as the snapshot shows it (possibly merged from several lines)."""

    topic: str
    partition: int
    leader: int | None  # NO_LEADER (-1) when the snapshot says none; None when it does not say
    leader_epoch: int | None
    isr: tuple[int, ...] | None
    replicas: tuple[int, ...] | None
    adding_replicas: tuple[int, ...] | None
    removing_replicas: tuple[int, ...] | None
    controller_epoch: int | None
    zk_version: int | None  # the state znode's dataVersion (LeaderAndIsr.partitionEpoch)
    source: str  # "file:line", several joined by ", " when lines were merged


class TopicSettings(NamedTuple):
    """One topic's settings: config overrides, deletion mark, topic id."""

    topic: str
    configs: dict[str, str] | None  # the non-default configs; None when the text does not say
    marked_for_deletion: bool
    topic_id: str | None
    source: str


class Unreadable(NamedTuple):
    """A line that says something this parser cannot turn into state, and why."""

    source: str
    text: str
    reason: str


class Snapshot(NamedTuple):
    """Everything read from one text (or several, merged)."""

    partitions: list[ObservedPartition]
    topics: list[TopicSettings]
    unreadable: list[Unreadable]
    format: str  # DESCRIBE, ZOOKEEPER, MIXED (both), EMPTY (no line yielded state)


DESCRIBE = "kafka-topics-describe"
ZOOKEEPER = "zookeeper-dump"
MIXED = "mixed"
EMPTY = "empty"

Finding = ObservedPartition | TopicSettings | Unreadable
"""What reading one line yields; a line may yield several (a topic znode, one per partition)."""


def partial_partition(topic: str, partition: int, source: str) -> ObservedPartition:
    """A partition of which nothing is known yet; readers fill in what their line says."""
    return ObservedPartition(
        topic=topic, partition=partition, leader=None, leader_epoch=None, isr=None,
        replicas=None, adding_replicas=None, removing_replicas=None, controller_epoch=None,
        zk_version=None, source=source,
    )


def marked_topic(topic: str, source: str) -> TopicSettings:
    """A topic known only to be marked for deletion (configs and id unknown)."""
    return TopicSettings(topic=topic, configs=None, marked_for_deletion=True, topic_id=None,
                         source=source)
