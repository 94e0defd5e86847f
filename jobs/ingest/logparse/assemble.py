"""Facts in the controller's order -> events (the event-log contract, docs/tables.md) and
observed state changes.

The input is every fact of every file, sorted by (timestamp, file, line, index in line):
`order_key` is that key, and the Spark job sorts by the same columns. The walk is
sequential because one controller event is often logged over several lines:

* a failover: `N successfully elected as the controller` (or `starting become controller`,
  `Incremented epoch to`) opens it; `Currently active brokers in the cluster: ...` gives
  the live brokers; `Ready to serve as the new controller` closes it. If the excerpt never
  names the live brokers, the event lists the new controller alone (the one broker known
  to be registered).
* a BrokerChange: `Newly added brokers: ..., deleted brokers: ...` is the event; the
  `New broker startup callback for` / `Broker failure callback for` lines that follow
  belong to it. A callback with no BrokerChange line before it is the event itself.
  Up to 0.10.2, `Error while handling broker changes` right after it means the handler
  threw: Kafka had updated its live brokers but not run the callbacks whose line is
  missing (`ReplicaStateMachine.BrokerChangeListener`), so their BrokerStartup /
  BrokerFailure events are withdrawn and the failure is kept as a `broker_change_failed`
  observation (docs/ingest-compare.md).
* a topic creation: `New topics: ...` / `New partitions to be added ...` is the event; the
  state-change `NonExistentPartition -> NewPartition with assigned replicas` lines that
  follow belong to it. Without such a line (a state-change.log alone), those transitions
  are the creation; consecutive ones of one topic are one event.
* an ISR change notification (up to 2.6: the leader wrote the ISR to ZooKeeper itself):
  `Sending MetadataRequest to Brokers: .. for TopicPartitions: ..` (DEBUG, controller.log)
  names the partitions; the `Sending UpdateMetadata request ... for partition t-0` lines
  that follow (state.change.logger, TRACE up to 2.5) carry each one's new ISR and leader
  epoch (`KafkaController.processIsrChangeNotification`: `updateLeaderAndIsrCache`, then
  `sendUpdateMetadataRequest`). Each such line is an IsrChanged of the notification's
  seq; the next controller event ends the notification.
* StopReplica responses: 2.3+ logs `Delete topic callback invoked on StopReplica response
  ... partition errors = ...` (with error codes) and then `Deletion successfully completed
  for replicas ...`; older versions only the latter. Either gives the response once.

Rows that come from one record share one `seq`; seqs count from 1 in the merged order.
Observations get the `seq` of the last event at or before them (0: before the first), so
they line up with the replay of that event.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from jobs.ingest.logparse.facts import EVENT_KINDS, OBSERVED_EVENT_KINDS, Fact, Located
from jobs.ingest.logparse.seeding import LEADERSHIP_KINDS, SNAPSHOT_KIND, FailoverSnapshot
from jobs.ingest.logparse.values import Ints
from schemas import event_types as ET
from statemachine.events import Event
from statemachine.rows import APPLIED

_BROKER_CHANGE_KINDS = frozenset(
    {"broker_change", "broker_up", "broker_down", "startup_callback", "failure_callback",
     "broker_change_failed"})
FAILOVER_KINDS = frozenset({"failover", "failover_epoch", "failover_brokers",
                             "failover_deletions", "failover_ready"})
# Controller-side lines whose `controller_epoch` is the logging controller's own epoch (the
# `[Controller id=C epoch=E] ` prefix of state.change.logger, up to 0.11 `Controller C epoch
# E `): what an assumed failover's epoch is read from.
EPOCH_KINDS = frozenset({
    "partition_transition", "replica_transition", "leader_and_isr_request",
    "update_metadata_request", "leader_and_isr_summary", "update_metadata_summary",
})
ISR_NOTIFICATION = "isr_notification"
# The request line that carries a notified partition's new ISR.
NOTIFIED_METADATA = "update_metadata_request"
NEW = "NewPartition"
NONEXISTENT = "NonExistentPartition"


# The contract's event, with `ts` as epoch microseconds (the core's Event carries any ts).
EventRow = Event


class ObservedRow(NamedTuple):
    seq: int
    pos: int  # position in the merged order of all facts
    ts: int
    source: str
    observed_by: str
    kind: str
    topic: str | None
    partition: int | None
    broker_id: int | None
    from_state: str | None
    to_state: str | None
    leader: int | None
    leader_epoch: int | None
    isr: Ints | None
    zk_version: int | None
    replicas: Ints | None
    brokers: Ints | None
    controller_id: int | None
    controller_epoch: int | None
    outcome: str | None
    error: str | None
    detail: str | None


def order_key(file: str, line: int, ts: int, index: int) -> tuple[int, str, int, int]:
    return (ts, file, line, index)


@dataclass
class _OpenFailover:
    """A failover still being logged: its event, whose brokers a later line may give."""

    index: int  # of the ControllerFailover in `Assembler.events`


@dataclass
class _OpenIsrNotification:
    """An ISR change notification whose UpdateMetadata lines are still to come."""

    record: tuple[str, int]  # the `Sending MetadataRequest` line
    pending: set[tuple[str, int]] = field(default_factory=set)
    seq: int | None = None  # of its IsrChanged events, once the first is emitted
    ts: int = 0


@dataclass
class _OpenBrokerChange:
    """A BrokerChange line's brokers whose callbacks are still to come (they belong to it)."""

    up: set[int | None] = field(default_factory=set)
    down: set[int | None] = field(default_factory=set)
    emitted: list[int] = field(default_factory=list)  # its events' indexes in `events`


