"""The KRaft fold: the records of a `__cluster_metadata` log in, the tables of the
ZooKeeper fold out (`partition_states`, `partition_windows`, `broker_timeline`,
`controller_timeline`, findings; incidents from the windows by `statemachine.incidents`).

Records are read in log order, one batch at a time (consecutive records with the same
`batch_base_offset`). Skipped, and counted: records of aborted metadata transactions (the
metadata loader drops them) and of a transaction the log ends inside of (not committed
yet), `NoOpRecord`s, records the ingest could not decode, control records (a
`LeaderChangeMessage` only moves the quorum), and record types the image has no use for
here (features, ACLs, producer ids, ...). Every other record is folded into the image
(`statemachine.kraft.image`), and the windows (`statemachine.windows`, the same
conditions and rows) are evaluated after it, with the record's offset as the seq.

A controller operation on a broker is one event, as a `BrokerFailure` is in ZooKeeper
mode: its `PartitionChangeRecord`s are evaluated with the broker record, at its offset
and with it as the cause, so that one fence is one incident. `ReplicationControlManager`
(3.7.0 `ReplicationControlManager.java`) writes them in one batch, in this order:

* `handleBrokerFenced` (`:1289-1306`) and `handleBrokerUnregistered` (`:1318-1325`): the
  ISR removals and re-elections first (`generateLeaderAndIsrUpdates`), then the
  `FenceBrokerRecord` / `BrokerRegistrationChangeRecord` (fenced) or
  `UnregisterBrokerRecord`: a change that takes the broker out of the ISR or the
  leadership belongs to the broker's next such record of the batch;
* `handleBrokerUnfenced` (`:1338-1350`): the unfence first, then the elections of
  leaderless partitions: a change electing the broker belongs to its unfence before it;
* `handleBrokerInControlledShutdown` (`:1363-1373`): the registration change first,
  then the ISR removals and leadership moves off the broker.

Any other record is its own event: its windows' cause is its type (and its broker for a
broker record), and their `incident_id` its offset. `cause_broker` is None for topic,
partition and config records, as for the ZooKeeper fold's topic and partition events.
A leader elected from outside the ISR and the ELR (`PartitionChangeBuilder`'s unclean
election) is an `unclean_leader_election` finding, which `statemachine.incidents` counts.
A record the chosen release profile's controller never writes
(`statemachine.kraft.profiles`) is a `record_outside_profile` finding, and folded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import count, groupby
from typing import Any

from statemachine.kraft import records as K
from statemachine.kraft.image import MODELLED, Change, KraftPart, MetadataImage
from statemachine.kraft.profiles import DEFAULT_KRAFT_VERSION, KraftProfile, kraft_profile_for
from statemachine.kraft.records import MetadataRecord
from statemachine.kraft.timeline import Timeline
from statemachine.model import RECOVERED, RECOVERING, Part, Topic
from statemachine.rows import (
    BrokerIntervalRow,
    ControllerRow,
    FindingRow,
    PartitionStateRow,
    PartitionWindowRow,
)
from statemachine.windows import Cause, mark_topics, open_rows, settle

REJECTED = "metadata_record_rejected"  # a record Kafka's image throws on
OUTSIDE_PROFILE = "record_outside_profile"  # a record the profile's controller never writes
UNCLEAN = "unclean_leader_election"
ONLINE, OFFLINE = "OnlinePartition", "OfflinePartition"

# How the partition changes of a broker operation sit around its broker record.
_REMOVE_AFTER = "remove, changes before"  # fence, unregister
_ADD_BEFORE = "add, changes after"  # unfence
_REMOVE_BEFORE = "remove, changes after"  # controlled shutdown


@dataclass(slots=True)
class KraftCounts:
    """What the fold did with the records (for the run summary)."""

    applied: int = 0
    aborted: int = 0  # in an aborted metadata transaction
    open_transaction: int = 0  # in a transaction the log ends inside of
    noops: int = 0
    unknown: int = 0  # not decoded by the ingest
    control: int = 0
    rejected: int = 0  # what Kafka's image throws on
    not_modelled: Counter[str] = field(default_factory=Counter)  # by record type


@dataclass(slots=True)
class KraftOutputs:
    partition_states: list[PartitionStateRow] = field(default_factory=list)
    partition_windows: list[PartitionWindowRow] = field(default_factory=list)
    findings: list[FindingRow] = field(default_factory=list)
    broker_timeline: list[BrokerIntervalRow] = field(default_factory=list)
    controller_timeline: list[ControllerRow] = field(default_factory=list)
    counts: KraftCounts = field(default_factory=KraftCounts)


def broker_op(r: MetadataRecord) -> str | None:
    """How a broker record's operation places its partition changes, or None."""
    if r.record_type in (K.FENCE_BROKER, K.UNREGISTER_BROKER):
        return _REMOVE_AFTER
    if r.record_type == K.UNFENCE_BROKER:
        return _ADD_BEFORE
    if r.record_type == K.BROKER_REGISTRATION_CHANGE:
        if r.fenced is not None:
            return _REMOVE_AFTER if r.fenced else _ADD_BEFORE
        if r.in_controlled_shutdown:
            return _REMOVE_BEFORE
    return None


