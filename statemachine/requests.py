"""`AbstractControllerBrokerRequestBatch` for the partitions of one topic (Kafka 3.7.1,
`ControllerChannelManager.scala`).

One `RequestBatch` is one state-machine call: the adds accumulate, `send()` emits the requests
the controller would send. Within a batch a later add for the same (broker, partition)
overwrites the earlier one, except that LeaderAndIsr `isNew` and StopReplica
`deletePartition` are sticky. Every LeaderAndIsr add implies an UpdateMetadata for the
partition to all live-or-shutting-down brokers. Brokers that are not registered at send
time are dropped silently, as Kafka does.
"""

from __future__ import annotations

from typing import NamedTuple

from statemachine.context import ControllerContext
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
    if topic.queued_for_deletion:
        return EPOCH_DURING_DELETE
    return part.leader_epoch if part.has_leadership else NO_EPOCH


def offline_replicas(ctx: ControllerContext, part: Part) -> Ints:
    live = ctx.live
    if live.issuperset(part.replicas):  # the common case, without a Python loop
        return ()
    return tuple(r for r in part.replicas if r not in live)


def send_update_metadata(ctx: ControllerContext, topic: Topic, part: Part) -> None:
    """`sendUpdateMetadataRequest(all live or shutting-down brokers, {p})`: a batch holding
    one partition's UM. Built directly: it is the hot path of every ISR change."""
    if not part.has_leadership:
        return
    if topic.queued_for_deletion:
        leader, leader_epoch, zk_version = LEADER_DURING_DELETE, 0, 0
    else:
        leader, leader_epoch, zk_version = part.leader, part.leader_epoch, part.zk_version
    ctx.out.update_metadata.append(_new(UpdateMetadataRow, (
        ctx.seq, ctx.ts, ctx.batch_number(part, ctx.new_batch()), ctx.epoch, topic.name,
        part.partition, part.controller_epoch, leader, leader_epoch, part.isr, zk_version,
        part.replicas, offline_replicas(ctx, part), None)))


class LeaderAndIsrEntry(NamedTuple):
    """The partition state a batch holds for one (broker, partition) LeaderAndIsr: the
    partition-level fields of `LeaderAndIsrRow`, in its column order."""

    controller_epoch: int  # of the controller that wrote the state
    leader: int
    leader_epoch: int
    isr: Ints
    zk_version: int
    replicas: Ints
    adding_replicas: Ints
    removing_replicas: Ints
    is_new: bool
    leader_recovery_state: str


class UpdateMetadataEntry(NamedTuple):
    """The UpdateMetadata partition state a batch holds for one partition: the
    partition-level fields of `UpdateMetadataRow`, in its column order."""

    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: Ints
    zk_version: int
    replicas: Ints
    offline_replicas: Ints


class StopReplicaEntry(NamedTuple):
    """What a batch holds for one (broker, partition) StopReplica."""

    delete_partition: bool
    leader_epoch: int | None  # None: the request has no leader epochs (before IBP 2.6)


