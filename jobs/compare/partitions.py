"""The comparison of one partition: what Kafka logged about it against what the replay did.

How a logged value is matched: an observation carries the `seq` of the last event at or
before it (`jobs.ingest.logparse.assemble`). A logged transition matches a replayed one with
the same (machine, broker, from, to, outcome) at that seq, else at an earlier unmatched seq:
a failed election Kafka logged matches the replay's identical failed attempt, and only an
`applied` transition moves the state. A logged leader / ISR / leader epoch agrees if any
LeaderAndIsr or UpdateMetadata state the replay produced for the partition at that seq has
it (the value in force before it, if the replay sent none at that seq), or, when the
replay changed the partition at that seq, if the whole logged state is the one in force
when the event began: Kafka logs states in the middle of an event, before the event's own
changes (a new controller's first UpdateMetadata carries every partition as ZooKeeper
holds it, before the failover's ISR removals and elections); the lines that log
a write of the partition state znode (`isr_shrink`: `state changed to (Leader:..,ISR:..)
after removing replica`, `New leader and ISR for partition`) are held against the replay's
`partition_state_writes` instead, since a topic queued for deletion gets that write and no
request. ISRs are compared as sets. A value the replay cannot know (nothing replayed yet for
that partition) is counted neither way.

A partition the replay first knows from a PartitionSnapshot (its rows say "initialized from
PartitionSnapshot") was seeded with the state a failover block ends in: the failover's own
transitions, which Kafka logged inside the block before the snapshot's seq
(`PartitionStateMachine.startup` -> `triggerOnlinePartitionStateChange`,
`ReplicaStateMachine.startup`), are `seeded`: the last one of each partition and replica is
held against the state seeded, not against a replay that did not know the partition yet.
The leadership the snapshot seeded (`seeds`: the ingest's PartitionSnapshot events) is the
replay's leadership in force until the replay sends one: the full UpdateMetadata Kafka
sends a newly joined broker (`KafkaController.onBrokerStartup`), which the replay does not
write as rows, carries it, like any later request of an unchanged partition.

Pure Python, no Kafka rule is decided here: `compare_partition` is what the Spark job runs
per partition (cogroup), `compare_all` the same over every partition in one process.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from jobs.compare.values import Row, render, value
from schemas import event_types as ET
from statemachine.rows import APPLIED
from statemachine.snapshot import REASON as SEEDED_REASON

PARTITION, REPLICA = "partition", "replica"
OBSERVED, INFERRED, OBSERVED_ONLY = "observed", "inferred", "observed_only"
# Logged inside the failover block that seeded the partition, before the replay knew it.
SEEDED = "seeded"
AGREE, DIFFER, NOT_OBSERVED, NOT_REPLAYED = "agree", "differ", "not_observed", "not_replayed"

# Observation kinds that carry a leader / leader epoch / ISR of the partition.
LEADERSHIP_KINDS = frozenset({
    "partition_transition", "isr_shrink", "leader_elected", "leader_epoch_updated",
    "leader_and_isr_request", "update_metadata_request", "broker_leader_and_isr",
    "broker_metadata", "broker_transition", "broker_leader_start", "broker_follower_start",
    "isr_update",
})
FIELDS = ("leader", "isr", "leader_epoch")
# Observation kinds that log a write of the partition state znode, not a request.
WRITE_KINDS = frozenset({"isr_shrink"})
_TRANSITION_KINDS = {"partition_transition": PARTITION, "replica_transition": REPLICA}
_SNAPSHOT_KINDS = {"partition_snapshot": PARTITION, "replica_snapshot": REPLICA}

Ints = tuple[int, ...]


class ComparisonRow(NamedTuple):
    """A row of `comparison/`: one partition (broker_id None) or one replica."""

    cluster: str
    topic: str
    partition: int
    broker_id: int | None
    entity: str
    status: str
    observed_points: int
    observed_transitions: int
    matched_transitions: int
    inferred_transitions: int
    observed_only_transitions: int
    state_agree: bool | None
    leader_agree: bool | None
    isr_agree: bool | None
    leader_epoch_agree: bool | None
    first_divergence_seq: int | None
    first_divergence_field: str | None
    observed_value: str | None
    replayed_value: str | None
    divergence_source: str | None
    observed_state: str | None
    replayed_state: str | None


class TransitionRow(NamedTuple):
    """A row of `transitions/`: a transition and its evidence."""

    cluster: str
    topic: str
    partition: int
    broker_id: int | None
    machine: str
    seq: int
    step: int | None  # None: Kafka logged it, the replay did not make it
    from_state: str | None
    to_state: str | None
    outcome: str  # applied | rejected | failed (`statemachine.rows`)
    evidence: str
    source: str | None


ENTITY_COLUMNS: tuple[str, ...] = ComparisonRow._fields
TRANSITION_COLUMNS: tuple[str, ...] = TransitionRow._fields


class Observation(NamedTuple):
    """The columns of an observed_state_changes row the comparison reads."""

    seq: int
    pos: int
    source: str | None
    kind: str
    broker_id: int | None
    from_state: str | None
    to_state: str | None
    leader: int | None
    leader_epoch: int | None
    isr: Ints | None
    outcome: str | None

    @classmethod
    def of(cls, row: Row) -> Observation:
        return cls(value(row["seq"]), value(row["pos"]), row.get("source"), row["kind"],
                   value(row["broker_id"]), row["from_state"], row["to_state"],
                   value(row["leader"]), value(row["leader_epoch"]), value(row["isr"]),
                   value(row["outcome"]))


@dataclass(slots=True)
class ReplayedTransition:
    """A state_changes row of the replay, and the log line of the observation it matched."""

    seq: int
    step: int
    from_state: str
    to_state: str
    outcome: str
    matched_source: str | None = None


class ReplayedLeadership(NamedTuple):
    """A partition state the replay sent (LeaderAndIsr or UpdateMetadata request) or wrote
    to the partition state znode (`partition_state_writes`)."""

    seq: int
    batch: int  # the request batch, or the write's order
    leader: int | None
    isr: Ints | None
    leader_epoch: int | None


class Divergence(NamedTuple):
    """Where an entity first disagrees with the log: (seq, pos) orders them."""

    seq: int
    pos: int
    field: str
    observed: object
    replayed: object
    source: str | None

    def columns(self) -> dict[str, Any]:
        return {"first_divergence_seq": self.seq, "first_divergence_field": self.field,
                "observed_value": render(self.observed),
                "replayed_value": render(self.replayed), "divergence_source": self.source}


_NO_DIVERGENCE: dict[str, Any] = dict.fromkeys(
    ("first_divergence_seq", "first_divergence_field", "observed_value", "replayed_value",
     "divergence_source"))


class Entity:
    """What is known of one partition (broker_id None) or one of its replicas."""

    __slots__ = ("broker_id", "points", "observed_transitions", "matched", "inferred",
                 "observed_only", "agree", "first", "observed_state", "replayed_state",
                 "has_replay", "seeded", "last_seeded_pos")

    def __init__(self, broker_id: int | None) -> None:
        self.broker_id = broker_id
        self.points = 0
        self.observed_transitions = self.matched = self.inferred = self.observed_only = 0
        self.agree: dict[str, bool | None] = {"state": None, **dict.fromkeys(FIELDS)}
        self.first: Divergence | None = None
        self.observed_state: str | None = None
        self.replayed_state: str | None = None
        self.has_replay = False
        # (seq, state) of the PartitionSnapshot the replay first knew this entity from.
        self.seeded: tuple[int, str] | None = None
        # `pos` of the last transition Kafka logged for it before that seq.
        self.last_seeded_pos: int | None = None

    def seeded_before(self, seq: int) -> bool:
        """Whether a line at `seq` precedes the snapshot the replay first knew this from."""
        return self.seeded is not None and seq < self.seeded[0]

    def verdict(self, field: str, ok: bool, seq: int, pos: int, observed: object,
                replayed: object, source: str | None) -> None:
        if ok:
            if self.agree[field] is None:
                self.agree[field] = True
            return
        self.agree[field] = False
        if self.first is None or (seq, pos) < (self.first.seq, self.first.pos):
            self.first = Divergence(seq, pos, field, observed, replayed, source)

    def status(self) -> str:
        if not self.has_replay:
            return NOT_REPLAYED
        if self.points == 0:
            return NOT_OBSERVED
        if any(v is False for v in self.agree.values()):
            return DIFFER
        return AGREE

    def row(self, cluster: str, topic: str, partition: int) -> ComparisonRow:
        divergence = _NO_DIVERGENCE if self.first is None else self.first.columns()
        return ComparisonRow(
            cluster, topic, partition, self.broker_id,
            PARTITION if self.broker_id is None else REPLICA, self.status(),
            observed_points=self.points, observed_transitions=self.observed_transitions,
            matched_transitions=self.matched, inferred_transitions=self.inferred,
            observed_only_transitions=self.observed_only, state_agree=self.agree["state"],
            leader_agree=self.agree["leader"], isr_agree=self.agree["isr"],
            leader_epoch_agree=self.agree["leader_epoch"], **divergence,
            observed_state=self.observed_state, replayed_state=self.replayed_state)


class PartitionComparison:
    """One partition's comparison: load the replay, then `observe` the log in order."""

    def __init__(self, cluster: str, topic: str, partition: int,
                 leadership: list[ReplayedLeadership],
                 writes: list[ReplayedLeadership] | None = None,
                 seeds: list[ReplayedLeadership] | None = None) -> None:
        self.cluster, self.topic, self.partition = cluster, topic, partition
        self.leadership = leadership
        self.writes = writes or []
        self.seeds = seeds or []  # the PartitionSnapshot events' leadership
        self.entities: dict[int | None, Entity] = {}
        # Replayed transitions by (machine, broker), in replay order.
        self.replayed: dict[tuple[str, int | None], list[ReplayedTransition]] = {}
        self.transitions: list[TransitionRow] = []

    def entity(self, broker_id: int | None) -> Entity:
        e = self.entities.get(broker_id)
        if e is None:
            e = self.entities[broker_id] = Entity(broker_id)
        return e

    def load_replay(self, changes: list[Row], final_partition_state: str | None,
                    final_replica_states: dict[int, str]) -> None:
        for c in changes:
            machine = c["machine"]
            broker_id = value(c["broker_id"]) if machine == REPLICA else None
            e = self.entity(broker_id)
            if not e.has_replay and c.get("reason") == SEEDED_REASON and c["outcome"] == APPLIED:
                e.seeded = (value(c["seq"]), c["to_state"])
            e.has_replay = True
            self.replayed.setdefault((machine, broker_id), []).append(ReplayedTransition(
                value(c["seq"]), value(c["step"]), c["from_state"], c["to_state"],
                c["outcome"]))
        if final_partition_state is not None:
            self.entity(None).has_replay = True
            self.entity(None).replayed_state = final_partition_state
        for broker_id, state in final_replica_states.items():
            self.entity(broker_id).has_replay = True
            self.entity(broker_id).replayed_state = state
        if self.leadership or self.writes:
            self.entity(None).has_replay = True
        own = self.entities.get(None)
        seeded = own.seeded if own is not None else None
        # Only a snapshot the replay applied seeded the leadership (one it found the
        # partition known for is a finding, not a state).
        self.seeds = [s for s in self.seeds if seeded is not None and s.seq == seeded[0]]

    def mark_seeded_transitions(self, observations: Iterable[Observation]) -> None:
        """Note, per seeded entity, the last transition Kafka logged before its snapshot:
        the one whose result the snapshot holds. `observations` in (seq, pos) order."""
        for o in observations:
            machine = _TRANSITION_KINDS.get(o.kind)
            if machine is None:
                continue
            e = self.entities.get(o.broker_id if machine == REPLICA else None)
            if e is not None and e.seeded_before(o.seq):
                e.last_seeded_pos = o.pos

    def replay_state_at(self, machine: str, broker_id: int | None, seq: int) -> str | None:
        state = None
        for r in self.replayed.get((machine, broker_id), ()):
            if r.seq > seq:
                break
            if r.outcome == APPLIED:
                state = r.to_state
        return state

    def touched_by(self, seq: int) -> bool:
        """Whether the replay did anything to the partition at or before `seq`."""
        return any(r.seq <= seq for rs in self.replayed.values() for r in rs) or any(
            lead.seq <= seq for lead in (*self.leadership, *self.writes))

    def observe(self, o: Observation) -> None:
        if o.kind in _TRANSITION_KINDS:
            self._observe_transition(o, _TRANSITION_KINDS[o.kind])
        elif o.kind in _SNAPSHOT_KINDS:
            self._observe_snapshot(o, _SNAPSHOT_KINDS[o.kind])
        if o.kind in LEADERSHIP_KINDS:
            self._observe_leadership(o)

    def _match(self, machine: str, broker_id: int | None, seq: int,
               key: tuple[str | None, str | None, str]) -> ReplayedTransition | None:
        """The unmatched replayed transition a logged one is: at `seq`, else before it."""
        candidates = [r for r in self.replayed.get((machine, broker_id), [])
                      if r.matched_source is None
                      and (r.from_state, r.to_state, r.outcome) == key]
        return next((r for r in candidates if r.seq == seq),
                    next((r for r in candidates if r.seq <= seq), None))

    def _observe_transition(self, o: Observation, machine: str) -> None:
        broker_id = o.broker_id if machine == REPLICA else None
        e = self.entity(broker_id)
        e.points += 1
        e.observed_transitions += 1
        outcome = o.outcome or APPLIED
        if outcome == APPLIED:
            e.observed_state = o.to_state
        hit = self._match(machine, broker_id, o.seq, (o.from_state, o.to_state, outcome))
        if hit is not None:
            hit.matched_source = o.source
            e.matched += 1
            e.verdict("state", True, o.seq, o.pos, None, None, o.source)
            return
        if e.seeded is not None and e.seeded_before(o.seq):
            self._observe_seeded_transition(e, o, machine, outcome)
            return
        e.observed_only += 1
        self.transitions.append(TransitionRow(
            self.cluster, self.topic, self.partition, broker_id, machine, o.seq, None,
            o.from_state, o.to_state, outcome, OBSERVED_ONLY, o.source))
        if self.touched_by(o.seq) or e.has_replay:
            logged = f"{o.from_state}->{o.to_state}" + (
                "" if outcome == APPLIED else f" ({outcome})")
            e.verdict("state", False, o.seq, o.pos, logged,
                      self.replay_state_at(machine, broker_id, o.seq), o.source)

    def _observe_seeded_transition(self, e: Entity, o: Observation, machine: str,
                                   outcome: str) -> None:
        """A transition of the failover that seeded `e`: the last one before the snapshot
        must leave the state the snapshot holds (a failed or rejected one leaves its
        `from_state`)."""
        assert e.seeded is not None
        self.transitions.append(TransitionRow(
            self.cluster, self.topic, self.partition, e.broker_id, machine, o.seq, None,
            o.from_state, o.to_state, outcome, SEEDED, o.source))
        if o.pos != e.last_seeded_pos:
            return
        left = o.to_state if outcome == APPLIED else o.from_state
        e.verdict("state", left == e.seeded[1], o.seq, o.pos, left, e.seeded[1], o.source)

    def _observe_snapshot(self, o: Observation, machine: str) -> None:
        broker_id = o.broker_id if machine == REPLICA else None
        e = self.entity(broker_id)
        e.points += 1
        got = self.replay_state_at(machine, broker_id, o.seq)
        if got is not None:
            e.verdict("state", got == o.to_state, o.seq, o.pos, o.to_state, got, o.source)

    def _leadership_at(self, seq: int, kind: str) -> list[ReplayedLeadership]:
        """The replay's partition states sent (written, for a WRITE_KINDS line) at `seq`,
        else the last one before it. A replay output without `partition_state_writes`
        (written before the table existed) falls back to the requests."""
        source = self.writes if kind in WRITE_KINDS and self.writes else self.leadership
        at = [lead for lead in source if lead.seq == seq]
        if at:
            return at
        before = [lead for lead in source if lead.seq < seq]
        return before[-1:] or [lead for lead in self.seeds if lead.seq <= seq][-1:]

    def _before(self, seq: int, kind: str) -> ReplayedLeadership | None:
        """The partition state in force when the event at `seq` began: the last one the
        replay sent (wrote) before it, else the one a snapshot seeded."""
        source = self.writes if kind in WRITE_KINDS and self.writes else self.leadership
        before = [lead for lead in source if lead.seq < seq]
        if before:
            return before[-1]
        seeded = [lead for lead in self.seeds if lead.seq < seq]
        return seeded[-1] if seeded else None

    def _observe_leadership(self, o: Observation) -> None:
        logged: dict[str, Any] = {f: getattr(o, f) for f in FIELDS}
        if all(v is None for v in logged.values()):
            return
        e = self.entity(None)
        if o.kind != "partition_transition":
            e.points += 1
        at = self._leadership_at(o.seq, o.kind)
        if not at and not self.touched_by(o.seq):
            return  # nothing replayed for this partition yet: cannot be compared
        # A state logged in the middle of an event the replay changes the partition in
        # is held against the replay at that point too: the state in force when the
        # event began (a new controller's first UpdateMetadata carries every partition as
        # ZooKeeper holds it, before the failover's own ISR removals and elections).
        start = self._before(o.seq, o.kind) if any(
            lead.seq == o.seq for lead in at) else None
        # The whole logged state must be that one, not a field here and one there.
        at_start = start is not None and all(
            _same(f, logged[f], getattr(start, f)) for f in FIELDS if logged[f] is not None)
        for f in FIELDS:
            want = logged[f]
            if want is None:
                continue
            values = [getattr(lead, f) for lead in at]
            ok = at_start or any(_same(f, want, g) for g in values)
            e.verdict(f, ok, o.seq, o.pos, render(want),
                      render(values[-1]) if values else None, o.source)

    def add_replayed_transitions(self) -> None:
        """Every replayed transition: `observed` if a log line matched it, else `inferred`."""
        for (machine, broker_id), rs in self.replayed.items():
            for r in rs:
                if r.matched_source is None:
                    self.entity(broker_id).inferred += 1
                self.transitions.append(TransitionRow(
                    self.cluster, self.topic, self.partition, broker_id, machine, r.seq,
                    r.step, r.from_state, r.to_state, r.outcome,
                    OBSERVED if r.matched_source is not None else INFERRED, r.matched_source))

    def rows(self) -> list[ComparisonRow]:
        """The partition's row first, then its replicas by broker id."""
        order = sorted(self.entities, key=lambda b: -1 if b is None else b)
        return [self.entities[b].row(self.cluster, self.topic, self.partition) for b in order]


