"""`kafka-topics --describe` output, every era, read line by line.

Two line shapes, printed by `TopicCommand.describeTopic`:

* the topic line (omitted by `--under-replicated-partitions`, `--unavailable-partitions`,
  `--under-min-isr-partitions`, `--at-min-isr-partitions`, which print partition lines only):
    - Kafka 1.1.x - 2.3.x, `println("Topic:%s\\tPartitionCount:%d\\tReplicationFactor:%d
      \\tConfigs:%s%s")` (no space after the colons) with `\\tMarkedForDeletion:true` appended
      by the `--zookeeper` service when the topic is being deleted;
    - Kafka 2.4.0 - 3.9, `TopicDescription.printDescription`: `Topic: t`, then
      `\\tTopicId: <uuid>` (2.8.0 and later, when the topic has an id), `\\tPartitionCount: n`,
      `\\tReplicationFactor: n`, `\\tConfigs: k=v,k=v` (the non-default configs, possibly
      empty), `\\tMarkedForDeletion: true` when marked (only the `--zookeeper` service of
      2.4 - 2.8 knows it; the AdminClient service always passes false).
* the partition line, `PartitionDescription.printDescription` (2.2+) or the loop body of
  `describeTopic` (1.1 - 2.1): `\\tTopic: t\\tPartition: p\\tLeader: l\\tReplicas: 1,2\\tIsr: 1,2`,
    - `Leader:` is the broker id, `none` when there is no leader (the AdminClient path of
      2.2+, and 2.4+ `--zookeeper` through `LeaderAndIsr.leaderOpt`), or `-1` (1.1 - 2.3
      `--zookeeper` print the state znode's leader as is); both are read as -1;
    - an empty ISR prints as nothing after `Isr: `;
    - 2.6.0+ (`--bootstrap-server`, when `listPartitionReassignments` reports one) appends
      `\\tAdding Replicas: 3\\tRemoving Replicas: 1`, either list possibly empty;
    - 3.8.0+ (`tools/.../TopicCommand.java`) appends `\\tElr: ...\\tLastKnownElr: ...`, `N/A`
      when unknown; ELR exists only in KRaft, so they are checked and not kept;
    - `\\tMarkedForDeletion: true` ends the line when marked (1.1 - 2.3 only with a report
      option, 2.4 - 2.8 `--zookeeper` always).

Pasted text often has its tabs turned into spaces: a line with tabs is split on them and
every field must be a known `Key: value`; a line without tabs is split at the known keys.
Topic names cannot contain spaces (`Topic.validate`: `[a-zA-Z0-9._-]`), so this is exact.

Messages of the same command are recognised and reported: `Topic t doesn't exist!` (1.x - 2.x
`--zookeeper`) and `Error while executing topic command : ...` as Unreadable; the deletion
notices of `--delete` (`Topic t is marked for deletion.`) and `--list` (`t - marked for
deletion`) mark the topic.
"""

from __future__ import annotations

import re

from jobs.ingest.snapshot.model import (
    NO_LEADER,
    Finding,
    TopicSettings,
    Unreadable,
    marked_topic,
    partial_partition,
)

_KEYS = ("TopicId", "Topic", "PartitionCount", "ReplicationFactor", "Configs",
         "MarkedForDeletion", "Partition", "Leader", "Adding Replicas", "Removing Replicas",
         "Replicas", "Isr", "LastKnownElr", "Elr")
# A key starts the line or follows whitespace; "Adding Replicas" is tried before "Replicas".
_KEY = re.compile(r"(?<!\S)(" + "|".join(re.escape(k) for k in _KEYS) + r"):")
_TAB_FIELD = re.compile(r"^(" + "|".join(re.escape(k) for k in _KEYS) + r"):(.*)$")

_TOPIC_KEYS = frozenset({"Topic", "TopicId", "PartitionCount", "ReplicationFactor", "Configs",
                         "MarkedForDeletion"})
_PARTITION_KEYS = frozenset({"Topic", "Partition", "Leader", "Replicas", "Isr",
                             "Adding Replicas", "Removing Replicas", "Elr", "LastKnownElr",
                             "MarkedForDeletion"})
_PARTITION_REQUIRED = ("Topic", "Partition", "Leader", "Replicas", "Isr")
_TOPIC_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_BROKER_LIST = re.compile(r"^(\d+(,\d+)*)?$")

_NO_TOPIC = re.compile(r"^Topic (\S+) doesn't exist!$")
_COMMAND_ERROR = re.compile(r"^Error while executing topic command ?: ")
_DELETE_NOTICE = re.compile(r"^Topic (\S+) is (?:already )?marked for deletion\.$")
_LIST_NOTICE = re.compile(r"^(\S+) - marked for deletion$")
_DELETE_NOTE = "Note: This will have no impact if delete.topic.enable is not set to true."


class DescribeError(ValueError):
    """A describe line whose field does not read; the message is the Unreadable reason."""


def read_line(text: str, source: str) -> list[Finding] | None:
    """What one line of describe output says; None when it is not such a line."""
    stripped = text.strip()
    message = _read_message(stripped, source)
    if message is not None:
        return message
    if not _KEY.match(stripped):
        return None
    try:
        fields = _fields(text)
        if "Partition" in fields:
            return _partition_line(fields, source)
        if "PartitionCount" in fields:
            return [_topic_line(fields, source)]
        raise DescribeError("a describe line with neither Partition: nor PartitionCount:")
    except DescribeError as error:
        return [Unreadable(source, text, str(error))]


