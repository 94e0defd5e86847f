"""What the controller caches about each partition and topic (Kafka's `ControllerContext`),
and the
compact snapshot the Spark job keeps in `GroupState` between runs.

During a replay the view is mutable (`Part`, `Topic`: slotted classes, cheap to update in
the hot loop); between replays it is an immutable `BucketState`, a tuple snapshot that
serialises to bytes and thaws back into exactly the same view.
"""

from __future__ import annotations

import io
import pickle
import zlib
from dataclasses import dataclass
from typing import Any, NamedTuple

from statemachine.frozen import mypyc_attr, rebuilt
from statemachine.rows import Ints
from statemachine.states import PartitionState, ReplicaState

RECOVERED = "RECOVERED"
RECOVERING = "RECOVERING"
NO_LEADER = -1  # LeaderAndIsr.NoLeader
LEADER_DURING_DELETE = -2  # LeaderAndIsr.LeaderDuringDelete
EPOCH_DURING_DELETE = -2  # LeaderAndIsr.EpochDuringDelete
NO_EPOCH = -1  # LeaderAndIsr.NoEpoch

# The kinds of window a partition can have open (`statemachine.windows` opens and closes
# them; the model only saves them with the partition).
OFFLINE = "offline"
UNDER_REPLICATED = "under_replicated"
UNDER_MIN_ISR = "under_min_isr"
REASSIGNING = "reassigning"
DELETING = "deleting"

# One bit per kind, in the order of the kinds' names: rows of one partition come sorted.
_DELETING, _OFFLINE, _REASSIGNING, _UNDER_MIN_ISR, _UNDER_REPLICATED = 1, 2, 4, 8, 16
KINDS: tuple[tuple[int, str], ...] = (
    (_DELETING, DELETING), (_OFFLINE, OFFLINE), (_REASSIGNING, REASSIGNING),
    (_UNDER_MIN_ISR, UNDER_MIN_ISR), (_UNDER_REPLICATED, UNDER_REPLICATED),
)
BITS = {kind: bit for bit, kind in KINDS}
# The kinds that make an incident (`statemachine.incidents`): the partition cannot be
# written at all, or not with acks=all.
INCIDENT_KINDS = frozenset((OFFLINE, UNDER_MIN_ISR))


class OpenWindow(NamedTuple):
    """A window still open: when it opened and why."""

    start_seq: int
    start_ts: Any
    cause_event: str | None
    cause_broker: int | None
    # The seq of the event the window belongs to, when it is not `start_seq`: a KRaft
    # window opens at the partition's own record of the broker operation's batch, and
    # belongs to the operation's broker record (`statemachine.kraft.fold`).
    event_seq: int | None = None

    @property
    def incident_seq(self) -> int:
        return self.start_seq if self.event_seq is None else self.event_seq


def window_mask(windows: dict[str, OpenWindow] | None) -> int:
    """The bits of the kinds open in `windows`."""
    mask = 0
    for kind in windows or ():
        mask |= BITS[kind]
    return mask