def _same(field: str, logged: Any, replayed: Any) -> bool:
    """Whether a replayed value is the logged one (an ISR as a set)."""
    if field == "isr":
        return replayed is not None and set(replayed) == set(logged)
    return bool(logged == replayed)


def _leadership(rows: Iterable[Row], order: str) -> list[ReplayedLeadership]:
    """Rows carrying a partition state, in the replay's order (`order`: batch or write)."""
    return sorted(
        (ReplayedLeadership(value(x["seq"]), value(x.get(order)) or 0, value(x["leader"]),
                            value(x["isr"]), value(x["leader_epoch"])) for x in rows),
        key=lambda lead: (lead.seq, lead.batch))


def compare_partition(
    cluster: str, topic: str, partition: int,
    observed: Iterable[Row],
    changes: Iterable[Row],
    leadership: Iterable[Row],
    final_partition_state: str | None,
    final_replica_states: dict[int, str],
    writes: Iterable[Row] = (),
    seeds: Iterable[Row] = (),
) -> tuple[list[ComparisonRow], list[TransitionRow]]:
    """Compare one partition. `observed`: rows of observed_state_changes; `changes`: rows of
    state_changes; `leadership`: rows of leader_and_isr_requests and
    update_metadata_requests (seq, batch, leader, leader_epoch, isr); the final states: rows
    of partition_states and replica_states; `writes`: rows of partition_state_writes (seq,
    write, leader, leader_epoch, isr); `seeds`: the PartitionSnapshot events of the log
    (seq, leader, leader_epoch, isr). Returns (comparison rows, transition rows)."""
    comparison = PartitionComparison(
        cluster, topic, partition, _leadership(leadership, "batch"),
        _leadership(writes, "write"),
        _leadership([s for s in seeds if value(s["leader"]) is not None], "batch"))
    comparison.load_replay(
        sorted(changes, key=lambda c: (value(c["seq"]), value(c["step"]))),
        final_partition_state, final_replica_states)
    ordered = sorted((Observation.of(o) for o in observed), key=lambda o: (o.seq, o.pos))
    comparison.mark_seeded_transitions(ordered)
    for o in ordered:
        comparison.observe(o)
    comparison.add_replayed_transitions()
    return comparison.rows(), comparison.transitions