def _read_message(stripped: str, source: str) -> list[Finding] | None:
    """The command's other messages that may sit among describe lines."""
    if stripped == _DELETE_NOTE:
        return []
    notice = _DELETE_NOTICE.match(stripped) or _LIST_NOTICE.match(stripped)
    if notice:
        return [marked_topic(notice.group(1), source)]
    if _NO_TOPIC.match(stripped):
        return [Unreadable(source, stripped, "kafka-topics: the topic does not exist")]
    if _COMMAND_ERROR.match(stripped):
        return [Unreadable(source, stripped, "kafka-topics failed; the snapshot may be partial")]
    return None


def _fields(text: str) -> dict[str, str]:
    """`Key: value` pairs of one line, tab separated as printed or space separated as pasted."""
    stripped = text.strip()
    pairs: list[tuple[str, str]] = []
    if "\t" in stripped:
        for chunk in stripped.split("\t"):
            match = _TAB_FIELD.match(chunk)
            if not match:
                raise DescribeError(f"unknown describe field {chunk!r}")
            pairs.append((match.group(1), match.group(2).strip()))
    else:
        keys = list(_KEY.finditer(stripped))
        for found, following in zip(keys, [*keys[1:], None], strict=True):
            end = following.start() if following else len(stripped)
            pairs.append((found.group(1), stripped[found.end():end].strip()))
    fields: dict[str, str] = {}
    for key, value in pairs:
        if key in fields:
            raise DescribeError(f"field {key}: appears twice")
        fields[key] = value
    return fields


def _topic_line(fields: dict[str, str], source: str) -> TopicSettings:
    _only(fields, _TOPIC_KEYS, "topic line")
    for key in ("PartitionCount", "ReplicationFactor"):
        _integer(fields, key)
    if "Configs" not in fields:
        raise DescribeError("topic line without Configs:")
    return TopicSettings(
        topic=_topic(fields), configs=parse_configs(fields["Configs"]),
        marked_for_deletion=_marked(fields), topic_id=fields.get("TopicId") or None,
        source=source,
    )


def _partition_line(fields: dict[str, str], source: str) -> list[Finding]:
    _only(fields, _PARTITION_KEYS, "partition line")
    missing = [key for key in _PARTITION_REQUIRED if key not in fields]
    if missing:
        raise DescribeError(f"partition line without {', '.join(missing)}")
    for key in ("Elr", "LastKnownElr"):
        if key in fields and fields[key] != "N/A":
            _brokers(fields, key)
    topic = _topic(fields)
    partition = partial_partition(topic, _integer(fields, "Partition"), source)._replace(
        leader=_leader(fields["Leader"]),
        replicas=_brokers(fields, "Replicas"),
        isr=_brokers(fields, "Isr"),
        adding_replicas=_brokers(fields, "Adding Replicas") if "Adding Replicas" in fields
        else None,
        removing_replicas=_brokers(fields, "Removing Replicas") if "Removing Replicas" in fields
        else None,
    )
    found: list[Finding] = [partition]
    if _marked(fields):
        found.append(marked_topic(topic, source))
    return found


def parse_configs(text: str) -> dict[str, str]:
    """`k=v,k=v` as printed by `mkString(",")`; a value may itself hold commas
    (`cleanup.policy=compact,delete`), so a piece without `=` continues the previous value."""
    configs: dict[str, str] = {}
    last: str | None = None
    for piece in text.split(",") if text else []:
        key, equals, value = piece.partition("=")
        if equals and key:
            configs[key] = value
            last = key
        elif last is not None:
            configs[last] += "," + piece
        else:
            raise DescribeError(f"Configs: {text!r} is not k=v,k=v")
    return configs


def _only(fields: dict[str, str], allowed: frozenset[str], shape: str) -> None:
    extra = sorted(set(fields) - allowed)
    if extra:
        raise DescribeError(f"{shape} with {', '.join(extra)}")


def _topic(fields: dict[str, str]) -> str:
    topic = fields["Topic"]
    if not _TOPIC_NAME.match(topic):
        raise DescribeError(f"Topic: {topic!r} is not a topic name")
    return topic


def _integer(fields: dict[str, str], key: str) -> int:
    value = fields.get(key)
    if value is None or not value.isdigit():
        raise DescribeError(f"{key}: {value!r} is not a number")
    return int(value)


def _leader(value: str) -> int:
    if value == "none":
        return NO_LEADER
    if value == str(NO_LEADER) or value.isdigit():
        return int(value)
    raise DescribeError(f"Leader: {value!r} is neither a broker id nor none")


def _brokers(fields: dict[str, str], key: str) -> tuple[int, ...]:
    value = fields[key].replace(" ", "")
    if not _BROKER_LIST.match(value):
        raise DescribeError(f"{key}: {fields[key]!r} is not a list of broker ids")
    return tuple(int(b) for b in value.split(",")) if value else ()


def _marked(fields: dict[str, str]) -> bool:
    value = fields.get("MarkedForDeletion")
    if value is None:
        return False
    if value != "true":
        raise DescribeError(f"MarkedForDeletion: {value!r} is not true")
    return True
