"""Variants that share their work: in one (cluster, bucket) group, the log's events are
folded once, and each variant goes on alone from the seq where its input first differs.

Every variant of a cluster sees the same log rows; a variant's events are those rows with
its edits (`VariantInput.edit`: its drops out, its edited `ControllerFailover`s, its seqs
renumbered after its injections) plus its injected events. Below the first seq where a
variant's events, its cluster timeline or its config differ from the reference variant's
(the baseline when the run replays one), the two folds are the same fold: same state, same
rows. So the reference is folded once, cut (`statemachine.replay.Fold.cut`) at each seq
where some variant leaves it, and each variant folds only its own events from there, from
the cut's state, exactly as a replay resumes from its checkpoint. A variant whose input in
the group never differs takes the reference's rows whole: the group is not replayed for it.
The reference's rows are emitted once: those before a variant's cut (and all of them, for a
variant that takes the group whole) are that variant's rows too, which is how the variant
stores them (`jobs.whatif.differences`).

Pure Python: no Spark here (`jobs.whatif.shared_group` runs it per group).
"""

from __future__ import annotations

import dataclasses
import heapq
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from jobs.whatif.differences import EVENT_KEYS
from jobs.whatif.plan import drop_matches
from jobs.whatif.scenario import Drop
from schemas import event_types as ET
from schemas.state import CLUSTER_BUCKET
from schemas.whatif import VARIANT_SEPARATOR
from statemachine.cluster import ClusterTimeline
from statemachine.context import Outputs, ReplayConfig
from statemachine.events import Event
from statemachine.model import BucketState
from statemachine.replay import Fold, apply_order, bucket_of

Row = tuple[Any, ...]  # the fields of `statemachine.events.Event`, in order
Rows = Callable[[], Iterator[Row]]  # the group's distinct log rows in fold order, each call
Emit = Callable[[Sequence[str], Outputs], None]  # rows to the outputs of these variants
FLUSH_ROWS = 200_000
FEED_ROWS = 20_000  # events fed to a fold at a time
_SEQ, _EVENT_TYPE, _ISR = map(Event._fields.index, ("seq", "event_type", "isr"))


@dataclass(frozen=True)
class VariantInput:
    """One variant of one cluster, as the shared group function needs it."""

    composite: str  # the variant's cluster key in the staged tables
    cluster: str
    config: ReplayConfig
    timeline: ClusterTimeline
    horizon: int | None  # how far its groups apply the timeline (`jobs.engine.timeline`)
    drops: tuple[Drop, ...] = ()
    points: tuple[int, ...] = ()  # sorted: the log seqs its injections follow
    failovers: dict[int, Event] = field(default_factory=dict)  # log seq -> as it has it
    injected: tuple[Event, ...] = ()  # renumbered, every bucket
    # The first seq where its timeline differs from the reference's (None: never; -1: from
    # the start), computed once on the driver.
    timeline_differs: int | None = None
    # Its drops by the event type they name (None: any type), so that a row is matched
    # only against the drops that can match it (a failure's own drops name broker events).
    drops_by_type: dict[str | None, tuple[Drop, ...]] = field(init=False, compare=False,
                                                             repr=False)

    def __post_init__(self) -> None:
        by_type: dict[str | None, list[Drop]] = {}
        for d in self.drops:
            by_type.setdefault(d.get("event_type"), []).append(d)
        object.__setattr__(self, "drops_by_type",
                           {k: tuple(v) for k, v in by_type.items()})

    @property
    def variant(self) -> str:
        """Its name (the composite key's last part)."""
        return self.composite.rsplit(VARIANT_SEPARATOR, 1)[-1]

    def edit(self, row: Row) -> Event | None:
        """The log's row as this variant has it; None when it drops it."""
        e = Event._make(row)
        if self.drops:
            by_type = self.drops_by_type
            for d in (*by_type.get(e.event_type, ()), *by_type.get(None, ())):
                if drop_matches(d, self.cluster, e):
                    return None
        if e.event_type == ET.CONTROLLER_FAILOVER and e.seq in self.failovers:
            e = self.failovers[e.seq]
        if self.points and e.seq is not None:
            e = e._replace(seq=e.seq + bisect_left(self.points, e.seq))
        return e

    def injected_in(self, bucket: int, buckets: int) -> list[Event]:
        """Its injected events of `bucket`, keyed as `jobs.engine.keying` keys rows."""
        return sorted((e for e in self.injected if _bucket(self.cluster, e, buckets) == bucket),
                      key=apply_order)

    def events(self, rows: Iterable[Row], injected: list[Event],
               since: int = -1) -> Iterator[Event]:
        """Its events in apply order, from seq `since` on: the edited log rows merged with
        its injected ones. A row whose seq, however renumbered, stays below `since` is
        passed over before it is edited."""
        ahead = len(self.points)  # the most a renumbering adds
        edited = (e for row in rows if row[_SEQ] + ahead >= since
                  for e in (self.edit(row),) if e is not None and e.seq >= since)
        injected = [e for e in injected if e.seq >= since]
        return heapq.merge(edited, injected, key=apply_order) if injected else edited


