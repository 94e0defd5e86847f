"""Helpers for the conformance tests: a controller context in a given cluster state, and a
small builder for event logs that drives the real fold.

Machine-level tests (Kafka's ReplicaStateMachineTest, PartitionStateMachineTest, ...) build
a `ControllerContext` directly, put partitions in the state the Kafka test sets up, call the
machine, and read the request rows the core emitted. Kafka's tests verify calls on a mocked
batch with no liveness filtering; the core emits the requests as SENT, so the fixtures make
the recipients live.

Flow-level tests write an event log with `Log` and replay it with `replay_log`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from schemas import event_types as ET
from statemachine.cluster import build_timeline
from statemachine.context import ControllerContext, Outputs, ReplayConfig
from statemachine.events import Event
from statemachine.model import BucketState, Part, Topic
from statemachine.replay import replay
from statemachine.rows import PartitionStateRow
from statemachine.states import PartitionState, ReplicaState

P = PartitionState
R = ReplicaState

# Kafka's machine-test fixture: controller broker 5, controller epoch 50.
CONTROLLER = 5
EPOCH = 50
SEQ = 100


# -- machine-level context ---------------------------------------------------------------


def make_ctx(
    live: Iterable[int] = (),
    shutting_down: Iterable[int] = (),
    epoch: int = EPOCH,
    controller: int = CONTROLLER,
    config: ReplayConfig | None = None,
    seq: int = SEQ,
) -> ControllerContext:
    """A context as Kafka's machine tests set it up: the given live and shutting-down
    brokers, the controller epoch, and one current event (`seq`)."""
    ctx = ControllerContext(config or ReplayConfig(), build_timeline([]), {})
    ctx.set_liveness(frozenset(live), frozenset(shutting_down))
    ctx.epoch, ctx.controller = epoch, controller
    ctx.begin(seq, None, "test")
    return ctx


def add_part(
    ctx: ControllerContext,
    topic: str,
    partition: int,
    replicas: Sequence[int] = (),
    *,
    adding: Sequence[int] = (),
    removing: Sequence[int] = (),
    leader: int | None = None,
    isr: Sequence[int] | None = None,
    leader_epoch: int = 0,
    zk_version: int = 0,
    controller_epoch: int | None = None,
    recovering: bool = False,
    partition_state: PartitionState | None = None,
    replica_states: dict[int, ReplicaState] | None = None,
) -> Part:
    """Add partition `topic-partition` with an assignment and, when `leader` is given,
    leadership info (leader, isr, leader_epoch, zk_version, controller_epoch; the ISR defaults to
    [leader] and the controller epoch to the context's)."""
    t = ctx.topic(topic)
    part = t.parts.get(partition)
    if part is None:
        part = t.parts[partition] = Part(partition, topic)
    ctx.set_assignment(t, part, tuple(replicas), tuple(adding), tuple(removing))
    if leader is not None:
        part.has_leadership = True
        part.leader = leader
        part.isr = tuple(isr) if isr is not None else (leader,)
        part.leader_epoch = leader_epoch
        part.zk_version = zk_version
        part.controller_epoch = ctx.epoch if controller_epoch is None else controller_epoch
        part.recovering = recovering
    if partition_state is not None:
        part.partition_state = partition_state
    if replica_states:
        part.replica_states.update({b: s for b, s in replica_states.items()})
    return part


class Leadership(NamedTuple):
    """The cached leadership of a partition, as Kafka's tests write it."""

    leader: int
    isr: tuple[int, ...]
    leader_epoch: int
    zk_version: int
    controller_epoch: int


def leadership(part: Part) -> Leadership:
    """(leader, isr, leader_epoch, zk_version, controller_epoch) of the cached state."""
    return Leadership(part.leader, part.isr, part.leader_epoch, part.zk_version,
                      part.controller_epoch)


class LeaderAndIsrSent(NamedTuple):
    """The fields of a LeaderAndIsr row that Kafka's tests check."""

    broker_id: int
    topic: str
    partition: int
    leader: int
    isr: tuple[int, ...]
    leader_epoch: int
    zk_version: int
    state_controller_epoch: int
    replicas: tuple[int, ...]
    is_new: bool


class UpdateMetadataSent(NamedTuple):
    """The fields of an UpdateMetadata row that Kafka's tests check."""

    topic: str
    partition: int
    leader: int
    isr: tuple[int, ...]
    leader_epoch: int
    zk_version: int
    state_controller_epoch: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...]
    to_brokers: tuple[int, ...] | None


class StopReplicaSent(NamedTuple):
    """The fields of a StopReplica row that Kafka's tests check."""

    broker_id: int
    topic: str
    partition: int
    delete_partition: bool
    leader_epoch: int


def lai(out: Outputs, topic: str | None = None) -> list[LeaderAndIsrSent]:
    """LeaderAndIsr rows (of `topic`, or all)."""
    return [LeaderAndIsrSent(r.broker_id, r.topic, r.partition, r.leader, r.isr,
                             r.leader_epoch, r.zk_version, r.state_controller_epoch,
                             r.replicas, r.is_new)
            for r in out.leader_and_isr if topic is None or r.topic == topic]


