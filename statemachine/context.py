"""Everything one replay carries around: settings, the cluster at the current event, the
mutable topic view, the output lists, and the per-(seq, partition) step and batch counters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from statemachine.cluster import ClusterState, ClusterTimeline
from statemachine.events import Event
from statemachine.frozen import rebuilt
from statemachine.model import RECOVERED, RECOVERING, Part, Topic
from statemachine.profiles import KafkaProfile, profile_for
from statemachine.rows import (
    FindingRow,
    Ints,
    LeaderAndIsrRow,
    PartitionStateRow,
    PartitionStateWriteRow,
    PartitionWindowRow,
    ReplicaStateRow,
    StateChangeRow,
    StopReplicaRow,
    UpdateMetadataRow,
)
from statemachine.scala_order import check_binary
from statemachine.states import PARTITION_NAMES, REPLICA_NAMES, PartitionState

# NamedTuple rows built at C speed (a NamedTuple's own __new__ is a Python function).
_new = tuple.__new__
# The states `triggerOnlinePartitionStateChange` retries (`partitionsInStates`).
_ELECTABLE = (PartitionState.NewPartition, PartitionState.OfflinePartition)


def _part_key(part: Part) -> tuple[str, int]:
    return part.topic, part.partition


@dataclass(frozen=True, slots=True)
class ReplayConfig:
    """Cluster settings the controller reads (Kafka defaults)."""

    # Broker default of unclean.leader.election.enable; a topic override wins.
    unclean_leader_election_enable: bool = False
    # delete.topic.enable: when false, deletion requests are ignored (Kafka's
    # `TopicDeletionManager.isDeleteTopicEnabled`).
    delete_topic_enable: bool = True
    # min.insync.replicas (broker default, Kafka's 1) and per-topic overrides as
    # (topic, value) pairs: what the `under_min_isr` windows compare the ISR with.
    min_insync_replicas: int = 1
    topic_min_insync_replicas: tuple[tuple[str, int], ...] = ()
    # Per-topic unclean.leader.election.enable that win over the log's own topic setting
    # (PartitionCreated / TopicConfigChanged): a what-if's `topic_config`. Empty for a
    # replay, where the log's setting is the topic's.
    topic_unclean_leader_election_enable: tuple[tuple[str, bool], ...] = ()
    # Brokers a what-if variant fails and holds dead against the log (empty for a replay):
    # the log's AlterPartition that names one of them while it is dead was sent by, or
    # vouches for, a broker the variant's cluster no longer has, so Kafka would never
    # have received it (`statemachine.flows.NO_LONGER_APPLIES`).
    held_dead: tuple[int, ...] = ()
    # The Kafka release line replayed (`statemachine.profiles`), and its Scala binary.
    kafka_version: str = "3.7"
    # Scala binary version of the Kafka build ("2.13" for 3.x, "2.12" for the 2.x line):
    # the iteration order of its hash maps of broker ids (`statemachine.scala_order`).
    scala_binary: str = "2.13"

    # The behaviour switches of `kafka_version`, resolved once here: the core reads them
    # on its hot paths (every replica-machine call, every election).
    profile: KafkaProfile = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """ValueError for an unknown Scala binary, an unsupported `kafka_version`, or a
        min.insync.replicas below 1 (Kafka's `LogConfig` refuses it: at 0 no partition
        would ever count as under min ISR)."""
        check_binary(self.scala_binary)
        object.__setattr__(self, "profile", profile_for(self.kafka_version))
        for topic, value in (("", self.min_insync_replicas), *self.topic_min_insync_replicas):
            if value < 1:
                where = f"topic {topic!r}" if topic else "the cluster"
                raise ValueError(f"min.insync.replicas of {where} is {value}; Kafka requires "
                                 "at least 1")

    def unclean_leader_election_override(self, topic: str) -> bool | None:
        """The topic's forced unclean.leader.election.enable, or None (the log decides)."""
        for name, value in self.topic_unclean_leader_election_enable:
            if name == topic:
                return value
        return None

    def min_insync_replicas_of(self, topic: str) -> int:
        """The topic's min.insync.replicas: its override, else the broker default."""
        for name, value in self.topic_min_insync_replicas:
            if name == topic:
                return value
        return self.min_insync_replicas

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt(self)