def _bucket(cluster: str, e: Event, buckets: int) -> int:
    if e.event_type in ET.CLUSTER_EVENTS or e.topic is None:
        return CLUSTER_BUCKET
    return bucket_of(cluster, e.topic, buckets)


def timeline_difference(ref: ClusterTimeline, other: ClusterTimeline) -> int | None:
    """The seq of the first cluster step where two timelines differ (-1 when they start
    from different states; None when they are the same)."""
    if ref.initial != other.initial:
        return -1
    for a, b in zip(ref.steps, other.steps, strict=False):
        if a != b:
            return min(a.seq, b.seq)
    longer = ref.steps[len(other.steps):] or other.steps[len(ref.steps):]
    return longer[0].seq if longer else None


def _config_difference(ref: VariantInput, v: VariantInput) -> frozenset[int] | None:
    """None when the configs differ beyond `held_dead` (no sharing); else the brokers held
    dead by one of the two only (an ISR change naming one is read differently)."""
    if dataclasses.replace(ref.config, held_dead=()) != dataclasses.replace(v.config,
                                                                          held_dead=()):
        return None
    return frozenset(ref.config.held_dead) ^ frozenset(v.config.held_dead)


def _renumbering_only(rows: Rows, ref: VariantInput, v: VariantInput,
                      held: frozenset[int], cut: int | None) -> int | None:
    """`divergence` of two variants whose log rows differ only by their renumbering: the
    rows up to the first point where their injections differ are the same in both."""
    ours, theirs = Counter(ref.points), Counter(v.points)
    differs = sorted({*(ours - theirs), *(theirs - ours)})  # several may follow one seq
    if differs:
        cut = _min(cut, differs[0] + 1)
    if not held:
        return cut
    for row in rows():
        if cut is not None and row[_SEQ] >= cut:
            break
        if row[_EVENT_TYPE] == ET.ISR_CHANGED and held.intersection(row[_ISR] or ()):
            e = ref.edit(row)
            if e is not None and _reads_held(ref.timeline, e, held):
                return _min(cut, e.seq)
    return cut


def _reads_held(timeline: ClusterTimeline, e: Event, held: frozenset[int]) -> bool:
    """Whether `e` is an ISR change naming a broker held dead by one variant only while
    that broker is dead (`statemachine.flows`: only then does holding it dead change how
    the change is read). Below the variant's cut both share this timeline."""
    if e.event_type != ET.ISR_CHANGED or not held.intersection(e.isr or ()):
        return False
    state = timeline.state_at(e.seq)
    return any(b in held and b not in state.live and b not in state.shutting_down
               for b in e.isr or ())


