"""The KRaft metadata image, folded record by record as Kafka's `MetadataDelta` replays the
`__cluster_metadata` log (`TopicsDelta`, `TopicDelta`, `ClusterDelta`,
`ConfigurationsDelta`, `metadata/src/main/java/org/apache/kafka/image/`).

Topics and partitions (`TopicsDelta.replay`, 3.7.0 `TopicsDelta.java:71-115`): a
`TopicRecord` names a topic id, a `PartitionRecord` states a whole partition, epochs
included; a `PartitionChangeRecord` is merged as `PartitionRegistration.merge` does:

* every list the record leaves null (replicas, ISR, adding, removing, ELR, last known ELR)
  is unchanged;
* leader -2 (`NO_LEADER_CHANGE`) keeps leader and leader epoch; any other value (-1
  included, and the current leader again) sets the leader and bumps the leader epoch by one;
* the partition epoch is bumped by one on every change record;
* the leader recovery state changes only when the record names one (`changeTo`).

The rule is the same at every release line with KRaft: 3.0.0 `PartitionRegistration.java:
71-95`, 3.3.0 `:74-103`, 3.6.0 `:159-188`, 3.7.0 `:228-270`, 3.8.0 `:240-279`, 3.9.0 and
trunk of 2024-10 `:241-280` (the ELR lists from 3.7). What differs between releases is
which records the controller writes:
`PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded` sets the leader field to the
current leader, forcing a leader epoch bump, on a reassignment and (metadata versions
before 3.6-IV0, or during a ZooKeeper migration) on an ISR shrink (3.5.0
`PartitionChangeBuilder.java:264-271`, 3.6.0 `:289-301`). The fold needs no profile for it:
the bump is in the record.

A `RemoveTopicRecord` removes the topic at once (`TopicsDelta.replay(RemoveTopicRecord)`):
KRaft has no deletion in progress.

Brokers (`ClusterDelta.replay`, 3.7.0 `ClusterDelta.java:85-151`): a registration replaces
the broker's (fenced unless the record says otherwise; `BrokerRegistration.fromRecord`,
`BrokerRegistration.java:198-217`),
an `UnregisterBrokerRecord` removes it, and a fence, unfence or registration change of a
broker that is not registered or under another broker epoch is what Kafka's image throws
on (`getBrokerOrThrow`, `:99-111`): the fold rejects it (a finding) and goes on.

Configs: `min.insync.replicas` and `unclean.leader.election.enable` of a topic, and of the
cluster (a BROKER resource with the empty name, the cluster-wide default); a null value
deletes the setting. A broker's own dynamic value is kept but not applied: which node's
value the active controller reads is not in the log.
"""

from __future__ import annotations

from typing import NamedTuple

from statemachine.kraft import records as K
from statemachine.kraft.records import Ints, MetadataRecord
from statemachine.model import NO_LEADER, Part, Topic


class KraftPart(Part):
    """A partition of the image. The model's `zk_version` holds the partition epoch and
    `controller_epoch` the quorum leader epoch of the batch that last wrote the partition;
    `recovering` is the leader recovery state."""

    __slots__ = ("topic_id", "elr", "last_known_elr")

    def __init__(self, partition: int, topic: str = "", topic_id: str | None = None) -> None:
        super().__init__(partition, topic)
        self.topic_id = topic_id
        self.elr: Ints = ()
        self.last_known_elr: Ints = ()


class Broker:
    """A broker registration (`BrokerRegistration`): the fields the fold reads."""

    __slots__ = ("broker_id", "epoch", "fenced", "in_controlled_shutdown")

    def __init__(self, broker_id: int, epoch: int | None, fenced: bool,
                 in_controlled_shutdown: bool) -> None:
        self.broker_id, self.epoch = broker_id, epoch
        self.fenced, self.in_controlled_shutdown = fenced, in_controlled_shutdown


class Change(NamedTuple):
    """What one record changed: the partitions it wrote (with their leader and ISR
    before), the broker whose registration changed, the topic it removed, or why the image
    refused it."""

    parts: tuple[tuple[KraftPart, int, Ints, Ints], ...] = ()  # (part, leader, isr, elr)
    broker: int | None = None
    removed: Topic | None = None
    config: bool = False  # a setting the windows read changed
    rejected: str | None = None


NOTHING = Change()


def _rejected(why: str) -> Change:
    return Change(rejected=why)