# The KRaft fold's partition (`statemachine.kraft.image.KraftPart`, interpreted) extends it.
@mypyc_attr(allow_interpreted_subclasses=True)
class Part:
    """One partition: assignment, cached leadership (the ZK state), machine states."""

    __slots__ = (
        "partition", "replicas", "adding", "removing",
        "has_leadership", "leader", "leader_epoch", "isr", "zk_version", "controller_epoch",
        "zk_controller_epoch",
        "recovering", "partition_state", "replica_states", "last_seq",
        # Open windows of unavailability (`statemachine.windows`): kind -> OpenWindow;
        # None while none is open, so that a healthy partition costs nothing.
        "windows",
        # Transient (never saved): the step and batch counters of seq `counted_seq`.
        "counted_seq", "step", "batch", "batch_id", "writes",
        # Transient: the topic's name (its rows need it; the saved topic holds it), the
        # window kinds open (a bit mask derived from `windows`), and whether the current
        # event or step has touched the partition (`ControllerContext.touched`).
        "topic", "window_mask", "marked",
    )

    def __init__(self, partition: int, topic: str = "") -> None:
        self.partition = partition
        self.topic = topic
        self.replicas: Ints = ()
        self.adding: Ints = ()
        self.removing: Ints = ()
        self.has_leadership = False
        self.leader = NO_LEADER
        self.leader_epoch = 0
        self.isr: Ints = ()
        self.zk_version = 0
        # The controller epoch stamped on the state: in the controller's cache, and in ZK.
        # They differ after an OfflineReplica of a replica outside the ISR, which re-stamps
        # the cache without a write; a failover reloads ZK's.
        self.controller_epoch = 0
        self.zk_controller_epoch = 0
        self.recovering = False
        # A partition Kafka has never seen is NonExistentPartition (an entry is created
        # lazily by the machine; this is the same thing).
        self.partition_state: int = PartitionState.NonExistentPartition
        self.replica_states: dict[int, int] = {}
        self.last_seq = -1
        self.windows: dict[str, OpenWindow] | None = None
        self.window_mask = 0
        self.marked = False
        self.counted_seq = -1  # the seq the three counters below belong to
        self.step = 0  # state changes of this partition recorded in `counted_seq`
        self.batch = 0  # request batches that carried this partition in `counted_seq`
        self.batch_id = 0  # id of the batch that was numbered `batch`
        self.writes = 0  # writes of the state znode in `counted_seq`

    @property
    def being_reassigned(self) -> bool:
        return bool(self.adding or self.removing)

    @property
    def target_replicas(self) -> Ints:
        removing = self.removing
        return tuple(r for r in self.replicas if r not in removing) if removing else self.replicas

    @property
    def origin_replicas(self) -> Ints:
        adding = self.adding
        return tuple(r for r in self.replicas if r not in adding) if adding else self.replicas

    def clear_leadership(self) -> None:
        self.has_leadership = False
        self.leader = NO_LEADER
        self.leader_epoch = 0
        self.isr = ()
        self.zk_version = 0
        self.controller_epoch = 0
        self.zk_controller_epoch = 0
        self.recovering = False

    def written(self, epoch: int) -> None:
        """A controller write of the partition state: ZK and cache carry `epoch`."""
        self.controller_epoch = self.zk_controller_epoch = epoch

    def freeze(self) -> tuple[Any, ...]:
        windows = self.windows
        return (
            self.partition, self.replicas, self.adding, self.removing,
            self.has_leadership, self.leader, self.leader_epoch, self.isr, self.zk_version,
            self.controller_epoch, self.zk_controller_epoch, self.recovering, self.partition_state,
            tuple(sorted(self.replica_states.items())), self.last_seq,
            tuple(sorted(windows.items())) if windows else None,
        )

    @classmethod
    def thaw(cls, t: tuple[Any, ...], topic: str = "") -> Part:
        """The part frozen as `t` (format 2, or format 1: 15 fields, no windows)."""
        p = cls(t[0], topic)
        (
            _, p.replicas, p.adding, p.removing,
            p.has_leadership, p.leader, p.leader_epoch, p.isr, p.zk_version,
            p.controller_epoch, p.zk_controller_epoch, p.recovering, partition_state,
            replica_states, p.last_seq,
        ) = t[:15]
        p.partition_state = partition_state
        p.replica_states = dict(replica_states)
        windows = t[15] if len(t) > 15 else None
        p.windows = {kind: OpenWindow(*w) for kind, w in windows} if windows else None
        p.window_mask = window_mask(p.windows)
        return p


