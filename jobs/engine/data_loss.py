"""What one unclean leader election lost, from the brokers' offset lines. Pure Python.

Kafka's rules (KIP-101, KIP-279; `AbstractFetcherThread.truncateToEpochEndOffsets`,
`Log.truncateTo`): a replica that becomes a follower of a new leader truncates its log to
the offset where its history and the leader's part, at most the leader's end offset for the
replica's last epoch, which for a leader elected from outside the ISR is the leader's log
end offset when it was elected (the new epoch's start offset). Every offset a replica held
at or past its truncation point is gone: it was on no replica that stays. So:

* **exact** (`messages_lost`): the old leader logged its truncation to T and its log end
  offset L before it (a follower-start line, a log load after the election, the fetcher's
  own reset line, or a truncation that "has no effect": nothing removed). The loss is the
  offsets [T, L) of every returning replica that logged both, together (a union: they held
  the same history up to the election).
* **bounded** (`messages_lost_at_least`, `messages_lost_at_most`), without the truncation:
  at least L - S, the old leader's end offset (its last known one before the election, or
  the one it came back with) past the new leader's start offset S; at most L - H, with L
  the end offset it came back with and H the new leader's high watermark when elected
  (offsets below it were on both: the follower never truncates below them). Also at least
  what a returning replica's exact range proves.
* **unknown**: no offset line says anything of the partition. Never 0: 0 is a figure a
  line proved (a truncation that removed nothing).

Offsets count records (a transaction's markers take offsets too); a compacted log's
offsets have gaps, so for a compacted topic the figure is an upper bound of the records.

The election is matched to its lines by the leader epoch the replay knows it started
(`partition_state_writes` / `metadata_writes`): the new leader's start line and the
returning followers' lines carry that epoch or a later one; lines without an epoch are
placed by time (the election's `ts`). The old leader is the partition's last leader before
the election in the same history, else the broker whose leader-start line precedes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from jobs.ingest.logparse.offsets.rows import EvidenceRow

EXACT, BOUNDED, UNKNOWN = "exact", "bounded", "unknown"
NO_CHANGE = -2  # a PartitionChangeRecord's leader that does not change it
# The kinds that state a broker's log end offset, before or after the election.
END_OFFSET_KINDS = frozenset({"isr_shrink", "leader_start", "log_loaded", "follower_start",
                              "truncate_no_effect", "epoch_assigned"})
TRUNCATION_KINDS = frozenset({"truncate", "truncate_no_effect"})
UNCLEAN_KINDS = frozenset({"unclean_change", "unclean_leader_set", "unclean_trigger",
                           "leader_recovering"})


class Election(NamedTuple):
    """An `unclean_leader_election` finding."""

    seq: int
    ts: int  # epoch microseconds
    topic: str
    partition: int
    broker_id: int | None  # ZooKeeper mode: the new leader
    detail: str | None = None


class Write(NamedTuple):
    """One write of the partition's leadership (`partition_state_writes`,
    `metadata_writes`): None (and a leader of -2) leave a field as it was."""

    seq: int
    ts: int
    leader: int | None
    leader_epoch: int | None
    isr: tuple[int, ...] | None


class Window(NamedTuple):
    kind: str
    start_seq: int
    end_seq: int | None
    incident_id: int | None


class Truncation(NamedTuple):
    broker_id: int
    truncated_to: int | None
    log_end_offset: int | None
    messages_lost: int | None  # exact for this replica, when both are known


class Proof(NamedTuple):
    role: str
    broker_id: int | None
    source: str
    text: str


class DataLossRow(NamedTuple):
    """A `data_loss` row (`schemas.tables.DATA_LOSS` after cluster, run_id)."""

    seq: int
    ts: int
    topic: str
    partition: int
    incident_id: int | None
    new_leader: int | None
    leader_epoch: int | None
    new_leader_end_offset: int | None
    new_leader_high_watermark: int | None
    old_leader: int | None
    old_isr: tuple[int, ...] | None
    old_leader_high_watermark: int | None
    old_leader_end_offset: int | None
    old_leader_final_end_offset: int | None
    truncations: tuple[Truncation, ...]
    result: str
    messages_lost: int | None
    messages_lost_at_least: int | None
    messages_lost_at_most: int | None
    evidence: tuple[Proof, ...]
    detail: str


class Leadership(NamedTuple):
    """What the history says of the election; `since` / `until`: the times of the write
    before it and of the next write of another leader (the election's own lines lie
    between: a controller may log before the record's time)."""

    new_leader: int | None
    leader_epoch: int | None
    old_leader: int | None
    old_isr: tuple[int, ...] | None
    since: int | None = None
    until: int | None = None


def _unclean_write(before: tuple[int, tuple[int, ...]], w: Write) -> bool:
    leader, isr = before
    return (w.leader is not None and w.leader >= 0 and w.leader != leader
            and w.leader not in isr)


def leadership(e: Election, writes: Sequence[Write]) -> Leadership:
    """The election's write (the unclean one nearest its seq) and the state before it."""
    states: list[tuple[Write, int, tuple[int, ...], int | None]] = []
    leader, last_leader = -1, None
    isr: tuple[int, ...] = ()
    for w in sorted(writes, key=lambda x: x.seq):
        states.append((w, leader, isr, last_leader))
        if w.leader is not None and w.leader != NO_CHANGE:
            leader = w.leader
            if leader >= 0:
                last_leader = leader
        if w.isr is not None:
            isr = w.isr
    unclean = [s for s in states if _unclean_write((s[1], s[2]), s[0])]
    if not unclean:
        return Leadership(e.broker_id, None, None, None)
    w, _, isr_before, old = min(unclean, key=lambda s: (abs(s[0].seq - e.seq), s[0].seq))
    earlier = [s[0].ts for s in states if s[0].seq < w.seq]
    later = [s[0].ts for s in states if s[0].seq > w.seq and s[0].leader is not None
             and s[0].leader not in (NO_CHANGE, w.leader)]
    return Leadership(w.leader, w.leader_epoch, old, isr_before or None,
                      max(earlier) if earlier else None, min(later) if later else None)


def election_lines(rows: Sequence[EvidenceRow], e: Election, who: Leadership
                   ) -> list[EvidenceRow]:
    """The unclean lines of the election: the controller's and the new leader's between
    the write before it and the next leader's (without a history: from its time on)."""
    since = who.since if who.since is not None else e.ts
    return sorted((r for r in rows if r.kind in UNCLEAN_KINDS and r.ts >= since
                   and (who.until is None or r.ts < who.until)),
                  key=lambda r: (r.ts, r.file, r.line))


# The kinds whose epoch is the broker's current one (a fetcher's truncation line names the
# epoch it asked the leader about: the follower's last one, older than the election's).
EPOCH_KINDS = frozenset({"leader_start", "follower_start", "unclean_change"})


def _after(r: EvidenceRow, e: Election, epoch: int | None) -> bool:
    """A line of the new epoch: by its epoch when it states the broker's current one and
    the election's is known, else by its time."""
    if epoch is not None and r.leader_epoch is not None and r.kind in EPOCH_KINDS:
        return r.leader_epoch >= epoch
    return r.ts >= e.ts


def _of(rows: Iterable[EvidenceRow], broker: int | None, kinds: frozenset[str]
        ) -> list[EvidenceRow]:
    return sorted((r for r in rows if r.broker_id == broker and r.kind in kinds),
                  key=lambda r: (r.ts, r.file, r.line))


class Side(NamedTuple):
    """A broker's figures and the lines that state them."""

    end_offset: int | None
    high_watermark: int | None
    proof: tuple[EvidenceRow, ...]


def new_leader_start(rows: Sequence[EvidenceRow], e: Election, who: Leadership) -> Side:
    """The new leader's end offset (its epoch's start offset) and high watermark when
    elected: its leader-start line of the new epoch, else the epoch cache's entry."""
    starts = [r for r in _of(rows, who.new_leader, frozenset({"leader_start"}))
              if (r.leader_epoch == who.leader_epoch if who.leader_epoch is not None
                  else r.ts >= e.ts)]
    if starts:
        r = starts[0]
        return Side(r.offset, r.high_watermark, (r,))
    cache = [r for r in _of(rows, who.new_leader, frozenset({"epoch_assigned"}))
             if who.leader_epoch is not None and r.leader_epoch == who.leader_epoch]
    return Side(cache[0].offset, None, (cache[0],)) if cache else Side(None, None, ())


def before_election(rows: Sequence[EvidenceRow], e: Election, broker: int | None,
                    epoch: int | None) -> Side:
    """A broker's last known end offset and high watermark before the election."""
    found = [r for r in _of(rows, broker, END_OFFSET_KINDS) if not _after(r, e, epoch)]
    ends = [r for r in found if _end_offset(r) is not None]
    hws = [r for r in found if r.high_watermark is not None]
    proof = tuple(dict.fromkeys(x for x in (ends[-1:] + hws[-1:])))
    return Side(_end_offset(ends[-1]) if ends else None,
                hws[-1].high_watermark if hws else None, proof)


def _end_offset(r: EvidenceRow) -> int | None:
    if r.kind in ("leader_start", "epoch_assigned"):
        return r.offset  # the log end offset when the epoch started (a lower bound after)
    return r.log_end_offset


class Returned(NamedTuple):
    """A returning replica: its end offset back from the election and its truncation."""

    broker_id: int
    end_offset: int | None
    truncated_to: int | None
    proof: tuple[EvidenceRow, ...]

    def truncation(self) -> Truncation:
        lost = None
        if self.end_offset is not None and self.truncated_to is not None:
            lost = max(self.end_offset - self.truncated_to, 0)
        return Truncation(self.broker_id, self.truncated_to, self.end_offset, lost)


def returned(rows: Sequence[EvidenceRow], e: Election, broker: int, epoch: int | None
             ) -> Returned | None:
    """The broker's first follower episode after the election: the end offset it came
    back with (follower start, else a log load, else the reset or no-effect line) and the
    lowest offset it truncated to before its next leader or follower start."""
    after = [r for r in _of(rows, broker, END_OFFSET_KINDS | TRUNCATION_KINDS)
             if _after(r, e, epoch) and r.kind not in ("isr_shrink", "epoch_assigned")]
    starts = [r for r in after if r.kind in ("follower_start", "leader_start")]
    if starts and starts[0].kind == "leader_start":
        return None  # it led again first: not a returning follower of this election
    first = starts[0] if starts else None
    # The episode ends at the broker's next start; before 2.6 (no follower line) at its
    # next restart (a second log load after the election).
    ends = starts[1:] if starts else [r for r in after if r.kind == "log_loaded"][1:]
    stop = ends[0].ts if ends else None
    episode = [r for r in after if (stop is None or r.ts < stop) and r.kind != "leader_start"]
    loads = [r for r in episode if r.kind in ("log_loaded", "truncate_no_effect")
             or (r.kind == "truncate" and r.log_end_offset is not None)]
    cut = [r for r in episode if r.kind == "truncate"]
    none_cut = [r for r in episode if r.kind == "truncate_no_effect"]
    end = first.log_end_offset if first is not None else (
        loads[0].log_end_offset if loads else None)
    to = min(r.offset for r in cut if r.offset is not None) if cut else None
    if to is None and none_cut and end is not None:
        to = end  # a truncation that removed nothing
    if end is None and to is None:
        return None
    used = [first] if first is not None else []
    used += [r for r in episode if r in cut or r in none_cut or (first is None and r in loads
                                                                  and r is loads[0])]
    return Returned(broker, end, to, tuple(dict.fromkeys(used)))


def _union(ranges: Iterable[tuple[int, int]]) -> int:
    total, reach = 0, None
    for lo, hi in sorted(r for r in ranges if r[1] > r[0]):
        if reach is None or lo >= reach:
            total += hi - lo
            reach = hi
        elif hi > reach:
            total += hi - reach
            reach = hi
    return total


def incident_of(e: Election, windows: Iterable[Window]) -> int | None:
    """The incident whose offline window of the partition the election closed."""
    for w in windows:
        if (w.kind == "offline" and w.start_seq <= e.seq
                and (w.end_seq is None or e.seq <= w.end_seq)):
            return w.incident_id if w.incident_id is not None else w.start_seq
    return None


def _proofs(role: str, rows: Iterable[EvidenceRow]) -> list[Proof]:
    return [Proof(role, r.broker_id, r.source, r.text) for r in rows]


class Figures(NamedTuple):
    result: str
    exact: int | None
    at_least: int | None
    at_most: int | None


def figures(old: Leadership, start: Side, before: Side, back: dict[int, Returned]
            ) -> Figures:
    """The result from the sides (module docstring)."""
    exact = {b: r for b, r in back.items()
             if r.end_offset is not None and r.truncated_to is not None}
    ranges = [(r.truncated_to or 0, r.end_offset or 0) for r in exact.values()]
    if old.old_leader is not None and old.old_leader in exact:
        return Figures(EXACT, _union(ranges), None, None)
    lows: list[int] = [_union(ranges)] if exact else []
    mine = back.get(old.old_leader) if old.old_leader is not None else None
    final = mine.end_offset if mine is not None else None
    known = final if final is not None else before.end_offset
    if known is not None and start.end_offset is not None:
        lows.append(known - start.end_offset)
    if mine is not None and mine.truncated_to is not None and before.end_offset is not None:
        lows.append(before.end_offset - mine.truncated_to)
    high = None
    if final is not None and start.high_watermark is not None:
        high = max(final - start.high_watermark, 0)
    low = max(max(lows), 0) if lows else None
    if low is None and high is None:
        return Figures(UNKNOWN, None, None, None)
    return Figures(BOUNDED, None, low, high)


def compute(e: Election, writes: Sequence[Write], rows: Sequence[EvidenceRow],
            windows: Iterable[Window] = ()) -> DataLossRow:
    """The `data_loss` row of one election; `rows` are its partition's offset lines."""
    who = leadership(e, writes)
    if who.old_leader is None:
        who = who._replace(old_leader=_old_leader_from_lines(rows, e, who))
    unclean = election_lines(rows, e, who)
    if who.old_isr is None:
        changes = [r for r in unclean if r.kind == "unclean_change" and r.previous_isr]
        who = who._replace(old_isr=changes[0].previous_isr if changes else None)
    start = new_leader_start(rows, e, who)
    before = before_election(rows, e, who.old_leader, who.leader_epoch)
    candidates = set(who.old_isr or ())
    if who.old_leader is not None:
        candidates.add(who.old_leader)
    candidates |= {r.broker_id for r in rows if r.broker_id is not None
                   and r.kind in ("follower_start", "truncate") and _after(r, e, who.leader_epoch)}
    back: dict[int, Returned] = {}
    for b in sorted(x for x in candidates if x != who.new_leader):
        found = returned(rows, e, b, who.leader_epoch)
        if found is not None:
            back[b] = found
    f = figures(who, start, before, back)
    proof = (_proofs("election", unclean) + _proofs("new_leader_start", start.proof)
             + _proofs("old_leader_before", before.proof))
    for b in sorted(back):
        proof += _proofs("returning_replica", back[b].proof)
    mine = back.get(who.old_leader) if who.old_leader is not None else None
    final = mine.end_offset if mine is not None else None
    return DataLossRow(
        e.seq, e.ts, e.topic, e.partition, incident_of(e, windows), who.new_leader,
        who.leader_epoch, start.end_offset, start.high_watermark, who.old_leader,
        who.old_isr, before.high_watermark, before.end_offset, final,
        tuple(back[b].truncation() for b in sorted(back)), f.result, f.exact, f.at_least,
        f.at_most, tuple(dict.fromkeys(proof)), describe(e, who, start, before, back, f,
                                                        bool(rows)))


def _old_leader_from_lines(rows: Sequence[EvidenceRow], e: Election, who: Leadership
                           ) -> int | None:
    """Without a history: the broker whose leader-start line last preceded the election."""
    starts = [r for r in rows if r.kind == "leader_start" and r.broker_id is not None
              and r.broker_id != who.new_leader and not _after(r, e, who.leader_epoch)]
    return max(starts, key=lambda r: (r.ts, r.file, r.line)).broker_id if starts else None


def describe(e: Election, who: Leadership, start: Side, before: Side,
             back: dict[int, Returned], f: Figures, any_lines: bool) -> str:
    """The figure and how it was reached, in one sentence."""
    tp = f"{e.topic}-{e.partition}"
    elected = (f"broker {who.new_leader} elected" if who.new_leader is not None
               else "an unclean election")
    if who.leader_epoch is not None:
        elected += f" at leader epoch {who.leader_epoch}"
    if start.end_offset is not None:
        elected += f" with log end offset {start.end_offset}"
        if start.high_watermark is not None:
            elected += f" and high watermark {start.high_watermark}"
    old = f"old leader broker {who.old_leader}" if who.old_leader is not None else (
        "old leader unknown")
    if f.result == UNKNOWN:
        why = ("no offset line of this partition in the broker logs given" if not any_lines
               else "its offset lines state neither the new leader's start offset nor the "
                    "old leader's end offset")
        return f"unknown for {tp}: {why} ({elected}; {old})"
    cuts = "; ".join(
        f"broker {b} truncated to {r.truncated_to} from log end offset {r.end_offset}"
        if r.truncated_to is not None and r.end_offset is not None
        else f"broker {b} came back with log end offset {r.end_offset}, no truncation line"
        if r.truncated_to is None else f"broker {b} truncated to {r.truncated_to}"
        for b, r in sorted(back.items()))
    if f.result == EXACT:
        return (f"{f.exact} messages lost on {tp}: {cuts} ({elected}; {old})")
    last = ""
    if before.end_offset is not None:
        last = f"; last known before: log end offset {before.end_offset}"
        if before.high_watermark is not None:
            last += f", high watermark {before.high_watermark}"
    bounds = " and ".join(x for x in (
        f"at least {f.at_least}" if f.at_least is not None else "",
        f"at most {f.at_most}" if f.at_most is not None else "") if x)
    return (f"{bounds} messages lost on {tp}, no truncation line of the old leader "
            f"({elected}; {old}{last}{'; ' + cuts if cuts else ''})")