class KraftFold:
    """The fold over one cluster's metadata log; satisfies `statemachine.windows.WindowView`."""

    def __init__(self, default_min_isr: int = 1, profile: KraftProfile | None = None) -> None:
        self.profile = profile or kraft_profile_for(DEFAULT_KRAFT_VERSION)
        self.image = MetadataImage(default_min_isr)
        self.timeline = Timeline()
        self.out = KraftOutputs()
        self.seq = -1
        self.ts: Any = None
        self.touched: list[Part] = []
        self.live_or_shutting_down: frozenset[int] = frozenset()
        self.min_isr: dict[str, int] = {}
        self.default_min_isr = default_min_isr
        # The offset of each partition change that belongs to a broker operation -> the
        # offset of that operation's broker record (a what-if re-decides the operation).
        self.anchored: dict[int, int] = {}

    # -- WindowView --------------------------------------------------------------------

    @property
    def topics(self) -> dict[str, Topic]:
        return self.image.topics

    def mark(self, part: Part) -> None:
        if not part.marked:
            part.marked = True
            self.touched.append(part)

    def topics_on(self, brokers: Iterable[int]) -> list[Topic]:
        return self.image.topics_on(list(brokers))

    # -- feeding -----------------------------------------------------------------------

    def feed(self, records: Iterable[MetadataRecord]) -> None:
        """Records in log order; a batch may not be split between two calls."""
        alone = count()

        def batch_key(r: MetadataRecord) -> tuple[int, int]:
            # A record without its batch is a batch of its own.
            base = r.batch_base_offset
            return (0, base) if base is not None else (1, next(alone))

        for _, batch in groupby(records, key=batch_key):
            self.apply_batch(list(batch))

    def apply_batch(self, batch: list[MetadataRecord]) -> None:
        kept = [r for r in batch if self._keep(r)]
        ops = [(i, op, r.broker_id) for i, r in enumerate(kept)
               if (op := broker_op(r)) is not None]
        pending: dict[int, list[Part]] = {}
        own: dict[int, int] = {}  # id of a partition -> offset of its own record here
        for i, r in enumerate(kept):
            change = self.image.apply(r)
            if change.rejected is None and r.offset is not None:
                for changed in change.parts:
                    own[id(changed[0])] = r.offset
            if change.rejected is not None:
                self._finding(r, REJECTED, f"{r.record_type} at offset {r.offset}: "
                                           f"{change.rejected}")
                self.out.counts.rejected += 1
                anchor = i
            else:
                self.out.counts.applied += 1
                unclean = self._effects(r, change)
                outside = outside_profile(self.profile, r, change)
                if outside is not None:
                    self._finding(r, OUTSIDE_PROFILE, outside)
                anchor = _anchor(i, change, ops) if change.parts and ops else i
                op_offset = kept[anchor].offset
                if anchor != i and r.offset is not None and op_offset is not None:
                    self.anchored[r.offset] = op_offset
                for part, detail in unclean:  # at the operation's seq: its incident's
                    self._finding(kept[anchor], UNCLEAN, detail, part)
            if anchor > i:
                pending.setdefault(anchor, []).extend(self.touched)
                self.touched.clear()
                continue
            self.touched.extend(pending.pop(i, ()))
            self._settle(kept[anchor], own)

    def _keep(self, r: MetadataRecord) -> bool:
        """Moves the quorum; whether the record is folded into the image."""
        counts = self.out.counts
        leader = r.broker_id if r.record_type == K.LEADER_CHANGE else None
        self.timeline.quorum(leader, r.batch_leader_epoch, _seq(r, self.seq), r.ts,
                             self.live_or_shutting_down)
        if r.batch_leader_epoch is not None:
            self.image.quorum_epoch = max(self.image.quorum_epoch, r.batch_leader_epoch)
        if leader is not None:
            self.image.quorum_leader = leader
        if r.transaction in (K.ABORTED, K.OPEN):
            if r.transaction == K.ABORTED:
                counts.aborted += 1
            else:
                counts.open_transaction += 1
            return False
        if r.is_control:
            counts.control += 1
        elif r.record_type == K.NOOP:
            counts.noops += 1
        elif r.record_type == K.UNKNOWN:
            counts.unknown += 1
        elif r.record_type not in MODELLED:
            counts.not_modelled[r.record_type] += 1
        else:
            return True
        return False

    # -- what a record changes ---------------------------------------------------------

    def _effects(self, r: MetadataRecord, change: Change) -> list[tuple[KraftPart, str]]:
        """Mark what the record changed; the unclean elections it made."""
        unclean = []
        for part, leader, isr, elr in change.parts:
            self.mark(part)
            new = part.leader
            if (r.record_type == K.PARTITION_CHANGE and new >= 0 and new != leader
                    and new not in isr and new not in elr):
                unclean.append((part, f"{r.record_type} at offset {r.offset}: leader {new} "
                                      f"elected from outside ISR {list(isr)}"))
        if change.broker is not None:
            available = self.image.available()
            if available != self.live_or_shutting_down:
                self.live_or_shutting_down = available
                mark_topics(self, self.topics_on([change.broker]))
            self.timeline.broker(change.broker, self.image.brokers.get(change.broker),
                                 _seq(r, self.seq), r.ts)
        if change.removed is not None:
            for gone in change.removed.parts.values():
                gone.replicas = ()  # no assignment: every window closes
                self.mark(gone)
        if change.config:
            self.min_isr = self.image.min_isr()
            self.default_min_isr = self.image.default_min_isr()
            mark_topics(self, self.topics.values())
        return unclean

    def _settle(self, at: MetadataRecord, own: dict[int, int] | None = None) -> None:
        """Open and close the windows of the touched partitions for the record `at` (the
        event): each at its own record of the batch (`own`, by partition id), the event's
        when it got none. A reader holding a window against the log finds the partition's
        `PartitionChangeRecord` at the window's edge; only a partition the operation left
        without a record of its own (a fenced leader the controller did not move) has its
        window at the broker record."""
        self.seq, self.ts = _seq(at, self.seq), at.ts
        if self.touched:
            settle(self, _cause(at), None if not own else _own_record(own, self.seq))

    def _finding(self, r: MetadataRecord, kind: str, detail: str,
                 part: KraftPart | None = None) -> None:
        self.out.findings.append(FindingRow(
            r.offset, r.ts, None if part is None else part.topic,
            None if part is None else part.partition, r.broker_id, kind, detail, None))

    # -- the end -----------------------------------------------------------------------

    def finish(self) -> KraftOutputs:
        """The state tables, the windows still open and the timelines, once."""
        out = self.out
        for name in sorted(self.topics):
            for part in self.topics[name].sorted_parts():
                out.partition_states.append(state_row(name, part))
                if part.windows:
                    out.partition_windows.extend(open_rows(name, part))
        out.broker_timeline = self.timeline.broker_rows()
        out.controller_timeline = list(self.timeline.controllers)
        return out