def um(out: Outputs, topic: str | None = None) -> list[UpdateMetadataSent]:
    """UpdateMetadata rows (of `topic`, or all)."""
    return [UpdateMetadataSent(r.topic, r.partition, r.leader, r.isr, r.leader_epoch,
                               r.zk_version, r.state_controller_epoch, r.replicas,
                               r.offline_replicas, r.to_brokers)
            for r in out.update_metadata if topic is None or r.topic == topic]


def sr(out: Outputs, topic: str | None = None) -> list[StopReplicaSent]:
    """StopReplica rows (of `topic`, or all)."""
    return [StopReplicaSent(r.broker_id, r.topic, r.partition, r.delete_partition,
                            r.leader_epoch)
            for r in out.stop_replica if topic is None or r.topic == topic]


def kinds(out: Outputs) -> list[str]:
    return [f.kind for f in out.findings]


def requests_count(out: Outputs) -> int:
    return len(out.leader_and_isr) + len(out.update_metadata) + len(out.stop_replica)


def replica_of(ctx: ControllerContext, topic: str, partition: int) -> Part:
    return ctx.topics[topic].parts[partition]


def topic_of(ctx: ControllerContext, name: str) -> Topic:
    return ctx.topics[name]


# -- event logs --------------------------------------------------------------------------


class Log:
    """An event log under construction: each call appends one controller event with the
    next `seq` and returns that seq. With `tick`, an event's `ts` is `seq * tick`
    (microseconds, as in the job); without, None."""

    def __init__(self, start: int = 1, tick: int | None = None) -> None:
        self.events: list[Event] = []
        self.seq = start - 1
        self.tick = tick

    def _add(self, event_type: str, *, same_seq: bool = False, **fields: Any) -> int:
        if not same_seq:
            self.seq += 1
        for key in ("replicas", "isr", "brokers"):
            if fields.get(key) is not None:
                fields[key] = tuple(fields[key])
        ts = None if self.tick is None else self.seq * self.tick
        self.events.append(Event(self.seq, ts, event_type, source=f"test:{self.seq}",
                                 **fields))
        return self.seq

    # cluster scope
    def failover(self, controller: int, brokers: Iterable[int], epoch: int | None = None,
                 deletions: Iterable[str] | None = None) -> int:
        """`epoch`: the one the log states; `deletions`: the topics queued for deletion
        the new controller read (None: not logged)."""
        return self._add(ET.CONTROLLER_FAILOVER, broker_id=controller, brokers=brokers,
                         controller_epoch=epoch,
                         topics_to_be_deleted=None if deletions is None else tuple(deletions))

    def startup(self, *brokers: int) -> int:
        seq = self._add(ET.BROKER_STARTUP, broker_id=brokers[0])
        for b in brokers[1:]:
            self._add(ET.BROKER_STARTUP, same_seq=True, broker_id=b)
        return seq

    def failure(self, *brokers: int) -> int:
        seq = self._add(ET.BROKER_FAILURE, broker_id=brokers[0])
        for b in brokers[1:]:
            self._add(ET.BROKER_FAILURE, same_seq=True, broker_id=b)
        return seq

    def broker_change(self, started: Sequence[int], failed: Sequence[int]) -> int:
        """One broker-change event in which `started` brokers register and `failed` ones
        disappear."""
        rows = [(ET.BROKER_STARTUP, b) for b in started] + [(ET.BROKER_FAILURE, b) for b in failed]
        seq = self._add(rows[0][0], broker_id=rows[0][1])
        for event_type, b in rows[1:]:
            self._add(event_type, same_seq=True, broker_id=b)
        return seq

    def controlled_shutdown(self, broker: int) -> int:
        return self._add(ET.CONTROLLED_SHUTDOWN, broker_id=broker)

    def shutdown(self, broker: int) -> int:
        """A clean server shutdown in Kafka's integration tests: ControlledShutdown, then
        the loss of the ZK registration. Returns the seq of the failure."""
        self.controlled_shutdown(broker)
        return self.failure(broker)

    # topic and partition scope
    def create(self, topic: str, partition: int, replicas: Sequence[int],
               unclean: bool | None = None) -> int:
        return self._add(ET.PARTITION_CREATED, topic=topic, partition=partition,
                         replicas=replicas, unclean_leader_election=unclean)

    def reassign(self, topic: str, partition: int, target: Sequence[int]) -> int:
        return self._add(ET.REASSIGNMENT_REQUESTED, topic=topic, partition=partition,
                         replicas=target)

    def isr(self, topic: str, partition: int, isr: Sequence[int],
            leader_epoch: int | None = None) -> int:
        return self._add(ET.ISR_CHANGED, topic=topic, partition=partition, isr=isr,
                         leader_epoch=leader_epoch)

    def preferred(self, topic: str, partition: int) -> int:
        return self._add(ET.PREFERRED_LEADER_ELECTION, topic=topic, partition=partition)

    def unclean(self, topic: str, partition: int) -> int:
        return self._add(ET.UNCLEAN_LEADER_ELECTION, topic=topic, partition=partition)

    def config(self, topic: str, unclean: bool) -> int:
        return self._add(ET.TOPIC_CONFIG_CHANGED, topic=topic, unclean_leader_election=unclean)

    def delete(self, topic: str) -> int:
        return self._add(ET.TOPIC_DELETION_REQUESTED, topic=topic)

    def deleted(self, topic: str) -> int:
        return self._add(ET.TOPIC_DELETION_COMPLETED, topic=topic)

    def stop_replica_response(self, topic: str, partition: int, broker: int,
                              error: str | None = None) -> int:
        return self._add(ET.STOP_REPLICA_RESPONSE, topic=topic, partition=partition,
                         broker_id=broker, error=error)


