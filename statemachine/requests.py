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


def stop_replica_epoch(topic: Topic, part: Part) -> int:
    """`context.leaderEpoch(p)` as StopReplica uses it, evaluated at add time."""
    if topic.queued:
        return EPOCH_DURING_DELETE
    return part.leader_epoch if part.has_leadership else NO_EPOCH


class Batch:
    __slots__ = ("ctx", "topic", "lai", "um", "um_all", "um_to", "sr")

    def __init__(self, ctx: Ctx, topic: Topic) -> None:
        self.ctx = ctx
        self.topic = topic
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
        live = self.ctx.live
        offline = tuple(r for r in part.replicas if r not in live)
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
        ctx = self.ctx
        if not (self.lai or self.um or self.sr):
            return
        name, seq, ts, epoch = self.topic.name, ctx.seq, ctx.ts, ctx.epoch
        registered = ctx.live_or_sd
        batches: dict[int, int] = {}

        def batch_of(p: int) -> int:
            n = batches.get(p)
            if n is None:
                n = batches[p] = ctx.next_batch(name, p)
                part = self.topic.parts.get(p)
                if part is not None:
                    part.last_seq = seq
            return n

        out = ctx.out
        for (b, p), s in self.lai.items():
            if b in registered:
                out.leader_and_isr.append(LeaderAndIsrRow(
                    seq, ts, batch_of(p), epoch, b, name, p, s[0], s[1], s[2], s[3], s[4],
                    s[5], s[6], s[7], s[9], s[8]))
        to: Ints | None = None
        if not self.um_all:
            to = tuple(sorted(b for b in self.um_to if b in registered))
        if self.um and (to is None or to):
            for p, u in self.um.items():
                out.update_metadata.append(UpdateMetadataRow(
                    seq, ts, batch_of(p), epoch, name, p, u[0], u[1], u[2], u[3], u[4], u[5],
                    u[6], to))
        for (b, p), (delete, leader_epoch) in self.sr.items():
            if b in registered:
                out.stop_replica.append(StopReplicaRow(
                    seq, ts, batch_of(p), epoch, b, name, p, delete, leader_epoch))