class Assembler:
    """Feed located facts in order with `add`; read `events` and `observations`."""

    def __init__(self, assume_controller: int | None = None,
                 assume_live: Iterable[int] | None = None,
                 assume_epoch: int | None = None) -> None:
        self.events: list[EventRow] = []
        self.observations: list[ObservedRow] = []
        self.seq = 0
        self.pos = 0
        self._record: tuple[str, int] | None = None
        self._record_seq = 0
        # Multi-line events still open, by the controller that logs them.
        self._failover: dict[int | None, _OpenFailover] = {}
        self._bc: dict[int | None, _OpenBrokerChange] = {}
        self._isr: dict[int | None, _OpenIsrNotification] = {}
        self._created: set[tuple[str, int]] = set()
        self._inferred_topic: str | None = None
        self._responded: set[tuple[str, int, int]] = set()
        # Partitions the excerpt created or seeded (a later snapshot line leaves them), and
        # what the open failover block says about the others (`seeding.py`).
        self._known: set[tuple[str, int]] = set()
        self._snapshot: FailoverSnapshot | None = None
        if assume_controller is not None:
            # Operator-supplied start of a log that begins mid-life (the replay needs a
            # ControllerFailover before anything else can be replayed).
            live = tuple(sorted(set(assume_live or ()) | {assume_controller}))
            self.seq = 0
            self.events.append(EventRow(0, 0, ET.CONTROLLER_FAILOVER, assume_controller,
                                        brokers=live, source="assumed:--assume-live",
                                        controller_epoch=assume_epoch))
        self._assumed_ts_pending = assume_controller is not None

    # -- helpers --------------------------------------------------------------------------
    def _new_seq(self, loc: Located) -> int:
        key = (loc.file, loc.line)
        if self._record != key:
            self.seq += 1
            self._record, self._record_seq = key, self.seq
            self._inferred_topic = None
        return self._record_seq

    def _emit(self, loc: Located, ts: int, event_type: str, **kw: Any) -> None:
        if self._assumed_ts_pending:  # the assumed failover happens when the log begins
            self.events[0] = self.events[0]._replace(ts=ts)
            self._assumed_ts_pending = False
        seq = self._new_seq(loc)
        self.events.append(
            EventRow(seq, ts, event_type, source=f"{loc.file}:{loc.line}", **kw))

    def _close_other(self, loc: Located, ts: int, cid: int | None, kind: str) -> None:
        """Another controller event ends the multi-line events still open for `cid`."""
        if kind not in _BROKER_CHANGE_KINDS:
            self._bc.pop(cid, None)
        if kind != ISR_NOTIFICATION:
            self._isr.pop(cid, None)
        if kind not in FAILOVER_KINDS and self._failover.pop(cid, None) is not None:
            self._emit_snapshots(loc, ts)

    def _emit_snapshots(self, loc: Located, ts: int) -> None:
        """The failover block is closed at `loc`: its PartitionSnapshot events, there."""
        snapshot, self._snapshot = self._snapshot, None
        if snapshot is None:
            return
        for fields in snapshot.events(self._known):
            self._known.add((fields["topic"], fields["partition"]))
            self._emit(loc, ts, ET.PARTITION_SNAPSHOT, **fields)

    # -- the walk -------------------------------------------------------------------------
    def add(self, loc: Located, ts: int) -> None:
        f = loc.fact
        if self._snapshot is not None and (f.kind == SNAPSHOT_KIND or f.kind in LEADERSHIP_KINDS):
            self._snapshot.add(f)
        if f.kind in EVENT_KINDS or f.kind == "partition_transition":
            self._event(loc, f, ts)
        elif f.kind == NOTIFIED_METADATA and self._isr:
            self._notified_isr(loc, f, ts)
        if f.kind not in EVENT_KINDS or f.kind in OBSERVED_EVENT_KINDS:
            self._observe(loc, f, ts)
        self.pos += 1

    def _observe(self, loc: Located, f: Fact, ts: int) -> None:
        self.observations.append(ObservedRow(
            self.seq, self.pos, ts, f"{loc.file}:{loc.line}", loc.observed_by, f.kind,
            f.topic, f.partition, f.broker_id, f.from_state, f.to_state, f.leader,
            f.leader_epoch, f.isr, f.zk_version, f.replicas, f.brokers, f.controller_id,
            f.controller_epoch, f.outcome, f.error, f.detail,
        ))

    def _event(self, loc: Located, f: Fact, ts: int) -> None:  # noqa: C901 - one dispatch
        k, cid = f.kind, f.controller_id
        if k == "partition_transition":
            self._maybe_inferred_creation(loc, f, ts)
            return
        self._close_other(loc, ts, cid, k)
        if k in FAILOVER_KINDS:
            self._failover_fact(loc, f, ts)
            return
        if k in _BROKER_CHANGE_KINDS:
            self._broker_change_fact(loc, f, ts)
        elif k == "controlled_shutdown":
            self._emit(loc, ts, ET.CONTROLLED_SHUTDOWN, broker_id=f.broker_id)
        elif k == "new_partition":
            assert f.topic is not None and f.partition is not None
            self._created.add((f.topic, f.partition))
            self._known.add((f.topic, f.partition))
            self._emit(loc, ts, ET.PARTITION_CREATED, topic=f.topic, partition=f.partition,
                       replicas=f.replicas)
        elif k == "deletion_start":
            self._emit(loc, ts, ET.TOPIC_DELETION_REQUESTED, topic=f.topic)
        elif k == "deletion_done":
            self._emit(loc, ts, ET.TOPIC_DELETION_COMPLETED, topic=f.topic)
        elif k == "stop_replica_response":
            assert f.topic is not None and f.partition is not None and f.broker_id is not None
            self._responded.add((f.topic, f.partition, f.broker_id))
            self._emit(loc, ts, ET.STOP_REPLICA_RESPONSE, topic=f.topic, partition=f.partition,
                       broker_id=f.broker_id, error=f.error)
        elif k == "replica_deleted":
            assert f.topic is not None and f.partition is not None and f.broker_id is not None
            key = (f.topic, f.partition, f.broker_id)
            if key in self._responded:
                self._responded.discard(key)
            else:
                self._emit(loc, ts, ET.STOP_REPLICA_RESPONSE, topic=f.topic,
                           partition=f.partition, broker_id=f.broker_id)
        elif k == "reassign_start" or (k == "reassign_update" and f.detail == "start"):
            if f.partition is not None:
                self._emit(loc, ts, ET.REASSIGNMENT_REQUESTED, topic=f.topic,
                           partition=f.partition, replicas=f.replicas)
        elif k == ISR_NOTIFICATION:
            self._isr_notification_fact(loc, f, ts)
        elif k == "isr_update":
            if f.partition is not None:
                self._emit(loc, ts, ET.ISR_CHANGED, topic=f.topic, partition=f.partition,
                           isr=f.isr, leader_epoch=f.leader_epoch)
        elif k == "election_start":
            et = (ET.UNCLEAN_LEADER_ELECTION if f.detail == "UNCLEAN"
                  else ET.PREFERRED_LEADER_ELECTION)
            self._emit(loc, ts, et, topic=f.topic, partition=f.partition)
        elif k == "unclean_enabled":
            self._emit(loc, ts, ET.TOPIC_CONFIG_CHANGED, topic=f.topic,
                       unclean_leader_election=True)

    def _isr_notification_fact(self, loc: Located, f: Fact, ts: int) -> None:
        record = (loc.file, loc.line)
        open_ = self._isr.get(f.controller_id)
        if open_ is None or open_.record != record:
            open_ = self._isr[f.controller_id] = _OpenIsrNotification(record, ts=ts)
        if f.topic is not None and f.partition is not None:
            open_.pending.add((f.topic, f.partition))

    def _notified_isr(self, loc: Located, f: Fact, ts: int) -> None:
        """An UpdateMetadata line of a partition an open notification names: its ISR
        change, in the notification's seq (one controller event)."""
        open_ = self._isr.get(f.controller_id)
        if open_ is None and f.controller_id is None and len(self._isr) == 1:
            open_ = next(iter(self._isr.values()))
        if (open_ is None or f.isr is None or f.topic is None or f.partition is None
                or (f.topic, f.partition) not in open_.pending):
            return
        open_.pending.discard((f.topic, f.partition))
        fields: dict[str, Any] = dict(topic=f.topic, partition=f.partition, isr=f.isr,
                                      leader_epoch=f.leader_epoch)
        if open_.seq is None:
            self._emit(loc, ts, ET.ISR_CHANGED, **fields)
            open_.seq, open_.ts = self.events[-1].seq, self.events[-1].ts
            return
        self.events.append(EventRow(open_.seq, open_.ts, ET.ISR_CHANGED,
                                    source=f"{loc.file}:{loc.line}", **fields))

    def _broker_change_fact(self, loc: Located, f: Fact, ts: int) -> None:
        k, cid = f.kind, f.controller_id
        if k == "broker_change":
            self._bc[cid] = _OpenBrokerChange()
            return
        if k == "broker_change_failed":
            self._withdraw_failed_change(self._bc.pop(cid, None))
            return
        if k in ("broker_up", "broker_down"):
            et = ET.BROKER_STARTUP if k == "broker_up" else ET.BROKER_FAILURE
            self._emit(loc, ts, et, broker_id=f.broker_id)
            bc = self._bc.setdefault(cid, _OpenBrokerChange())
            bc.emitted.append(len(self.events) - 1)
            if k == "broker_up":
                bc.up.add(f.broker_id)
                if f.detail == "bounced":
                    bc.down.add(f.broker_id)
            else:
                bc.down.add(f.broker_id)
            return
        # startup_callback / failure_callback
        open_bc = self._bc.get(cid)
        pool = None if open_bc is None else (
            open_bc.up if k == "startup_callback" else open_bc.down)
        if pool is not None and f.broker_id in pool:
            pool.discard(f.broker_id)  # logged as part of the BrokerChange before it
            return
        et = ET.BROKER_STARTUP if k == "startup_callback" else ET.BROKER_FAILURE
        self._emit(loc, ts, et, broker_id=f.broker_id)

    def _withdraw_failed_change(self, bc: _OpenBrokerChange | None) -> None:
        """The BrokerChange handler threw: withdraw the events of the brokers whose callback
        Kafka did not log (it never ran it). Observations placed at a withdrawn seq move to
        the event before it, and a withdrawn last seq is given again, so that seqs stay
        contiguous and the Spark job (which places observations after its events) agrees."""
        if bc is None:
            return
        pending = {ET.BROKER_STARTUP: bc.up, ET.BROKER_FAILURE: bc.down}
        gone = {i for i in bc.emitted if self.events[i].broker_id in pending.get(
            self.events[i].event_type, set())}
        if not gone:
            return
        gone_seqs = {self.events[i].seq for i in gone}
        self.events = [e for i, e in enumerate(self.events) if i not in gone]
        for open_ in self._failover.values():
            open_.index -= sum(1 for i in gone if i < open_.index)
        gone_seqs -= {e.seq for e in self.events}
        if not gone_seqs:
            return
        before = {s: max((e.seq for e in self.events if e.seq < s), default=0)
                  for s in gone_seqs}
        self.observations = [o._replace(seq=before[o.seq]) if o.seq in before else o
                             for o in self.observations]
        if self.seq in gone_seqs:
            self.seq = before[self.seq]
            self._record, self._record_seq = None, self.seq

    def _failover_fact(self, loc: Located, f: Fact, ts: int) -> None:
        cid = f.controller_id
        open_ = self._failover.get(cid)
        if open_ is None:
            if cid is None:
                return  # a failover line with no controller id cannot be placed
            self._emit_snapshots(loc, ts)  # another controller's block, still open
            self._emit(loc, ts, ET.CONTROLLER_FAILOVER, broker_id=cid, brokers=(cid,))
            open_ = self._failover[cid] = _OpenFailover(len(self.events) - 1)
            self._snapshot = FailoverSnapshot(cid)
        if f.kind == "failover_brokers" and f.brokers is not None:
            self.events[open_.index] = self.events[open_.index]._replace(
                brokers=tuple(sorted(set(f.brokers))))
        if f.kind == "failover_deletions":
            self.events[open_.index] = self.events[open_.index]._replace(
                topics_to_be_deleted=tuple(sorted(set(filter(None, (f.detail or "").split(
                    ","))))))
        if f.controller_epoch is not None:  # the epoch it was elected in, as logged
            self.events[open_.index] = self.events[open_.index]._replace(
                controller_epoch=f.controller_epoch)
        if f.kind == "failover_ready":
            del self._failover[cid]
            self._emit_snapshots(loc, ts)

    def _maybe_inferred_creation(self, loc: Located, f: Fact, ts: int) -> None:
        if not (f.from_state == NONEXISTENT and f.to_state == NEW and f.outcome == APPLIED
                and f.replicas is not None and f.topic is not None
                and f.partition is not None):
            return
        key = (f.topic, f.partition)
        self._known.add(key)
        if key in self._created:
            self._created.discard(key)  # the state change of a logged creation event
            return
        if self._inferred_topic == f.topic and self.events:
            # One more partition of the topic being created: same controller event.
            self._record = (loc.file, loc.line)
            seq = self._record_seq
            self.events.append(EventRow(seq, self.events[-1].ts, ET.PARTITION_CREATED,
                                        topic=f.topic, partition=f.partition,
                                        replicas=f.replicas, source=f"{loc.file}:{loc.line}"))
            return
        self._emit(loc, ts, ET.PARTITION_CREATED, topic=f.topic, partition=f.partition,
                   replicas=f.replicas)
        self._inferred_topic = f.topic

    def finish(self) -> list[EventRow]:
        return list(self.events)


def assumed_epoch(facts: Iterable[Fact], controller: int | None) -> int | None:
    """The epoch of an assumed controller (`--assume-controller`), from the facts in order:
    the first of its own controller-side lines that states it (`[Controller id=1
    epoch=16] `), before any failover is logged; None when none does."""
    if controller is None:
        return None
    for f in facts:
        if f.kind in FAILOVER_KINDS:
            return None
        if (f.kind in EPOCH_KINDS and f.controller_id == controller
                and f.controller_epoch is not None):
            return f.controller_epoch
    return None


def assemble(located: Iterable[tuple[Located, int]], assume_controller: int | None = None,
             assume_live: Iterable[int] | None = None
             ) -> tuple[list[EventRow], list[ObservedRow]]:
    """Walk (fact, effective timestamp) pairs already sorted by `order_key`."""
    ordered = list(located)
    a = Assembler(assume_controller, assume_live,
                  assumed_epoch((loc.fact for loc, _ in ordered), assume_controller))
    for loc, ts in ordered:
        a.add(loc, ts)
    return a.finish(), a.observations
