"""A plan driven through the ZooKeeper-mode core (`statemachine.replay.Fold`).

The state rows become PartitionSnapshot events at seq 0 (`initializeControllerContext`:
the controller's view of the ZooKeeper data with the brokers live at the end of the run),
and each step k becomes controller events at seqs from 10k:

* fail: one `BrokerChange` losing the brokers (`onBrokerFailure`: ISR shrink, elections);
* shutdown: a `ControlledShutdown` request per broker (`doControlledShutdown` moves the
  leaderships away first), then the `BrokerChange` of their exit;
* restart: a `BrokerChange` adding the brokers (`onBrokerStartup`), then, for every
  partition with a live leader, the leader's AlterPartition adding the restarted replicas
  back to the ISR: the plan waits until they caught up before its next step;
* reassign: the reassignment request (`onPartitionReassignment`), then the AlterPartition
  of its new live replicas, which completes it (the plan waits for it too);
* config: a `TopicConfigChanged` per topic for unclean.leader.election.enable (the
  controller tries an unclean election of the offline partitions); min.insync.replicas is
  read by `check`, the controller does not act on it.

Elections, ISR shrink and request order are the core's; nothing of them is decided here.
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
from jobs.whatif.plan_check.state import StartState
from jobs.whatif.plan_check.status import PartStatus, Snapshot
from schemas import event_types as ET
from statemachine.cluster import build_timeline
from statemachine.context import ReplayConfig
from statemachine.events import Event
from statemachine.replay import Fold
from statemachine.states import PartitionState

SOURCE = "plan"


def _seq(step: int, offset: int = 0) -> int:
    return 10 * step + offset


def _event(seq: int, event_type: str, **fields: object) -> Event:
    return Event(seq, seq * 1_000_000, event_type, source=f"{SOURCE} step {seq // 10}",
                 **fields)  # type: ignore[arg-type]


def seed_events(state: StartState, settings: Settings) -> list[Event]:
    return [_event(0, ET.PARTITION_SNAPSHOT, topic=p.topic, partition=p.partition,
                   replicas=p.replicas, isr=p.isr, leader=-1 if p.leader is None else p.leader,
                   leader_epoch=p.leader_epoch, zk_version=p.zk_version,
                   controller_epoch=p.controller_epoch,
                   unclean_leader_election=settings.unclean_of(p.topic))
            for p in state.partitions]


def cluster_events(steps: Sequence[Step]) -> list[Event]:
    """The steps' broker events (the timeline is built from them up front)."""
    out: list[Event] = []
    for i, s in enumerate(steps, start=1):
        for b in s.brokers:
            if s.action == FAIL:
                out.append(_event(_seq(i), ET.BROKER_FAILURE, broker_id=b))
            elif s.action == SHUTDOWN:
                out.append(_event(_seq(i), ET.CONTROLLED_SHUTDOWN, broker_id=b))
                out.append(_event(_seq(i, 1), ET.BROKER_FAILURE, broker_id=b))
            elif s.action == RESTART:
                out.append(_event(_seq(i), ET.BROKER_STARTUP, broker_id=b))
    return out


def _topics(state: StartState) -> list[str]:
    return sorted({p.topic for p in state.partitions})


def _partition_events(i: int, s: Step, state: StartState) -> list[Event]:
    if s.action == REASSIGN:
        return [_event(_seq(i), ET.REASSIGNMENT_REQUESTED, topic=s.topic,
                       partition=s.partition, replicas=s.replicas)]
    if s.action == CONFIG and s.unclean_leader_election_enable is not None:
        return [_event(_seq(i), ET.TOPIC_CONFIG_CHANGED, topic=t,
                       unclean_leader_election=s.unclean_leader_election_enable)
                for t in ([s.topic] if s.topic else _topics(state))]
    return []


def _catch_up(fold: Fold, i: int, brokers: Iterable[int]) -> list[Event]:
    """The leaders' AlterPartition adding `brokers`' replicas that are live and out of the
    ISR (a partition without a live leader gets none: nothing fetches from it)."""
    ctx, wanted = fold.ctx, set(brokers)
    out = []
    for name in sorted(ctx.topics):
        for part in ctx.topics[name].sorted_parts():
            if not part.has_leadership or part.leader not in ctx.live:
                continue
            joining = [r for r in part.replicas
                       if r in wanted and r in ctx.live and r not in part.isr]
            if joining:
                out.append(_event(_seq(i, 5), ET.ISR_CHANGED, topic=name,
                                  partition=part.partition, isr=(*part.isr, *joining),
                                  leader_epoch=part.leader_epoch))
    return out


def snapshot(fold: Fold) -> Snapshot:
    out: Snapshot = {}
    for name, topic in fold.ctx.topics.items():
        for part in topic.parts.values():
            if not part.replicas:
                continue
            leader = part.leader if part.has_leadership else -1
            out[(name, part.partition)] = PartStatus(
                leader, tuple(part.isr), tuple(part.replicas),
                part.partition_state != PartitionState.OnlinePartition)
    return out


def run_steps(state: StartState, settings: Settings, steps: Sequence[Step]) -> list[Snapshot]:
    """The partitions' status before the first step and after each step."""
    config = ReplayConfig(unclean_leader_election_enable=settings.unclean_leader_election_enable,
                          min_insync_replicas=settings.min_insync_replicas,
                          topic_min_insync_replicas=tuple(
                              sorted(settings.topic_min_insync_replicas.items())))
    epoch = max((p.controller_epoch or 0 for p in state.partitions), default=0)
    timeline = build_timeline(cluster_events(steps), initial_live=state.serving,
                              initial_epoch=epoch, profile=config.profile)
    fold = Fold(None, timeline, config)
    fold.feed(seed_events(state, settings), checked=False)
    fold.cut(_seq(1))
    snapshots = [snapshot(fold)]
    for i, s in enumerate(steps, start=1):
        fold.feed(_partition_events(i, s, state))
        fold.cut(_seq(i, 5))
        joining = s.brokers if s.action == RESTART else s.replicas if s.action == REASSIGN \
            else ()
        fold.feed(_catch_up(fold, i, joining))
        fold.cut(_seq(i + 1))
        snapshots.append(snapshot(fold))
    return snapshots
