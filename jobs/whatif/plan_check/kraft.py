"""A plan driven through the KRaft core: a metadata image seeded from the state rows, and
`ReplicationControlManager`'s broker operations (`statemachine.kraft.controller`) applied
record by record, as the quorum controller writes and replays them.

The image gets a `RegisterBrokerRecord` per broker (unfenced when `broker_timeline` has it
live), a `TopicRecord` and a `PartitionRecord` per partition of `partition_states`
(leader, ISR, leader and partition epochs), and `ConfigRecord`s of the plan's settings.
Each step:

* fail: the brokers' sessions expire, one after the other (`handleBrokerFenced`);
* shutdown: `handleBrokerInControlledShutdown` (leaderships and ISR membership leave
  first), then the fence of the broker's exit;
* restart: a new registration, then `handleBrokerUnfenced` (a leaderless partition whose
  ISR holds the broker elects it), then the leaders' AlterPartition adding the restarted
  replicas to the ISR (the plan waits until they caught up);
* reassign: `changePartitionReassignment` (`statemachine.kraft.requests.reassign`: the
  target replicas, the adding and removing ones, completed at once when the ISR allows),
  then the leader's AlterPartition adding the new replicas that are active, which
  completes it (`alter_partition`; the plan waits until they caught up). A leader the
  plan took down sends none: the reassignment stays in progress;
* config: `ConfigRecord`s; the controller reads them at the next step's elections.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from jobs.whatif.plan_check.plan_file import (
    CONFIG,
    FAIL,
    REASSIGN,
    RESTART,
    SHUTDOWN,
    Settings,
    Step,
)
from jobs.whatif.plan_check.state import LIVE, SHUTTING_DOWN, StartState
from jobs.whatif.plan_check.status import PartStatus, Snapshot
from statemachine.kraft import records as K
from statemachine.kraft.controller import FENCE, UNFENCE, active, change_record, operation
from statemachine.kraft.controller import SHUTDOWN as IN_SHUTDOWN
from statemachine.kraft.controller import Settings as ControllerSettings
from statemachine.kraft.image import KraftPart, MetadataImage
from statemachine.kraft.profiles import DEFAULT_KRAFT_VERSION, kraft_profile_for
from statemachine.kraft.requests import Decision, alter_partition, reassign


def _record(kind: str, **fields: object) -> K.MetadataRecord:
    return K.MetadataRecord(None, None, None, None, kind, **fields)  # type: ignore[arg-type]


def _config(name: str, value: object, topic: str | None) -> K.MetadataRecord:
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return _record(K.CONFIG, config_resource_type="TOPIC" if topic else "BROKER",
                   config_resource=topic or "", config_name=name, config_value=text)


def seeded_image(state: StartState, settings: Settings) -> MetadataImage:
    image = MetadataImage(settings.min_insync_replicas)
    for b in sorted(state.known_brokers()):
        status = state.brokers.get(b)
        image.apply(_record(K.REGISTER_BROKER, broker_id=b, broker_epoch=1,
                            fenced=status not in (LIVE, SHUTTING_DOWN),
                            in_controlled_shutdown=status == SHUTTING_DOWN))
    for topic in sorted({p.topic for p in state.partitions}):
        image.apply(_record(K.TOPIC, topic=topic, topic_id=f"plan-{topic}"))
    for p in state.partitions:
        image.apply(_record(K.PARTITION, topic=p.topic, topic_id=f"plan-{p.topic}",
                            partition=p.partition, replicas=p.replicas, isr=p.isr,
                            leader=K.NO_LEADER if p.leader is None else p.leader,
                            leader_epoch=p.leader_epoch, partition_epoch=p.zk_version))
    image.apply(_config(K.MIN_ISR, settings.min_insync_replicas, None))
    image.apply(_config(K.UNCLEAN, settings.unclean_leader_election_enable, None))
    for topic, value in sorted(settings.topic_min_insync_replicas.items()):
        image.apply(_config(K.MIN_ISR, value, topic))
    for topic, flag in sorted(settings.topic_unclean_leader_election_enable.items()):
        image.apply(_config(K.UNCLEAN, flag, topic))
    return image


def _apply(image: MetadataImage, records: Iterable[K.MetadataRecord]) -> None:
    for r in list(records):  # generated against the image before any is applied
        image.apply(r)


def _parts(image: MetadataImage) -> Iterable[KraftPart]:
    for name in sorted(image.topics):
        for part in image.topics[name].sorted_parts():
            if isinstance(part, KraftPart):
                yield part


def _catch_up(image: MetadataImage, brokers: Sequence[int]) -> None:
    """The leaders' AlterPartition adding the live `brokers` out of the ISR."""
    live = image.available()
    for part in list(_parts(image)):
        if part.leader < 0 or part.leader not in live:
            continue
        joining = tuple(r for r in part.replicas
                        if r in brokers and r in live and r not in part.isr)
        if joining:
            image.apply(_record(K.PARTITION_CHANGE, topic=part.topic, topic_id=part.topic_id,
                                partition=part.partition, leader=K.NO_LEADER_CHANGE,
                                isr=(*part.isr, *joining)))