@dataclass(slots=True)
class Outputs:
    """Rows for every table the core feeds, plus the counts the run summary needs."""

    partition_states: list[PartitionStateRow] = field(default_factory=list)
    replica_states: list[ReplicaStateRow] = field(default_factory=list)
    state_changes: list[StateChangeRow] = field(default_factory=list)
    partition_state_writes: list[PartitionStateWriteRow] = field(default_factory=list)
    leader_and_isr: list[LeaderAndIsrRow] = field(default_factory=list)
    update_metadata: list[UpdateMetadataRow] = field(default_factory=list)
    stop_replica: list[StopReplicaRow] = field(default_factory=list)
    findings: list[FindingRow] = field(default_factory=list)
    late: list[Event] = field(default_factory=list)
    applied: int = 0
    # Closed windows as they close; then, from `emit_states`, the windows still open.
    partition_windows: list[PartitionWindowRow] = field(default_factory=list)

    # The per-event tables (every table but the two state tables, which come once at the
    # end) can be taken in chunks while the fold runs: `replay(..., flush=...)`.
    def event_rows(self) -> int:
        return (len(self.state_changes) + len(self.leader_and_isr)
                + len(self.update_metadata) + len(self.stop_replica) + len(self.findings)
                + len(self.partition_windows) + len(self.partition_state_writes))

    def clear_event_rows(self) -> None:
        self.state_changes.clear()
        self.partition_state_writes.clear()
        self.leader_and_isr.clear()
        self.update_metadata.clear()
        self.stop_replica.clear()
        self.findings.clear()
        self.partition_windows.clear()