class RequestBatch:
    """`ControllerBrokerRequestBatch` for one topic: `newBatch()` is the constructor, the
    `add_*` methods are Kafka's `add*RequestForBrokers`, `send()` is
    `sendRequestsToBrokers`."""

    __slots__ = ("ctx", "topic", "batch_id", "leader_and_isr", "update_metadata",
                 "update_metadata_to_all", "update_metadata_to", "stop_replica")

    def __init__(self, ctx: ControllerContext, topic: Topic) -> None:
        self.ctx = ctx
        self.topic = topic
        self.batch_id = ctx.new_batch()
        # (broker, partition) -> entry; insertion order is send order.
        self.leader_and_isr: dict[tuple[int, int], LeaderAndIsrEntry] = {}
        self.update_metadata: dict[int, UpdateMetadataEntry] = {}  # by partition
        self.update_metadata_to_all = False  # some add addressed every registered broker
        self.update_metadata_to: set[int] = set()
        self.stop_replica: dict[tuple[int, int], StopReplicaEntry] = {}

    def add_leader_and_isr(self, brokers: Ints, part: Part, is_new: bool) -> None:
        adding, removing = part.adding, part.removing
        if (adding or removing) and not self.ctx.config.profile.kip455_reassignment:
            # Version note: before 2.4 (KIP-455) LeaderAndIsr carried no adding/removing
            # replicas; the reassignment lived only in the controller's memory.
            adding = removing = ()
        # One entry for every recipient (a tuple, so sharing it is safe).
        entry = _new(LeaderAndIsrEntry, (
            part.controller_epoch, part.leader, part.leader_epoch, part.isr, part.zk_version,
            part.replicas, adding, removing, is_new,
            RECOVERING if part.recovering else RECOVERED,
        ))
        entries = self.leader_and_isr
        p = part.partition
        for b in brokers:
            if b < 0:
                continue
            key = (b, p)
            prev = entries.get(key)
            # isNew is sticky within a batch; every other field is overwritten.
            if is_new or prev is None or not prev.is_new:
                entries[key] = entry
            else:
                entries[key] = entry._replace(is_new=True)
        self.add_update_metadata(part)

    def add_update_metadata(self, part: Part | None, to: Ints | None = None) -> None:
        """Queue an UM to `to` (None: all live or shutting-down brokers). A partition with
        no leadership info adds no partition state; the UM then only refreshes brokers."""
        if to is None:
            self.update_metadata_to_all = True
        else:
            self.update_metadata_to.update(b for b in to if b >= 0)
        if part is None or not part.has_leadership:
            return
        offline = offline_replicas(self.ctx, part)
        if self.topic.queued_for_deletion:
            # A topic queued for deletion is advertised with LeaderDuringDelete.
            self.update_metadata[part.partition] = _new(UpdateMetadataEntry, (
                part.controller_epoch, LEADER_DURING_DELETE, 0, part.isr, 0, part.replicas,
                offline))
        else:
            self.update_metadata[part.partition] = _new(UpdateMetadataEntry, (
                part.controller_epoch, part.leader, part.leader_epoch, part.isr,
                part.zk_version, part.replicas, offline))

    def add_stop_replica(self, brokers: Ints, part: Part, delete: bool) -> None:
        # Version note: StopReplica carries leader epochs from IBP 2.6 (KIP-570, v3).
        epoch = (stop_replica_epoch(self.topic, part)
                 if self.ctx.config.profile.stop_replica_leader_epoch else None)
        entries = self.stop_replica
        p = part.partition
        for b in brokers:
            if b < 0:
                continue
            prev = entries.get((b, p))
            # deletePartition is sticky within a batch.
            entries[(b, p)] = _new(StopReplicaEntry, (
                delete or (prev is not None and prev.delete_partition), epoch))

    def send(self) -> None:
        """`sendRequestsToBrokers`: LeaderAndIsr, then UpdateMetadata, then StopReplica."""
        leader_and_isr, update_metadata = self.leader_and_isr, self.update_metadata
        stop_replica = self.stop_replica
        if not (leader_and_isr or update_metadata or stop_replica):
            return
        ctx = self.ctx
        parts = self.topic.parts
        name, seq, ts, epoch = self.topic.name, ctx.seq, ctx.ts, ctx.epoch
        registered = ctx.live_or_shutting_down
        number = ctx.batch_number
        batch_id = self.batch_id
        out = ctx.out
        # Each entry holds the row's partition-level columns in order, so the row is the
        # request-level columns + the entry (tuple concatenation: the fastest build).
        if leader_and_isr:
            rows = out.leader_and_isr
            for (b, p), lai in leader_and_isr.items():
                if b in registered:
                    rows.append(_new(LeaderAndIsrRow, (
                        seq, ts, number(parts[p], batch_id), epoch, b, name, p) + lai))
        if update_metadata:
            to: Ints | None = None
            if not self.update_metadata_to_all:
                to = tuple(sorted(b for b in self.update_metadata_to if b in registered))
            if to is None or to:
                rows_um = out.update_metadata
                recipients = (to,)
                for p, um in update_metadata.items():
                    rows_um.append(_new(UpdateMetadataRow, (
                        seq, ts, number(parts[p], batch_id), epoch, name, p) + um + recipients))
        if stop_replica:
            rows_sr = out.stop_replica
            for (b, p), sr in stop_replica.items():
                if b in registered:
                    rows_sr.append(_new(StopReplicaRow, (
                        seq, ts, number(parts[p], batch_id), epoch, b, name, p) + sr))
