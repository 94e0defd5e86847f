"""`ReplicationControlManager`'s broker operations, re-executed on the image for a what-if:
the records a KRaft controller writes when it fences a broker, when a broker enters a
controlled shutdown, when it unfences one and when one is unregistered, in its record
order (3.7.0
`ReplicationControlManager.java`; the trunk of 2024-10 the same at `:1287-1375`):

* `handleBrokerFenced` (`:1289-1306`): for each partition with the broker in its ISR, the
  change with the broker out of the target ISR and not acceptable as leader, then the
  fence (`BrokerRegistrationChangeRecord` with `fenced` from metadata version 3.3-IV2,
  before it a `FenceBrokerRecord`);
* `handleBrokerUnregistered` (`:1318-1325`, `unregisterBroker` for a decommissioned
  broker): the same changes as a fence, then the `UnregisterBrokerRecord`;
* `handleBrokerInControlledShutdown` (`:1363-1373`): the registration change into
  controlled shutdown (when not in one already), then the same changes as a fence;
* `handleBrokerUnfenced` (`:1338-1350`): the unfence, then for each partition without a
  leader the change with the broker acceptable as leader (the image still has it fenced
  while the records are generated).

Each change is `PartitionChangeBuilder`'s (`statemachine.kraft.election`) in
`generateLeaderAndIsrUpdates` (`:1821-1894`): a leader is acceptable when it is not the
broker removed and is active (registered, unfenced, not in controlled shutdown,
`ClusterControlManager.isActive`, 3.7.0 `:663-667`) or is the broker added; unclean when
the topic's `unclean.leader.election.enable` is (`uncleanLeaderElectionEnabledForTopic`);
the min ISR the topic's, capped by its replication factor (`getTopicEffectiveMinIsr`,
`:2186-2206`). Kafka iterates the partitions in its `BrokersToIsrs` hash order; here they
go by topic name and partition, which orders the records of one operation and nothing
else (one operation's windows are settled together).

The records of an operation are generated against the image before any of them is
applied, as the controller generates them before the batch is replayed. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from statemachine.kraft import records as K
from statemachine.kraft.election import Change, Rules, build
from statemachine.kraft.image import KraftPart, MetadataImage
from statemachine.kraft.profiles import KraftProfile
from statemachine.kraft.records import MetadataRecord

FENCE, SHUTDOWN, UNFENCE = "fence", "controlled_shutdown", "unfence"
UNREGISTER = "unregister"
OPERATIONS = (FENCE, SHUTDOWN, UNFENCE)  # what a scenario injects


@dataclass(frozen=True)
class Settings:
    """What a variant changes in the settings the controller reads."""

    profile: KraftProfile
    elr: bool = False  # eligible leader replicas enabled (on a profile that has them)
    registration_change: bool = True  # fences as BrokerRegistrationChangeRecords (3.3-IV2+)
    unclean_default: bool | None = None  # over the cluster's unclean.leader.election.enable
    topic_unclean: dict[str, bool] = field(default_factory=dict)  # over a topic's own
    topic_min_isr: dict[str, int] = field(default_factory=dict)


def unclean_for(image: MetadataImage, topic: str, s: Settings) -> bool:
    """`uncleanLeaderElectionEnabledForTopic`: the variant's topic setting, the topic's own,
    the cluster's (the variant's default first), else false."""
    if topic in s.topic_unclean:
        return s.topic_unclean[topic]
    for value in (image.topic_configs.get(topic, {}).get(K.UNCLEAN),
                  None if s.unclean_default is None else str(s.unclean_default),
                  image.cluster_configs.get(K.UNCLEAN)):
        if value is not None:
            return value.strip().lower() == "true"
    return False


def min_isr_for(image: MetadataImage, topic: str, s: Settings) -> int:
    """`getTopicEffectiveMinIsr`: the topic's min.insync.replicas (the variant's, its own,
    the cluster default) capped by its replication factor."""
    value = s.topic_min_isr.get(topic, image.min_isr().get(topic, image.default_min_isr()))
    parts = image.topics[topic].parts if topic in image.topics else {}
    first = parts.get(0) or next(iter(parts.values()), None)
    return min(value, len(first.replicas)) if first is not None and first.replicas else value


def active(image: MetadataImage, broker: int) -> bool:
    reg = image.brokers.get(broker)
    return reg is not None and not reg.fenced and not reg.in_controlled_shutdown


def _parts(image: MetadataImage, keep: Callable[[KraftPart], bool]) -> Iterator[KraftPart]:
    for name in sorted(image.topics):
        for part in image.topics[name].sorted_parts():
            if isinstance(part, KraftPart) and keep(part):
                yield part


def _changes(image: MetadataImage, s: Settings, parts: Iterator[KraftPart], remove: int,
             add: int) -> list[MetadataRecord]:
    """`generateLeaderAndIsrUpdates(remove, add)` over `parts`."""
    def acceptable(r: int) -> bool:
        return r != remove and (r == add or active(image, r))

    out = []
    for part in parts:
        rules = Rules(acceptable, unclean_for(image, part.topic, s), s.elr,
                      min_isr_for(image, part.topic, s), s.profile.isr_shrink_bumps_leader_epoch)
        change = build(part, tuple(r for r in part.isr if r != remove), rules)
        if change is not None:
            out.append(change_record(part, change))
    return out


def change_record(part: KraftPart, change: Change) -> MetadataRecord:
    """The `PartitionChangeRecord` of `change` to `part` (no offset, batch or time yet)."""
    return with_change(MetadataRecord(None, None, None, None, K.PARTITION_CHANGE,
                                      topic=part.topic, topic_id=part.topic_id,
                                      partition=part.partition), change)


def with_change(r: MetadataRecord, change: Change) -> MetadataRecord:
    """`r` with the fields of `change` (every one: a field the change leaves out is None)."""
    return r._replace(leader=change.leader, isr=change.isr, elr=change.elr,
                      last_known_elr=change.last_known_elr,
                      leader_recovery_state=change.leader_recovery_state,
                      replicas=change.replicas, adding_replicas=change.adding,
                      removing_replicas=change.removing)


def _registration(image: MetadataImage, broker: int, s: Settings, fenced: bool | None,
                  shutdown: bool | None = None) -> MetadataRecord:
    reg = image.brokers[broker]
    if shutdown is None and not s.registration_change:
        kind = K.FENCE_BROKER if fenced else K.UNFENCE_BROKER
        return MetadataRecord(None, None, None, None, kind, broker_id=broker,
                              broker_epoch=reg.epoch, fenced=fenced)
    return MetadataRecord(None, None, None, None, K.BROKER_REGISTRATION_CHANGE,
                          broker_id=broker, broker_epoch=reg.epoch, fenced=fenced,
                          in_controlled_shutdown=shutdown)


def operation(image: MetadataImage, kind: str, broker: int,
              s: Settings) -> list[MetadataRecord]:
    """The records of `kind` on `broker`, in Kafka's order; none when the broker is not
    registered, or is already in the state the operation puts it in."""
    reg = image.brokers.get(broker)
    if reg is None:
        return []
    if kind == UNFENCE:
        if not reg.fenced:
            return []
        return [_registration(image, broker, s, False),
                *_changes(image, s, _parts(image, lambda p: p.leader == K.NO_LEADER),
                          K.NO_LEADER, broker)]
    with_broker = _parts(image, lambda p: broker in p.isr)
    if kind == UNREGISTER:
        return [*_changes(image, s, with_broker, broker, K.NO_LEADER),
                MetadataRecord(None, None, None, None, K.UNREGISTER_BROKER, broker_id=broker,
                               broker_epoch=reg.epoch)]
    if kind == FENCE:
        if reg.fenced:
            return []
        return [*_changes(image, s, with_broker, broker, K.NO_LEADER),
                _registration(image, broker, s, True)]
    if reg.fenced:
        return []
    enter = [] if reg.in_controlled_shutdown else [_registration(image, broker, s, None, True)]
    return [*enter, *_changes(image, s, with_broker, broker, K.NO_LEADER)]