class Topic:
    """One topic: its partitions and the TopicDeletionManager's bookkeeping for it."""

    __slots__ = ("name", "parts", "queued_for_deletion", "deletion_started",
                 "ineligible_for_deletion", "unclean_leader_election_enable",
                 "deletion_started_count")

    def __init__(self, name: str) -> None:
        self.name = name
        self.parts: dict[int, Part] = {}
        self.queued_for_deletion = False  # topicsToBeDeleted
        self.deletion_started = False  # topicsWithDeletionStarted
        self.ineligible_for_deletion = False  # topicsIneligibleForDeletion
        # The topic's unclean.leader.election.enable override; None: the broker default.
        self.unclean_leader_election_enable: bool | None = None
        # Replicas in ReplicaDeletionStarted (derived, kept up to date by the replica
        # machine): while any exists, resumeDeletions has nothing to do for the topic, and
        # knowing it without a scan keeps a deletion linear in its StopReplica responses.
        self.deletion_started_count = 0

    @property
    def exists(self) -> bool:
        """In `allTopics`: some partition has an assignment."""
        return any(p.replicas for p in self.parts.values())

    def sorted_parts(self) -> list[Part]:
        return [self.parts[k] for k in sorted(self.parts)]

    def freeze(self) -> tuple[Any, ...]:
        return (
            self.name, self.queued_for_deletion, self.deletion_started,
            self.ineligible_for_deletion, self.unclean_leader_election_enable,
            tuple(self.parts[k].freeze() for k in sorted(self.parts)),
        )

    @classmethod
    def thaw(cls, t: tuple[Any, ...]) -> Topic:
        name, queued, started, ineligible, unclean, parts = t
        topic = cls(name)
        topic.queued_for_deletion, topic.deletion_started = queued, started
        topic.ineligible_for_deletion, topic.unclean_leader_election_enable = ineligible, unclean
        topic.parts = {part.partition: part for part in (Part.thaw(t, name) for t in parts)}
        topic.deletion_started_count = sum(
            1 for p in topic.parts.values() for s in p.replica_states.values()
            if s == ReplicaState.ReplicaDeletionStarted)
        return topic


# 3: every topic frozen on its own (`SavedTopic`), so that a replay thaws only the topics it
# touches. 2: a Part ends with its open windows. Formats 1 and 2 (one compressed tuple of
# every topic) still load.
STATE_FORMAT = 3
_READABLE_FORMATS = (1, 2, 3)
_ELECTABLE = (PartitionState.NewPartition, PartitionState.OfflinePartition)


def incident_of(kind: str, start_seq: int) -> int | None:
    """The incident a window belongs to: the seq of the controller event that opened it,
    for the kinds that make incidents; None for the others. A function of the window
    alone, so that every replay group, every rerun and every night agree on it."""
    return start_seq if kind in INCIDENT_KINDS else None


def open_window_rows(topic: str, part: Part) -> list[tuple[Any, ...]]:
    """The windows `part` still has open, as `PartitionWindowRow` fields without an end,
    sorted by kind."""
    windows = part.windows
    if not windows:
        return []
    return [(topic, part.partition, kind, w.start_seq, w.start_ts, None, None, None,
             w.cause_event, w.cause_broker, None, None, incident_of(kind, w.incident_seq))
            for kind, w in sorted(windows.items())]


class SavedTopic(NamedTuple):
    """One topic as a group saves it: its frozen view, and what a replay must know of it
    without thawing it: which brokers wake it, the figures of the run summary and the
    windows it has open (every run lists those)."""

    blob: bytes  # zlib(pickle(Topic.freeze()))
    # The brokers with a replica of it or leading one of its partitions: a broker's
    # liveness change wakes it (`ControllerContext.topics_by_broker`).
    brokers: tuple[int, ...]
    leaders: tuple[int, ...]  # leaders of its partitions that have leadership (-1: none)
    # Some partition is New or Offline: every broker change retries it
    # (`triggerOnlinePartitionStateChange`).
    electable: bool
    queued: bool  # queued for deletion: every deletion activity walks it
    states: tuple[tuple[int, int], ...]  # (partition state, partitions), by state
    offline: tuple[int, ...]  # its partitions in OfflinePartition
    windows: tuple[tuple[Any, ...], ...]  # `open_window_rows` of every partition