def _min(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def divergence(rows: Rows, ref: VariantInput, v: VariantInput, ref_injected: list[Event],
               v_injected: list[Event]) -> int | None:
    """The first seq where `v`'s fold of this group can differ from `ref`'s: below it both
    fold the same events on the same cluster with the same rules. None: never."""
    held = _config_difference(ref, v)
    if held is None:
        return -1
    cut = v.timeline_differs
    ours, theirs = set(ref_injected), set(v_injected)
    cut = _min(cut, min((e.seq for e in ours ^ theirs), default=None))
    if not (ref.drops or v.drops or ref.failovers or v.failovers):
        return _renumbering_only(rows, ref, v, held, cut)
    for row in rows():
        if cut is not None and row[_SEQ] >= cut:
            break  # every later row has a later seq, in both numberings
        a, b = ref.edit(row), v.edit(row)
        if a != b:
            return _min(cut, min(e.seq for e in (a, b) if e is not None))
        if held and a is not None and _reads_held(ref.timeline, a, held):
            return _min(cut, a.seq)
    return cut


@dataclass
class Forked:
    """One variant's fold of the group: its state and the rows it folded itself (the
    reference's rows it shares are the reference's: `jobs.whatif.differences`)."""

    state: BucketState
    out: Outputs
    shared: int = 0  # events it took from the reference's fold instead of folding them
    whole: bool = False  # it took the whole group: nothing of it was folded again
    # The seq from which it folded itself, the reference's rows below it being its own
    # too (None: it took the whole group, or shares nothing, or is the reference).
    before: int | None = None
    # The reference's per-event rows it takes, per core output list, and their findings
    # by kind (its counts are those of its whole rows).
    shared_rows: Counter[str] = field(default_factory=Counter)
    shared_kinds: Counter[str] = field(default_factory=Counter)


class _Tally:
    """The per-event rows the reference's fold has emitted so far, per output list, and
    its findings by kind."""

    def __init__(self) -> None:
        self.rows: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()

    def add(self, out: Outputs) -> None:
        for name in EVENT_KEYS:
            self.rows[name] += len(getattr(out, name))
        self.kinds.update(f.kind for f in out.findings)

    def with_pending(self, out: Outputs) -> tuple[Counter[str], Counter[str]]:
        """The counts once `out` (rows not yet emitted) is added too."""
        pending = _Tally()
        pending.add(out)
        return self.rows + pending.rows, self.kinds + pending.kinds


def fold_shared(rows: Rows, variants: list[VariantInput], bucket: int, buckets: int,
                emit: Emit) -> dict[str, Forked]:
    """Fold the group for every variant, the first being the reference. The reference's
    per-event rows go to `emit` as they come, once (they are the rows of every variant
    still sharing its fold); a variant that leaves it at a cut folds on from there, its own
    rows to `emit` too; the state tables and the rest are in each `Forked.out`."""
    ref, others = variants[0], variants[1:]
    injected = {v.composite: v.injected_in(bucket, buckets) for v in variants}
    cuts = {v.composite: divergence(rows, ref, v, injected[ref.composite],
                                    injected[v.composite]) for v in others}
    leaving = sorted({c for c in cuts.values() if c is not None and c >= 0})
    emitted = _Tally()

    def to_reference(out: Outputs) -> None:
        emitted.add(out)
        emit([ref.composite], out)

    fold = Fold(None, ref.timeline, ref.config, flush=to_reference, flush_rows=FLUSH_ROWS,
                until=ref.horizon)
    # cut -> (state, events applied, rows and finding kinds emitted before it)
    starts: dict[int, tuple[BucketState, int, Counter[str], Counter[str]]] = {}

    def leave(cut: int) -> None:
        """The variants cut here go on from the state at the cut; the rows not yet
        emitted are the reference's (emitted with its next flush) and theirs too."""
        starts[cut] = (fold.cut(cut), fold.out.applied, *emitted.with_pending(fold.out))

    _feed_with_cuts(fold, ref.events(rows(), injected[ref.composite]), leaving, leave)
    state, out = fold.finish()
    total_rows, total_kinds = emitted.with_pending(out)
    forked = {ref.composite: Forked(state, out)}
    for v in others:
        cut = cuts[v.composite]
        if cut is None:  # its input never differs: the reference's group is its own
            forked[v.composite] = Forked(state, Outputs(applied=out.applied), out.applied,
                                         whole=True, shared_rows=total_rows,
                                         shared_kinds=total_kinds)
            continue
        start, applied, shared_rows, kinds = starts[cut] if cut >= 0 \
            else (None, 0, Counter(), Counter())
        f = fold_from(v, start, applied, rows, injected[v.composite], cut, emit)
        if cut >= 0:
            f.before, f.shared_rows, f.shared_kinds = cut, shared_rows, kinds
        forked[v.composite] = f
    return forked


def _feed_with_cuts(fold: Fold, events: Iterator[Event], cuts: list[int],
                    leave: Callable[[int], None]) -> None:
    """Feed `events` in pieces, calling `leave(cut)` before the first event at or after
    each cut (and after the last event for the cuts beyond it)."""
    pending = iter(cuts)
    cut = next(pending, None)
    piece: list[Event] = []
    for e in events:
        while cut is not None and e.seq >= cut:
            fold.feed(piece)
            piece = []
            leave(cut)
            cut = next(pending, None)
        piece.append(e)
        if len(piece) >= FEED_ROWS:
            fold.feed(piece)
            piece = []
    fold.feed(piece)
    while cut is not None:
        leave(cut)
        cut = next(pending, None)


def fold_from(v: VariantInput, start: BucketState | None, applied: int, rows: Rows,
               injected: list[Event], cut: int, emit: Emit) -> Forked:
    fold = Fold(start, v.timeline, v.config, flush=lambda out: emit([v.composite], out),
                flush_rows=FLUSH_ROWS, until=v.horizon, every_row=cut >= 0)
    piece: list[Event] = []
    for e in v.events(rows(), injected, cut):
        piece.append(e)
        if len(piece) >= FEED_ROWS:
            fold.feed(piece)
            piece = []
    fold.feed(piece)
    state, out = fold.finish()
    out.applied += applied
    return Forked(state, out, applied)
