"""`AbstractControllerBrokerRequestBatch` for the partitions of one topic (semantics §2).

One `Batch` is one state-machine call: the adds accumulate, `send()` emits the requests
the controller would send. Within a batch a later add for the same (broker, partition)
overwrites the earlier one, except that LeaderAndIsr `isNew` and StopReplica
`deletePartition` are sticky. Every LeaderAndIsr add implies an UpdateMetadata for the
partition to all live-or-shutting-down brokers. Brokers that are not registered at send
time are dropped silently, as Kafka does.
"""

from __future__ import annotations

from typing import Any

from statemachine.context import Ctx
from statemachine.model import (
    EPOCH_DURING_DELETE,
    LEADER_DURING_DELETE,
    NO_EPOCH,
    RECOVERED,
    RECOVERING,
    Part,
    Topic,
)
from statemachine.rows import Ints, LeaderAndIsrRow, StopReplicaRow, UpdateMetadataRow

_new = tuple.__new__  # NamedTuple rows at C speed


def stop_replica_epoch(topic: Topic, part: Part) -> int:
    """`context.leaderEpoch(p)` as StopReplica uses it, evaluated at add time."""
    if topic.queued:
        return EPOCH_DURING_DELETE
    return part.leader_epoch if part.has_leadership else NO_EPOCH


def offline_replicas(ctx: Ctx, part: Part) -> Ints:
    live = ctx.live
    if live.issuperset(part.replicas):  # the common case, without a Python loop
        return ()
    return tuple(r for r in part.replicas if r not in live)


def send_update_metadata(ctx: Ctx, topic: Topic, part: Part) -> None:
    """`sendUpdateMetadataRequest(all live or shutting-down brokers, {p})`: a batch holding
    one partition's UM. Built directly: it is the hot path of every ISR change."""
    if not part.has_leadership:
        return
    if topic.queued:
        leader, leader_epoch, zk_version = LEADER_DURING_DELETE, 0, 0
    else:
        leader, leader_epoch, zk_version = part.leader, part.leader_epoch, part.zk_version
    ctx.out.update_metadata.append(_new(UpdateMetadataRow, (
        ctx.seq, ctx.ts, ctx.batch_number(part, ctx.new_batch()), ctx.epoch, topic.name,
        part.partition, part.ctrl_epoch, leader, leader_epoch, part.isr, zk_version,
        part.replicas, offline_replicas(ctx, part), None)))


class Batch:
    __slots__ = ("ctx", "topic", "id", "lai", "um", "um_all", "um_to", "sr")

    def __init__(self, ctx: Ctx, topic: Topic) -> None:
        self.ctx = ctx
        self.topic = topic
        self.id = ctx.new_batch()
        # (broker, partition) -> (LAI fields..., is_new); insertion order is send order.
        self.lai: dict[tuple[int, int], tuple[Any, ...]] = {}
        self.um: dict[int, tuple[Any, ...]] = {}  # partition -> UM partition state
        self.um_all = False  # some add addressed every live-or-shutting-down broker
        self.um_to: set[int] = set()
        self.sr: dict[tuple[int, int], tuple[bool, int]] = {}  # -> (delete, leader epoch)

    def add_leader_and_isr(self, brokers: Ints, part: Part, is_new: bool) -> None:
        state = (
            part.ctrl_epoch, part.leader, part.leader_epoch, part.isr, part.zk_version,
            part.replicas, part.adding, part.removing,
            RECOVERING if part.recovering else RECOVERED,
        )
        lai = self.lai
        p = part.partition
        for b in brokers:
            if b < 0:
                continue
            key = (b, p)
            prev = lai.get(key)
            lai[key] = (*state, is_new or (prev is not None and prev[-1]))
        self.add_update_metadata(part)

    def add_update_metadata(self, part: Part | None, to: Ints | None = None) -> None:
        """Queue an UM to `to` (None: all live or shutting-down brokers). A partition with
        no leadership info adds no partition state; the UM then only refreshes brokers."""
        if to is None:
            self.um_all = True
        else:
            self.um_to.update(b for b in to if b >= 0)
        if part is None or not part.has_leadership:
            return
        offline = offline_replicas(self.ctx, part)
        if self.topic.queued:
            # A topic queued for deletion is advertised with LeaderDuringDelete.
            self.um[part.partition] = (
                part.ctrl_epoch, LEADER_DURING_DELETE, 0, part.isr, 0, part.replicas, offline)
        else:
            self.um[part.partition] = (
                part.ctrl_epoch, part.leader, part.leader_epoch, part.isr, part.zk_version,
                part.replicas, offline)

    def add_stop_replica(self, brokers: Ints, part: Part, delete: bool) -> None:
        epoch = stop_replica_epoch(self.topic, part)
        sr = self.sr
        p = part.partition
        for b in brokers:
            if b < 0:
                continue
            prev = sr.get((b, p))
            sr[(b, p)] = (delete or (prev is not None and prev[0]), epoch)

    def send(self) -> None:
        """`sendRequestsToBrokers`: LeaderAndIsr, then UpdateMetadata, then StopReplica."""
        lai, um, sr = self.lai, self.um, self.sr
        if not (lai or um or sr):
            return
        ctx = self.ctx
        parts = self.topic.parts
        name, seq, ts, epoch = self.topic.name, ctx.seq, ctx.ts, ctx.epoch
        registered = ctx.live_or_sd
        number = ctx.batch_number
        batch_id = self.id
        out = ctx.out
        if lai:
            rows = out.leader_and_isr
            for (b, p), s in lai.items():
                if b in registered:
                    rows.append(_new(LeaderAndIsrRow, (
                        seq, ts, number(parts[p], batch_id), epoch, b, name, p, s[0], s[1], s[2],
                        s[3], s[4], s[5], s[6], s[7], s[9], s[8])))
        if um:
            to: Ints | None = None
            if not self.um_all:
                to = tuple(sorted(b for b in self.um_to if b in registered))
            if to is None or to:
                rows_um = out.update_metadata
                for p, u in um.items():
                    rows_um.append(_new(UpdateMetadataRow, (
                        seq, ts, number(parts[p], batch_id), epoch, name, p, u[0], u[1], u[2],
                        u[3], u[4], u[5], u[6], to)))
        if sr:
            rows_sr = out.stop_replica
            for (b, p), (delete, leader_epoch) in sr.items():
                if b in registered:
                    rows_sr.append(_new(StopReplicaRow, (
                        seq, ts, number(parts[p], batch_id), epoch, b, name, p, delete,
                        leader_epoch)))
