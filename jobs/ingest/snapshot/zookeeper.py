"""ZooKeeper dumps of the znodes that hold a ZooKeeper-mode cluster's partition state.

The znodes (`kafka.zk.ZkData`, Kafka 1.1 - 3.9; `kafka.utils.ZkUtils` writes the same JSON
in 1.x) and what is taken from each:

* TopicPartitionStateZNode `/brokers/topics/<t>/partitions/<p>/state`:
  `{"controller_epoch":5,"leader":1,"version":1,"leader_epoch":3,"isr":[1,2]}`, plus
  `"leader_recovery_state":1` (Kafka 3.2+, only when RECOVERING). `decode` requires leader,
  leader_epoch, isr and controller_epoch; the znode's Stat version is the partition's
  zkVersion (`LeaderAndIsr.partitionEpoch`), so a `dataVersion = N` after the data is kept.
  leader -1 is `LeaderAndIsr.NoLeader`.
* TopicZNode `/brokers/topics/<t>`: `{"version":1,"partitions":{"0":[1,2]}}` (1.x - 2.3),
  version 2 adds `"adding_replicas":{...},"removing_replicas":{...}` (2.4+, a partition absent
  from them has none), version 3 adds `"topic_id":"<uuid>"` (2.8+): the assignment.
* ConfigEntityZNode `/config/topics/<t>`: `{"version":1,"config":{"min.insync.replicas":"2"}}`.
* DeleteTopicsTopicZNode `/admin/delete_topics/<t>`: exists while the topic is marked for
  deletion (also read from an `ls /admin/delete_topics` listing `[t1, t2]`).

Shapes of a dump, mixed freely in one file:

* `<znode path> <json>` lines (space, tab, `:` or `=` between); a bare path line names the
  znode whose data follows on the next line;
* `zookeeper-shell HOST[/chroot] get|get -s|stat <path>` output (`ZooKeeperMain`): the data
  line, then with ZooKeeper 3.4 `get` (Kafka 1.x - 2.3) or 3.5+ `get -s` the Stat block
  (`cZxid = ...`, `dataVersion = N`, ..., `numChildren = N`). The path is taken from the
  command line or the interactive prompt `[zk: host(CONNECTED) 3] get <path>` before it.
  `Connecting to ...`, `WATCHER::`, `WatchedEvent state:...`, `Welcome to ZooKeeper!` and
  `JLine support is ...` and prompts of other commands are ignored; `Node does not exist:
  <path>` is reported.

A path may carry a chroot prefix (`/kafka/brokers/topics/...`).
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from jobs.ingest.snapshot.model import (
    Finding,
    ObservedPartition,
    TopicSettings,
    Unreadable,
    marked_topic,
    partial_partition,
)

_PREFIX = r"^(?:/[A-Za-z0-9._-]+)*?"
_STATE_PATH = re.compile(_PREFIX + r"/brokers/topics/([A-Za-z0-9._-]+)/partitions/(\d+)/state/?$")
_TOPIC_PATH = re.compile(_PREFIX + r"/brokers/topics/([A-Za-z0-9._-]+)/?$")
_CONFIG_PATH = re.compile(_PREFIX + r"/config/topics/([A-Za-z0-9._-]+)/?$")
_DELETE_PATH = re.compile(_PREFIX + r"/admin/delete_topics/([A-Za-z0-9._-]+)/?$")
_DELETE_LISTING = re.compile(_PREFIX + r"/admin/delete_topics/?$")

_LEADING_PATH = re.compile(r"^(/[A-Za-z0-9._/-]*)(.*)$")
_COMMAND = re.compile(r"(?:^|\s)(get|ls|ls2|stat)(?:\s+-[swR])*\s+(/[A-Za-z0-9._/-]*)")
_STAT = re.compile(r"^(cZxid|ctime|mZxid|mtime|pZxid|cversion|dataVersion|aclVersion|"
                   r"ephemeralOwner|dataLength|numChildren) = (.*)$")
_DECORATION = re.compile(r"^(WATCHER::|WatchedEvent state:\S+ type:\S+ path:\S*|"
                         r"Connecting to \S+|Welcome to ZooKeeper!|JLine support is \w+)$")
_NO_NODE = re.compile(r"^Node does not exist: (\S+)$")
_LISTING = re.compile(r"^\[([A-Za-z0-9._, -]*)\]$")
_PROMPT = re.compile(r"^\[zk: [^\]]*\]")


class _Context(NamedTuple):
    """The znode the next data or Stat lines belong to, and how it was named."""

    path: str
    listing: bool  # named by `ls`: the next `[...]` line lists its children


class ZooKeeperReader:
    """Reads a dump line by line; remembers the znode named by the last command or path."""

    def __init__(self) -> None:
        self._context: _Context | None = None

    def read_line(self, text: str, source: str) -> list[Finding] | None:
        """What one line says; None when it is not a line of a ZooKeeper dump."""
        stripped = text.strip()
        if _DECORATION.match(stripped):
            return []
        stat = _STAT.match(stripped)
        if stat:
            return self._stat_line(stat.group(1), stat.group(2), text, source)
        no_node = _NO_NODE.match(stripped)
        if no_node:
            self._context = None
            return [Unreadable(source, text, f"zookeeper-shell: {no_node.group(1)} does not exist")]
        if stripped.startswith("/"):
            return self._path_line(stripped, text, source)
        command = _COMMAND.search(stripped)
        if command:
            self._context = _Context(command.group(2), listing=command.group(1).startswith("ls"))
            return []
        if _PROMPT.match(stripped):  # a prompt with another command (quit, help, ...)
            self._context = None
            return []
        if stripped.startswith("{") or stripped == "null":
            return self._data_line(stripped, text, source)
        if _LISTING.match(stripped) and self._context is not None and self._context.listing:
            return self._listing_line(stripped, source)
        return None

    def _path_line(self, stripped: str, text: str, source: str) -> list[Finding]:
        """`<path>`, `<path> <json>`: the path names the znode, the rest is its data."""
        match = _LEADING_PATH.match(stripped)
        assert match is not None  # the line starts with "/"
        path, rest = match.group(1), match.group(2).lstrip(" \t:=")
        self._context = _Context(path, listing=False)
        if not rest:
            delete = _DELETE_PATH.match(path)
            return [marked_topic(delete.group(1), source)] if delete else []
        if rest.startswith("{") or rest == "null":
            return self._data_line(rest, text, source)
        return [Unreadable(source, text, "the text after the znode path is not JSON")]

    def _data_line(self, data: str, text: str, source: str) -> list[Finding]:
        if self._context is None:
            return [Unreadable(source, text, "znode data with no znode path before it")]
        try:
            return read_znode(self._context.path, data, source)
        except ZnodeError as error:
            return [Unreadable(source, text, f"{self._context.path}: {error}")]

    def _stat_line(self, key: str, value: str, text: str, source: str) -> list[Finding]:
        """A Stat field: dataVersion of a state znode is the partition's zkVersion; the Stat
        of a delete_topics child proves it exists; the rest is decoration."""
        path = self._context.path if self._context else None
        if key == "dataVersion":
            if path is None:
                return [Unreadable(source, text, "dataVersion with no znode path before it")]
            state = _STATE_PATH.match(path)
            if state:
                if not value.isdigit():
                    return [Unreadable(source, text, f"dataVersion {value!r} is not a number")]
                return [partial_partition(state.group(1), int(state.group(2)), source)
                        ._replace(zk_version=int(value))]
        if key == "cZxid" and path is not None:
            delete = _DELETE_PATH.match(path)
            if delete:
                return [marked_topic(delete.group(1), source)]
        return []

    def _listing_line(self, stripped: str, source: str) -> list[Finding]:
        """`ls` output; only the children of /admin/delete_topics are state."""
        assert self._context is not None
        if not _DELETE_LISTING.match(self._context.path):
            return []
        names = [name.strip() for name in stripped[1:-1].split(",") if name.strip()]
        return [marked_topic(name, source) for name in names]


class ZnodeError(ValueError):
    """Znode data that does not decode; the message is the Unreadable reason."""


def read_znode(path: str, data: str, source: str) -> list[Finding]:
    """The state one znode's data says, by the znode's path."""
    if data == "null":
        delete = _DELETE_PATH.match(path)
        if delete:
            return [marked_topic(delete.group(1), source)]
        raise ZnodeError("the znode holds no data")
    try:
        decoded = json.loads(data)
    except json.JSONDecodeError as error:
        raise ZnodeError(f"not JSON ({error.msg})") from error
    if not isinstance(decoded, dict):
        raise ZnodeError("the JSON is not an object")
    state = _STATE_PATH.match(path)
    if state:
        return [_partition_state(state.group(1), int(state.group(2)), decoded, source)]
    topic = _TOPIC_PATH.match(path)
    if topic:
        return _topic_assignment(topic.group(1), decoded, source)
    config = _CONFIG_PATH.match(path)
    if config:
        configs = _string_map(decoded, "config")
        return [TopicSettings(config.group(1), configs, False, None, source)]
    delete = _DELETE_PATH.match(path)
    if delete:
        return [marked_topic(delete.group(1), source)]
    raise ZnodeError("not a partition state, topic, topic config or delete_topics znode")


def _partition_state(topic: str, partition: int, state: dict[str, object],
                     source: str) -> ObservedPartition:
    """TopicPartitionStateZNode.decode: leader, leader_epoch, isr, controller_epoch."""
    recovery = state.get("leader_recovery_state", 0)
    if recovery not in (0, 1):
        raise ZnodeError(f"leader_recovery_state {recovery!r} is neither 0 nor 1")
    return partial_partition(topic, partition, source)._replace(
        leader=_int(state, "leader", allow_no_leader=True),
        leader_epoch=_int(state, "leader_epoch"),
        isr=_brokers(state.get("isr"), "isr"),
        controller_epoch=_int(state, "controller_epoch"),
    )


def _topic_assignment(topic: str, znode: dict[str, object], source: str) -> list[Finding]:
    """TopicZNode.decode: partitions, and from version 2 adding/removing replicas."""
    partitions = _replica_map(znode, "partitions")
    if partitions is None:
        raise ZnodeError("no partitions")
    adding = _replica_map(znode, "adding_replicas")
    removing = _replica_map(znode, "removing_replicas")
    found: list[Finding] = []
    for partition in sorted(partitions):
        found.append(partial_partition(topic, partition, source)._replace(
            replicas=partitions[partition],
            adding_replicas=None if adding is None else adding.get(partition, ()),
            removing_replicas=None if removing is None else removing.get(partition, ()),
        ))
    topic_id = znode.get("topic_id")
    if topic_id is not None:
        if not isinstance(topic_id, str):
            raise ZnodeError(f"topic_id {topic_id!r} is not a string")
        found.append(TopicSettings(topic, None, False, topic_id, source))
    return found


def _int(znode: dict[str, object], key: str, allow_no_leader: bool = False) -> int:
    value = znode.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ZnodeError(f"{key} {value!r} is not a number")
    if value < 0 and not (allow_no_leader and value == -1):
        raise ZnodeError(f"{key} {value} is negative")
    return value


def _brokers(value: object, key: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
            isinstance(b, int) and not isinstance(b, bool) and b >= 0 for b in value):
        raise ZnodeError(f"{key} {value!r} is not a list of broker ids")
    return tuple(value)


def _replica_map(znode: dict[str, object], key: str) -> dict[int, tuple[int, ...]] | None:
    """`{"0":[1,2],...}` by partition; None when the znode has no such key."""
    value = znode.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ZnodeError(f"{key} is not an object")
    replicas: dict[int, tuple[int, ...]] = {}
    for partition, brokers in value.items():
        if not isinstance(partition, str) or not partition.isdigit():
            raise ZnodeError(f"{key}: {partition!r} is not a partition number")
        replicas[int(partition)] = _brokers(brokers, f"{key}[{partition}]")
    return replicas


def _string_map(znode: dict[str, object], key: str) -> dict[str, str]:
    value = znode.get(key)
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ZnodeError(f"{key} is not an object of strings")
    return dict(value)