def _decided(image: MetadataImage, part: KraftPart, decision: Decision) -> None:
    if decision.change is not None:
        image.apply(change_record(part, decision.change))


def _reassign(image: MetadataImage, s: Step, ctl: ControllerSettings) -> None:
    """The reassignment, then its new replicas caught up (module docstring)."""
    topic = image.topics.get(s.topic or "")
    part = None if topic is None or s.partition is None else topic.parts.get(s.partition)
    if not isinstance(part, KraftPart):
        return
    _decided(image, part, reassign(image, part, s.replicas, ctl))
    joining = tuple(r for r in part.adding if r not in part.isr and active(image, r))
    if joining and part.leader >= 0 and active(image, part.leader):
        _decided(image, part, alter_partition(image, part, (*part.isr, *joining), ctl))


def _step(image: MetadataImage, s: Step, ctl: ControllerSettings) -> None:
    if s.action == FAIL:
        for b in s.brokers:
            _apply(image, operation(image, FENCE, b, ctl))
    elif s.action == SHUTDOWN:
        for b in s.brokers:
            _apply(image, operation(image, IN_SHUTDOWN, b, ctl))
        for b in s.brokers:
            _apply(image, operation(image, FENCE, b, ctl))
    elif s.action == RESTART:
        for b in s.brokers:
            reg = image.brokers.get(b)
            if reg is None or not reg.fenced:
                continue
            image.apply(_record(K.REGISTER_BROKER, broker_id=b, broker_epoch=(reg.epoch or 0)
                                + 1, fenced=True, in_controlled_shutdown=False))
            _apply(image, operation(image, UNFENCE, b, ctl))
        _catch_up(image, s.brokers)
    elif s.action == REASSIGN:
        _reassign(image, s, ctl)
    elif s.action == CONFIG:
        if s.min_insync_replicas is not None:
            image.apply(_config(K.MIN_ISR, s.min_insync_replicas, s.topic))
        if s.unclean_leader_election_enable is not None:
            image.apply(_config(K.UNCLEAN, s.unclean_leader_election_enable, s.topic))


def snapshot(image: MetadataImage) -> Snapshot:
    return {(p.topic, p.partition): PartStatus(p.leader, tuple(p.isr), tuple(p.replicas),
                                               p.leader < 0)
            for p in _parts(image) if p.replicas}


def run_steps(state: StartState, settings: Settings, steps: Sequence[Step]) -> list[Snapshot]:
    """The partitions' status before the first step and after each step."""
    image = seeded_image(state, settings)
    ctl = ControllerSettings(kraft_profile_for(DEFAULT_KRAFT_VERSION))
    snapshots = [snapshot(image)]
    for s in steps:
        _step(image, s, ctl)
        snapshots.append(snapshot(image))
    return snapshots