class MetadataImage:
    """Topics, partitions, brokers, the settings the windows read, and the quorum."""

    def __init__(self, default_min_isr: int = 1) -> None:
        self.topics: dict[str, Topic] = {}
        self.names: dict[str, str] = {}  # topic id -> name
        self.topics_by_broker: dict[int, set[str]] = {}
        self.brokers: dict[int, Broker] = {}
        self.static_min_isr = default_min_isr
        self.topic_configs: dict[str, dict[str, str]] = {}
        self.cluster_configs: dict[str, str] = {}
        self.broker_configs: dict[int, dict[str, str]] = {}
        self.quorum_leader = NO_LEADER
        self.quorum_epoch = -1

    # -- what the windows read ---------------------------------------------------------

    def available(self) -> frozenset[int]:
        """The brokers that can lead: registered and unfenced (in controlled shutdown
        too: such a broker still serves until the controller fences it)."""
        return frozenset(b for b, reg in self.brokers.items() if not reg.fenced)

    def min_isr(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, configs in self.topic_configs.items():
            value = _int(configs.get(K.MIN_ISR))
            if value is not None:
                out[name] = value
        return out

    def default_min_isr(self) -> int:
        value = _int(self.cluster_configs.get(K.MIN_ISR))
        return self.static_min_isr if value is None else value

    def topics_on(self, brokers: list[int]) -> list[Topic]:
        names: set[str] = set()
        for b in brokers:
            names |= self.topics_by_broker.get(b, set())
        return [self.topics[n] for n in sorted(names) if n in self.topics]

    # -- the fold ----------------------------------------------------------------------

    def apply(self, r: MetadataRecord) -> Change:
        """Fold one committed record into the image."""
        handler = _HANDLERS.get(r.record_type)
        return NOTHING if handler is None else handler(self, r)

    def _topic_record(self, r: MetadataRecord) -> Change:
        if r.topic is None or r.topic_id is None:
            return _rejected("a TopicRecord without a name or id")
        self.names[r.topic_id] = r.topic
        self.topics.setdefault(r.topic, Topic(r.topic))
        return NOTHING

    def _part_of(self, r: MetadataRecord) -> tuple[Topic | None, KraftPart | None]:
        name = self.names.get(r.topic_id or "")
        topic = None if name is None else self.topics.get(name)
        if topic is None or r.partition is None:
            return topic, None
        part = topic.parts.get(r.partition)
        return topic, part if isinstance(part, KraftPart) else None

    def _assign(self, topic: Topic, replicas: Ints) -> None:
        for b in replicas:
            self.topics_by_broker.setdefault(b, set()).add(topic.name)

    def _partition_record(self, r: MetadataRecord) -> Change:
        topic, part = self._part_of(r)
        if topic is None or r.partition is None:
            return _rejected(f"a PartitionRecord of unknown topic id {r.topic_id}")
        before = (NO_LEADER, (), ()) if part is None else (part.leader, part.isr, part.elr)
        if part is None:
            part = KraftPart(r.partition, topic.name, r.topic_id)
            topic.parts[r.partition] = part
        part.replicas = r.replicas or ()
        part.isr = r.isr or ()
        part.adding, part.removing = r.adding_replicas or (), r.removing_replicas or ()
        part.elr, part.last_known_elr = r.elr or (), r.last_known_elr or ()
        part.has_leadership = True
        part.leader = NO_LEADER if r.leader is None else r.leader
        part.leader_epoch = r.leader_epoch or 0
        part.zk_version = r.partition_epoch or 0
        part.recovering = r.leader_recovery_state == K.RECOVERING
        self._written(part, r)
        self._assign(topic, part.replicas)
        return Change(parts=((part, *before),))

    def _partition_change(self, r: MetadataRecord) -> Change:
        topic, part = self._part_of(r)
        if topic is None or part is None:
            return _rejected(f"a PartitionChangeRecord of unknown partition "
                             f"{r.topic_id}:{r.partition}")
        before = (part.leader, part.isr, part.elr)
        merge(part, r)
        self._written(part, r)
        self._assign(topic, part.replicas)
        return Change(parts=((part, *before),))

    def _written(self, part: KraftPart, r: MetadataRecord) -> None:
        epoch = r.batch_leader_epoch
        part.controller_epoch = self.quorum_epoch if epoch is None else epoch
        part.last_seq = -1 if r.offset is None else r.offset

    def _remove_topic(self, r: MetadataRecord) -> Change:
        name = self.names.pop(r.topic_id or "", None)
        topic = None if name is None else self.topics.pop(name, None)
        if topic is None:
            return _rejected(f"a RemoveTopicRecord of unknown topic id {r.topic_id}")
        self.topic_configs.pop(topic.name, None)
        return Change(removed=topic)

    def _register(self, r: MetadataRecord) -> Change:
        if r.broker_id is None:
            return _rejected("a RegisterBrokerRecord without a broker id")
        self.brokers[r.broker_id] = Broker(
            r.broker_id, r.broker_epoch, True if r.fenced is None else r.fenced,
            bool(r.in_controlled_shutdown))
        return Change(broker=r.broker_id)

    def _unregister(self, r: MetadataRecord) -> Change:
        if r.broker_id is None or self.brokers.pop(r.broker_id, None) is None:
            return _rejected(f"an UnregisterBrokerRecord of unregistered broker {r.broker_id}")
        return Change(broker=r.broker_id)

    def _broker_change(self, r: MetadataRecord) -> Change:
        reg = None if r.broker_id is None else self.brokers.get(r.broker_id)
        if reg is None:
            return _rejected(f"a {r.record_type} of unregistered broker {r.broker_id}")
        if r.broker_epoch is not None and reg.epoch is not None and r.broker_epoch != reg.epoch:
            return _rejected(f"a {r.record_type} of broker {r.broker_id} at broker epoch "
                             f"{r.broker_epoch}, registered at {reg.epoch}")
        if r.fenced is not None:
            reg.fenced = r.fenced
        if r.in_controlled_shutdown is not None:
            reg.in_controlled_shutdown = r.in_controlled_shutdown
        return Change(broker=reg.broker_id)

    def _config(self, r: MetadataRecord) -> Change:
        kind, resource, name = r.config_resource_type, r.config_resource or "", r.config_name
        if name is None:
            return NOTHING
        read = True  # a setting the windows read (not a single broker's)
        if kind == "TOPIC" and resource:
            target = self.topic_configs.setdefault(resource, {})
        elif kind == "BROKER" and resource == "":
            target = self.cluster_configs
        elif kind == "BROKER" and resource.isdigit():
            target, read = self.broker_configs.setdefault(int(resource), {}), False
        else:
            return NOTHING
        if r.config_value is None:
            target.pop(name, None)
        else:
            target[name] = r.config_value
        if name == K.UNCLEAN and kind == "TOPIC" and resource in self.topics:
            self.topics[resource].unclean_leader_election_enable = _bool(r.config_value)
        return Change(config=read and name == K.MIN_ISR)

    def _clear_elr(self, r: MetadataRecord) -> Change:
        """4.x `ClearElrRecord`: the ELR and last known ELR of the topic's partitions (a
        null topic: every topic's) are emptied, as a change of each partition."""
        names = [self.names.get(r.topic_id or "")] if r.topic_id else list(self.topics)
        changed = []
        for name in names:
            for part in (self.topics[name].parts.values() if name in self.topics else ()):
                if isinstance(part, KraftPart) and (part.elr or part.last_known_elr):
                    changed.append((part, part.leader, part.isr, part.elr))
                    part.elr = part.last_known_elr = ()
        return Change(parts=tuple(changed))


def merge(part: KraftPart, r: MetadataRecord) -> None:
    """`PartitionRegistration.merge`: the record's fields over the partition, the leader
    epoch bumped when the record names a leader, the partition epoch always."""
    if r.replicas is not None:
        part.replicas = r.replicas
    if r.isr is not None:
        part.isr = r.isr
    if r.removing_replicas is not None:
        part.removing = r.removing_replicas
    if r.adding_replicas is not None:
        part.adding = r.adding_replicas
    if r.leader is not None and r.leader != K.NO_LEADER_CHANGE:
        part.leader = r.leader
        part.leader_epoch += 1
    if r.leader_recovery_state is not None and r.leader_recovery_state >= 0:
        part.recovering = r.leader_recovery_state == K.RECOVERING
    if r.elr is not None:
        part.elr = r.elr
    if r.last_known_elr is not None:
        part.last_known_elr = r.last_known_elr
    part.zk_version += 1


def _int(value: str | None) -> int | None:
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def _bool(value: str | None) -> bool | None:
    return None if value is None else value.strip().lower() == "true"


_HANDLERS = {
    K.TOPIC: MetadataImage._topic_record,
    K.PARTITION: MetadataImage._partition_record,
    K.PARTITION_CHANGE: MetadataImage._partition_change,
    K.REMOVE_TOPIC: MetadataImage._remove_topic,
    K.REGISTER_BROKER: MetadataImage._register,
    K.UNREGISTER_BROKER: MetadataImage._unregister,
    K.FENCE_BROKER: MetadataImage._broker_change,
    K.UNFENCE_BROKER: MetadataImage._broker_change,
    K.BROKER_REGISTRATION_CHANGE: MetadataImage._broker_change,
    K.CONFIG: MetadataImage._config,
    K.CLEAR_ELR: MetadataImage._clear_elr,
}
MODELLED = frozenset(_HANDLERS)
