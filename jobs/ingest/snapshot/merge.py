"""One ObservedPartition per partition and one TopicSettings per topic.

A partition is often described by several lines: its TopicPartitionStateZNode (leader, ISR,
epochs), its TopicZNode (replicas, adding/removing replicas), the state znode's Stat
(dataVersion), a describe line. Each line states some fields and leaves the rest None; the
merge takes every stated field. Two lines stating different values for one field contradict
each other: the first one read is kept and the contradiction is reported as Unreadable, since
no rule can tell which one the cluster held.
"""

from __future__ import annotations

from collections.abc import Iterable

from jobs.ingest.snapshot.model import ObservedPartition, TopicSettings, Unreadable

_PARTITION_FIELDS = ("leader", "leader_epoch", "isr", "replicas", "adding_replicas",
                     "removing_replicas", "controller_epoch", "zk_version")


def merge_partitions(
    partitions: Iterable[ObservedPartition],
) -> tuple[list[ObservedPartition], list[Unreadable]]:
    """Partitions sorted by (topic, partition), with the contradictions found."""
    merged: dict[tuple[str, int], ObservedPartition] = {}
    conflicts: list[Unreadable] = []
    for part in partitions:
        key = (part.topic, part.partition)
        known = merged.get(key)
        if known is None:
            merged[key] = part
            continue
        values = known._asdict()
        for field in _PARTITION_FIELDS:
            old, new = values[field], getattr(part, field)
            if new is None:
                continue
            if old is None:
                values[field] = new
            elif old != new:
                conflicts.append(_conflict(f"{part.topic}-{part.partition}", field, old, new,
                                           known.source, part.source))
        values["source"] = _join(known.source, part.source)
        merged[key] = ObservedPartition(**values)
    return [merged[key] for key in sorted(merged)], conflicts


def merge_topics(
    topics: Iterable[TopicSettings],
) -> tuple[list[TopicSettings], list[Unreadable]]:
    """Topics sorted by name: configs and topic id taken where stated, marks or'ed."""
    merged: dict[str, TopicSettings] = {}
    conflicts: list[Unreadable] = []
    for topic in topics:
        known = merged.get(topic.topic)
        if known is None:
            merged[topic.topic] = topic
            continue
        if known.topic_id is not None and topic.topic_id not in (None, known.topic_id):
            conflicts.append(_conflict(topic.topic, "topic_id", known.topic_id, topic.topic_id,
                                       known.source, topic.source))
        configs, config_conflicts = _merge_configs(known, topic)
        conflicts.extend(config_conflicts)
        merged[topic.topic] = known._replace(
            configs=configs,
            topic_id=known.topic_id or topic.topic_id,
            marked_for_deletion=known.marked_for_deletion or topic.marked_for_deletion,
            source=_join(known.source, topic.source),
        )
    return [merged[name] for name in sorted(merged)], conflicts


def _merge_configs(known: TopicSettings,
                   topic: TopicSettings) -> tuple[dict[str, str] | None, list[Unreadable]]:
    """Union by key: `--describe --bootstrap-server` lists every non-default config (broker
    overrides too), the ConfigEntityZNode only the topic's own, so only a key with two values
    contradicts."""
    if known.configs is None or topic.configs is None:
        return known.configs if topic.configs is None else topic.configs, []
    configs = dict(known.configs)
    conflicts: list[Unreadable] = []
    for key, value in topic.configs.items():
        if configs.setdefault(key, value) != value:
            conflicts.append(_conflict(topic.topic, f"config {key}", configs[key], value,
                                       known.source, topic.source))
    return configs, conflicts


def _conflict(what: str, field: str, old: object, new: object, old_source: str,
              new_source: str) -> Unreadable:
    return Unreadable(
        source=new_source, text=f"{what} {field}={new!r}",
        reason=f"contradicts {field}={old!r} read at {old_source}; the first is kept",
    )


def _join(old: str, new: str) -> str:
    return old if new in old.split(", ") else f"{old}, {new}"