def _dumps(frozen: tuple[Any, ...]) -> bytes:
    """Pickled without the memo (`Pickler.fast`): equal tuples give equal bytes whether or
    not they share objects (an ISR that is the replica tuple itself), so a topic's saved
    bytes depend on its state alone. The tuples hold no cycles."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, 5)
    pickler.fast = True
    pickler.dump(frozen)
    return buffer.getvalue()


def save_topic(topic: Topic, frozen: tuple[Any, ...] | None = None) -> SavedTopic:
    """`topic` saved; `frozen` is its `freeze()` when the caller has it already."""
    frozen = topic.freeze() if frozen is None else frozen
    brokers: set[int] = set()
    leaders: set[int] = set()
    states: dict[int, int] = {}
    offline: list[int] = []
    windows: list[tuple[Any, ...]] = []
    electable = False
    for part in topic.sorted_parts():
        brokers.update(part.replicas)
        if part.has_leadership:
            leaders.add(part.leader)
            if part.leader >= 0:
                brokers.add(part.leader)
        state = part.partition_state
        states[state] = states.get(state, 0) + 1
        if state in _ELECTABLE:
            electable = True
        if state == PartitionState.OfflinePartition:
            offline.append(part.partition)
        if part.windows:
            windows.extend(open_window_rows(topic.name, part))
    blob = zlib.compress(_dumps(frozen), 1)
    return SavedTopic(blob, tuple(sorted(brokers)), tuple(sorted(leaders)), electable,
                      topic.queued_for_deletion, tuple(sorted(states.items())),
                      tuple(offline), tuple(windows))


def frozen_topic(saved: SavedTopic) -> tuple[Any, ...]:
    """The `Topic.freeze()` tuple `saved` holds."""
    frozen: tuple[Any, ...] = pickle.loads(zlib.decompress(saved.blob))
    return frozen


@dataclass(frozen=True, slots=True)
class BucketState:
    """The saved view of every topic in one group, plus how far the fold has got.

    `watermark` is the highest `seq` applied (events of the group and cluster steps); an
    event at or below it is late. `topics` holds each topic saved on its own
    (`SavedTopic`), sorted by name: a replay thaws the topics its events and cluster steps
    touch and carries the others over as they are (`statemachine.replay.Fold`).
    """

    watermark: int = -1
    topics: tuple[tuple[str, SavedTopic], ...] = ()

    def to_bytes(self) -> bytes:
        # Plain tuples of ints, strings, bools and the topics' own compressed blobs.
        return pickle.dumps(
            (STATE_FORMAT, self.watermark, tuple((n, tuple(t)) for n, t in self.topics)), 5)

    @classmethod
    def from_bytes(cls, data: bytes) -> BucketState:
        # Formats 1 and 2 were compressed as a whole; format 3 is a pickle (protocol 5
        # starts with 0x80) of topics compressed one by one.
        fmt, watermark, topics = pickle.loads(
            data if data[:1] == b"\x80" else zlib.decompress(data))
        if fmt not in _READABLE_FORMATS:
            raise ValueError(f"saved state has format {fmt}, this build reads "
                             f"{' and '.join(map(str, _READABLE_FORMATS))}")
        if fmt < 3:
            return cls.freeze(watermark, {t[0]: Topic.thaw(t) for t in topics})
        return cls(watermark, tuple((n, SavedTopic._make(t)) for n, t in topics))

    def thaw(self) -> dict[str, Topic]:
        """Every topic, thawed."""
        return {name: Topic.thaw(frozen_topic(t)) for name, t in self.topics}

    @classmethod
    def freeze(cls, watermark: int, topics: dict[str, Topic]) -> BucketState:
        return cls(watermark, tuple((name, save_topic(topics[name])) for name in sorted(topics)))

    def partitions_by_state(self) -> dict[int, int]:
        """Partitions by state (`PartitionState`), over every topic."""
        counts: dict[int, int] = {}
        for _, saved in self.topics:
            for state, n in saved.states:
                counts[state] = counts.get(state, 0) + n
        return counts

    def offline_partitions(self, limit: int) -> list[tuple[str, int]]:
        """The first `limit` partitions in OfflinePartition, by topic and partition."""
        found: list[tuple[str, int]] = []
        for name, saved in self.topics:
            for p in saved.offline:
                if len(found) >= limit:
                    return found
                found.append((name, p))
        return found

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt(self)