@dataclass
class PartitionInputs:
    """Everything `compare_partition` reads of one partition."""

    observed: list[Row] = field(default_factory=list)
    changes: list[Row] = field(default_factory=list)
    leadership: list[Row] = field(default_factory=list)
    writes: list[Row] = field(default_factory=list)
    seeds: list[Row] = field(default_factory=list)
    partition_state: str | None = None
    replica_states: dict[int, str] = field(default_factory=dict)


def compare_all(cluster: str, observations: Iterable[Row], state_changes: Iterable[Row],
                leadership: Iterable[Row], partition_states: Iterable[Row],
                replica_states: Iterable[Row], writes: Iterable[Row] = (),
                seeds: Iterable[Row] = ()
                ) -> tuple[list[ComparisonRow], list[TransitionRow]]:
    """`compare_partition` over every partition of one cluster, in one process (tests,
    small logs): the same grouping the Spark job does with cogroup."""
    groups: dict[tuple[str, int], PartitionInputs] = {}

    def of(row: Row) -> PartitionInputs:
        return groups.setdefault((row["topic"], row["partition"]), PartitionInputs())

    for o in observations:
        if o.get("topic") is not None and o.get("partition") is not None:
            of(o).observed.append(o)
    for c in state_changes:
        of(c).changes.append(c)
    for x in leadership:
        of(x).leadership.append(x)
    for w in writes:
        of(w).writes.append(w)
    for s in seeds:
        if s.get("event_type", ET.PARTITION_SNAPSHOT) == ET.PARTITION_SNAPSHOT:
            of(s).seeds.append(s)
    for ps in partition_states:
        of(ps).partition_state = ps["state"]
    for rs in replica_states:
        of(rs).replica_states[rs["broker_id"]] = rs["state"]
    rows: list[ComparisonRow] = []
    transitions: list[TransitionRow] = []
    for (topic, partition), g in sorted(groups.items(), key=lambda item: item[0]):
        r, t = compare_partition(cluster, topic, partition, g.observed, g.changes,
                                 g.leadership, g.partition_state, g.replica_states,
                                 g.writes, g.seeds)
        rows += r
        transitions += t
    return rows, transitions