def split(events: Iterable[Event]) -> tuple[list[Event], list[Event]]:
    """(cluster events, topic and partition events)."""
    cluster: list[Event] = []
    other: list[Event] = []
    for e in events:
        (cluster if e.event_type in ET.CLUSTER_EVENTS else other).append(e)
    return cluster, other


def replay_log(log: Log | Iterable[Event], config: ReplayConfig | None = None,
               state: BucketState | None = None) -> tuple[BucketState, Outputs]:
    """Build the timeline from the log's cluster events and deletion activity, and replay
    the rest."""
    events = log.events if isinstance(log, Log) else list(log)
    _, other = split(events)
    return replay(state, other,
                  build_timeline(events, profile=config.profile if config else None), config)


def pstate_row(out: Outputs, topic: str, partition: int) -> PartitionStateRow:
    rows = [r for r in out.partition_states if r.topic == topic and r.partition == partition]
    assert len(rows) == 1, rows
    return rows[0]


class FinalState(NamedTuple):
    """A partition_states row's state and leadership, in the order tests compare them."""

    state: str
    leader: int | None
    isr: tuple[int, ...] | None
    leader_epoch: int | None
    zk_version: int | None
    controller_epoch: int | None


def final(out: Outputs, topic: str, partition: int) -> FinalState:
    """(state, leader, isr, leader_epoch, zk_version, controller_epoch) of one partition."""
    r = pstate_row(out, topic, partition)
    return FinalState(r.state, r.leader, r.isr, r.leader_epoch, r.zk_version,
                      r.controller_epoch)


def replica_states_of(out: Outputs, topic: str, partition: int) -> dict[int, str]:
    return {r.broker_id: r.state for r in out.replica_states
            if r.topic == topic and r.partition == partition}


def at(rows: list[Any], seq: int) -> list[Any]:
    """Rows of one event (by seq)."""
    return [r for r in rows if r.seq == seq]


StateRows = tuple[list[Any], list[Any]]  # (partition_states rows, replica_states rows)


def state_rows(state: BucketState) -> StateRows:
    """The state rows of every partition `state` holds, sorted (a first replay's rows)."""
    ctx = ControllerContext(ReplayConfig(), build_timeline([]), {})
    for _, topic in sorted(state.thaw().items()):
        for part in topic.sorted_parts():
            ctx.emit_state(topic, part)
    return ctx.out.partition_states, ctx.out.replica_states


def merged_states(*outs: Outputs) -> StateRows:
    """The state rows of consecutive replays added up as a reader of the tables adds up a
    run's changes: a partition's latest row, with the replica rows of the replay that wrote
    it."""
    parts: dict[tuple[str, int], Any] = {}
    replicas: dict[tuple[str, int], list[Any]] = {}
    for out in outs:
        changed = {(r.topic, r.partition) for r in out.partition_states}
        parts.update({(r.topic, r.partition): r for r in out.partition_states})
        for key in changed:
            replicas[key] = []
        for r in out.replica_states:
            replicas[(r.topic, r.partition)].append(r)
    return ([parts[k] for k in sorted(parts)],
            [r for k in sorted(replicas) for r in replicas[k]])


class TwoBrokersLost(NamedTuple):
    """`two_brokers_lost`'s log and the seqs that matter in it."""

    log: Log
    change: int  # the BrokerChange that lost brokers 3 and 5
    back3: int  # broker 3's startup, 86 s later
    back5: int  # broker 5's startup, 442 s later: the incident's length


def two_brokers_lost(tick: int = 1_000_000) -> TwoBrokersLost:
    """One BrokerChange that loses brokers 3 and 5 (ZooKeeper's /brokers/ids watch fires
    once for both, `KafkaController.processBrokerChange`, 3.7.1): t-0 on 3 alone, t-1 and
    u-0 on 5 alone; 3 is back 86 s later, 5 after 442 s."""
    log = Log(tick=tick)
    log.failover(1, [1, 3, 5])
    log.create("t", 0, [3])
    log.create("t", 1, [5])
    log.create("u", 0, [5])
    change = log.broker_change([], [3, 5])
    log.seq = change + 85
    back3 = log.startup(3)
    log.seq = change + 441
    back5 = log.startup(5)
    return TwoBrokersLost(log, change, back3, back5)