def fold(records: Iterable[MetadataRecord], default_min_isr: int = 1,
         profile: KraftProfile | None = None) -> KraftOutputs:
    """The outputs of one metadata log, records in log order."""
    f = KraftFold(default_min_isr, profile)
    f.feed(records)
    return f.finish()


def state_row(topic: str, part: Part) -> PartitionStateRow:
    """A partition of the image as a `partition_states` row: `zk_version` is the partition
    epoch, `controller_epoch` the quorum leader epoch of the batch that last wrote it, the
    state OnlinePartition while it has a leader (OfflinePartition at -1)."""
    return PartitionStateRow(
        topic, part.partition, ONLINE if part.leader >= 0 else OFFLINE, part.leader,
        part.leader_epoch, part.isr, part.replicas, part.adding, part.removing,
        part.zk_version, part.controller_epoch, RECOVERING if part.recovering else RECOVERED,
        False, part.last_seq)


def outside_profile(profile: KraftProfile, r: MetadataRecord, change: Change) -> str | None:
    """Why the profile's controller would not have written `r` (`statemachine.kraft.profiles`),
    or None. The record is folded all the same: the image merges it alike."""
    where = f"{r.record_type} at offset {r.offset}"
    if not profile.elr and (r.record_type == K.CLEAR_ELR or (
            r.record_type in (K.PARTITION, K.PARTITION_CHANGE)
            and (r.elr is not None or r.last_known_elr is not None))):
        return f"{where}: eligible leader replicas (KIP-966) in a {profile.name} log"
    if (profile.isr_shrink_bumps_leader_epoch and r.record_type == K.PARTITION_CHANGE
            and r.leader in (None, K.NO_LEADER_CHANGE)
            and any(b not in part.isr for part, _, isr, _ in change.parts for b in isr)):
        return (f"{where}: an ISR shrink without a leader epoch bump in a {profile.name} "
                "log (before 3.6 the controller names the leader)")
    return None