class ControllerContext:
    """The controller's view during one replay: cluster at the current event, topics and
    outputs. Step and batch numbers restart at every `seq` and count per partition (kept on
    the `Part`), so they do not depend on which other topics share the replay group."""

    __slots__ = (
        "config", "timeline", "topics", "out", "seq", "ts", "source",
        "live", "shutting_down", "live_or_shutting_down", "epoch", "controller",
        "topics_by_broker", "last_batch_id", "touched", "min_isr",
        "default_min_isr", "queued", "leaderless", "walked_seq", "walked_topics",
    )

    def __init__(self, config: ReplayConfig, timeline: ClusterTimeline,
                 topics: dict[str, Topic]) -> None:
        self.config = config
        self.timeline = timeline
        self.topics = topics
        self.out = Outputs()
        self.seq = -1
        self.ts: object = None
        self.source: str | None = None
        self.live: frozenset[int] = frozenset()
        self.shutting_down: frozenset[int] = frozenset()
        self.live_or_shutting_down: frozenset[int] = frozenset()
        self.epoch = 0
        self.controller = -1
        # Id of the last request batch opened; an int, so a Part never points at a batch.
        self.last_batch_id = 0
        # broker -> topics with a replica on it (assigned, adding or removing): which
        # topics a broker event wakes. Derived, so never saved.
        self.topics_by_broker: dict[int, set[str]] = {}
        # The partitions touched by the current event or step, each once (`Part.marked`):
        # the windows are evaluated on them after it (`statemachine.windows.settle`).
        self.touched: list[Part] = []
        self.min_isr = dict(config.topic_min_insync_replicas)
        self.default_min_isr = config.min_insync_replicas
        # Names of the topics queued for deletion (`topicsToBeDeleted`; derived, kept by
        # `statemachine.deletion`): what a deletion-activity step walks.
        self.queued: set[str] = set()
        # A superset of the partitions Kafka retries at every broker change, whatever
        # brokers it touches: New or Offline, or led by a broker that is not live
        # (`partitionsInStates`, `partitionsWithOfflineLeader`). Built at the first broker
        # change, then kept by `note_leaderless`, so a step costs nothing where none is.
        self.leaderless: set[Part] | None = None
        # The topics `resumeDeletions` walked in seq `walked_seq`: a deletion-activity
        # step does not walk them again (`statemachine.flows.apply_deletion_step`).
        self.walked_seq = -1
        self.walked_topics: set[str] = set()
        for topic in list(topics.values()):
            self.adopt(topic)

    def adopt(self, topic: Topic) -> None:
        """Add a topic thawed from the saved state (`statemachine.replay.Fold` thaws a
        topic when an event or a cluster step first touches it) with its derived
        indexes, as if it had been in the view from the start: it has not changed since."""
        self.topics[topic.name] = topic
        by_broker = self.topics_by_broker
        for part in topic.parts.values():
            for r in part.replicas:
                by_broker.setdefault(r, set()).add(topic.name)
            if part.has_leadership and part.leader >= 0:
                # A leader outside the assignment (a reassignment whose re-election
                # failed) must still be found when its broker's liveness changes.
                by_broker.setdefault(part.leader, set()).add(topic.name)
        if topic.queued_for_deletion:
            self.queued.add(topic.name)
        found = self.leaderless
        if found is not None:
            found.update(p for p in topic.parts.values()
                         if p.partition_state in _ELECTABLE or p.has_leadership)

    # -- the current event ------------------------------------------------------------

    def begin(self, seq: int, ts: object, source: str | None) -> None:
        self.seq, self.ts, self.source = seq, ts, source

    def set_cluster(self, state: ClusterState) -> None:
        self.set_liveness(state.live, state.shutting_down)
        self.epoch, self.controller = state.epoch, state.controller

    def set_liveness(self, live: frozenset[int], shutting_down: frozenset[int]) -> None:
        self.live, self.shutting_down = live, shutting_down
        self.live_or_shutting_down = live | shutting_down

    def touch(self, part: Part) -> None:
        """Mark `part` as changed by the current event; restart its counters on a new seq."""
        if part.counted_seq != self.seq:
            part.counted_seq, part.step, part.batch, part.batch_id = self.seq, 0, 0, 0
            part.writes = 0
        part.last_seq = self.seq
        if not part.marked:
            part.marked = True
            self.touched.append(part)

    def mark(self, part: Part) -> None:
        """Have `part`'s windows evaluated after the current event, without counting it as
        changed (a liveness change, an assignment change of a partition with no state
        change)."""
        if not part.marked:
            part.marked = True
            self.touched.append(part)

    def new_batch(self) -> int:
        self.last_batch_id += 1
        return self.last_batch_id

    def batch_number(self, part: Part, batch_id: int) -> int:
        """Number of the batch `batch_id` among the batches that sent requests for `part`
        in this seq."""
        if part.batch_id != batch_id or part.counted_seq != self.seq:
            self.touch(part)
            part.batch += 1
            part.batch_id = batch_id
        return part.batch

    def walked(self, topic: str) -> None:
        """`topic` went through `resumeDeletions` in the current seq."""
        if self.walked_seq != self.seq:
            self.walked_seq, self.walked_topics = self.seq, set()
        self.walked_topics.add(topic)

    def note_leaderless(self) -> None:
        """Add the touched partitions that Kafka's broker changes would retry."""
        found = self.leaderless
        if found is None:
            return
        live = self.live
        for part in self.touched:
            if part.partition_state in _ELECTABLE or (part.has_leadership
                                                      and part.leader not in live):
                found.add(part)

    def leaderless_by_topic(self) -> dict[str, list[Part]]:
        """The partitions Kafka's broker changes retry, by topic name, sorted; prunes the
        index of those that have a live leader again."""
        found = self.leaderless
        if found is None:
            found = self.leaderless = {
                p for t in self.topics.values() for p in t.parts.values()
                if p.partition_state in _ELECTABLE or p.has_leadership}
        live = self.live
        keep = self.leaderless = {p for p in found if p.partition_state in _ELECTABLE
                                  or (p.has_leadership and p.leader not in live)}
        by_topic: dict[str, list[Part]] = {}
        for part in sorted(keep, key=_part_key):
            by_topic.setdefault(part.topic, []).append(part)
        return by_topic

    # -- recording --------------------------------------------------------------------

    def change(self, topic: str, part: Part, broker: int | None, machine: str,
               from_state: str, to_state: str, outcome: str, reason: str | None) -> None:
        """A transition attempted: `outcome` is `rows.APPLIED`, `REJECTED` or `FAILED`."""
        self.touch(part)
        part.step += 1
        self.out.state_changes.append(_new(StateChangeRow, (
            self.seq, self.ts, part.step, topic, part.partition, broker,
            machine, from_state, to_state, outcome, reason)))

    def written(self, topic: str, part: Part, cause: str, by_controller: bool = True) -> None:
        """`part`'s state znode was written with its current leader and ISR (a
        `rows.WRITE_CAUSES` step). A controller write stamps ZK and cache with the current
        controller epoch; a leader's own ISR write (before AlterIsr, 2.7) keeps the epoch
        of its last LeaderAndIsr."""
        if by_controller:
            part.written(self.epoch)
        self.touch(part)
        part.writes += 1
        self.out.partition_state_writes.append(_new(PartitionStateWriteRow, (
            self.seq, self.ts, part.writes, topic, part.partition, part.leader, part.leader_epoch,
            part.isr, RECOVERING if part.recovering else RECOVERED, part.zk_version,
            part.zk_controller_epoch, cause)))

    def finding(self, topic: str | None, partition: int | None, broker: int | None,
                kind: str, detail: str) -> None:
        self.out.findings.append(FindingRow(
            self.seq, self.ts, topic, partition, broker, kind, detail, self.source))

    # -- topology ---------------------------------------------------------------------

    def topic(self, name: str) -> Topic:
        t = self.topics.get(name)
        if t is None:
            t = self.topics[name] = Topic(name)
        return t

    def topics_on(self, brokers: Iterable[int]) -> list[Topic]:
        names: set[str] = set()
        for b in brokers:
            names |= self.topics_by_broker.get(b, set())
        return [self.topics[n] for n in sorted(names)]

    def set_assignment(self, topic: Topic, part: Part, replicas: Ints,
                       adding: Ints = (), removing: Ints = ()) -> None:
        part.replicas, part.adding, part.removing = replicas, adding, removing
        self.mark(part)
        for r in replicas:
            s = self.topics_by_broker.get(r)
            if s is None:
                self.topics_by_broker[r] = {topic.name}
            else:
                s.add(topic.name)
        # Stale index entries (a broker that no longer hosts the topic) are harmless: the
        # flows filter by the current assignment. They are dropped at the next thaw.

    # -- end of replay ----------------------------------------------------------------

    def emit_state(self, topic: Topic, part: Part) -> None:
        """The state rows of `part`: its `partition_states` row and a `replica_states` row
        per replica, sorted by broker."""
        lead = part.has_leadership
        name = topic.name
        self.out.partition_states.append(PartitionStateRow(
            name, part.partition, PARTITION_NAMES[part.partition_state],
            part.leader if lead else None,
            part.leader_epoch if lead else None,
            part.isr if lead else None,
            part.replicas, part.adding, part.removing,
            part.zk_version if lead else None,
            part.zk_controller_epoch if lead else None,
            (RECOVERING if part.recovering else RECOVERED) if lead else None,
            topic.queued_for_deletion, part.last_seq))
        rs = self.out.replica_states
        for b in sorted(part.replica_states):
            rs.append(ReplicaStateRow(name, part.partition, b,
                                      REPLICA_NAMES[part.replica_states[b]]))