def _anchor(i: int, change: Change, ops: list[tuple[int, str, int | None]]) -> int:
    """The index of the broker record whose operation the partition change at `i` is
    part of (module docstring), else `i`."""
    removed: set[int] = set()
    elected: set[int] = set()
    for part, leader, isr, _ in change.parts:
        removed |= {b for b in isr if b not in part.isr}
        if part.leader != leader:
            if leader >= 0:
                removed.add(leader)
            elected.add(part.leader)
    for j, op, b in ops:
        if j > i and op == _REMOVE_AFTER and b in removed:
            return j
    for j, op, b in reversed(ops):
        if j < i and ((op == _REMOVE_BEFORE and b in removed)
                      or (op == _ADD_BEFORE and b in elected)):
            return j
    return i


def _own_record(own: dict[int, int], event: int) -> Callable[[Part], int]:
    """Where a partition's windows open and close: its own record, else the event."""
    def at(part: Part) -> int:
        return own.get(id(part), event)
    return at


def _cause(r: MetadataRecord) -> Cause:
    """The record type, and for a broker record its broker. A
    `BrokerRegistrationChangeRecord` fences, unfences or starts a controlled shutdown
    (`ReplicationControlManager.handleBrokerFenced` / `handleBrokerUnfenced` /
    `handleBrokerInControlledShutdown`): its cause says which, as the record's fields do."""
    broker = r.broker_id if r.record_type in _BROKER_RECORDS else None
    if r.record_type == K.BROKER_REGISTRATION_CHANGE:
        return f"{r.record_type}({_registration_change(r)})", broker
    return r.record_type, broker


def _registration_change(r: MetadataRecord) -> str:
    if r.in_controlled_shutdown:
        return "in controlled shutdown"
    if r.fenced is not None:
        return "fenced" if r.fenced else "unfenced"
    return "unchanged"


_BROKER_RECORDS = frozenset((K.REGISTER_BROKER, K.UNREGISTER_BROKER, K.FENCE_BROKER,
                             K.UNFENCE_BROKER, K.BROKER_REGISTRATION_CHANGE))


def _seq(r: MetadataRecord, last: int) -> int:
    return last if r.offset is None else r.offset
