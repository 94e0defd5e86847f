"""What each step of a plan does to each partition, and advice checked by running again.

A partition is reported at the step that takes it offline (no leader: OfflinePartition in
ZooKeeper mode, leader -1 in KRaft) or under min ISR (fewer in-sync replicas than its
`min.insync.replicas` at that step: producers with acks=all are refused), once per
change: a partition under min ISR from step 2 that goes offline at step 3 has two rows.
Partitions already offline or under min ISR before step 1 are counted apart.

The advice is never guessed: each candidate is a changed plan run through the core again,
and is given only when the partition stays online (and at or above min ISR, for that
kind) through every step of it:

* reorder: move a later step before the step that hurts (a restart, a reassignment), or
  the step that hurts after a later one; among those that save the partition, the one
  whose plan takes the fewest partitions offline in all;
* reassign first: before step 1, move one replica of the partition from a broker the plan
  takes down to a broker the plan keeps alive (another rack first, where racks are known).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from jobs.whatif.plan_check.plan_file import (
    CONFIG,
    FAIL,
    REASSIGN,
    SHUTDOWN,
    Plan,
    Settings,
    Step,
)
from jobs.whatif.plan_check.state import StartState
from jobs.whatif.plan_check.status import PartStatus, Snapshot

OFFLINE, UNDER_MIN_ISR = "offline", "under_min_isr"
REORDER, REASSIGN_FIRST = "reorder", "reassign_first"
MAX_REORDERS = 40  # changed plans tried for reordering advice
MAX_REASSIGN_ADVICE = 25  # partitions given a replica-move advice (each costs a few runs)

Key = tuple[str, int]
Runner = Callable[[StartState, Settings, Sequence[Step]], list[Snapshot]]


@dataclass(frozen=True)
class Finding:
    step: Step
    topic: str
    partition: int
    kind: str  # OFFLINE or UNDER_MIN_ISR
    before: PartStatus
    after: PartStatus
    min_isr: int
    advice: str | None = None
    advice_kind: str | None = None
    searched: bool = True  # False: past MAX_REASSIGN_ADVICE, no replica move was tried


@dataclass(frozen=True)
class PlanCheck:
    state: StartState
    plan: Plan
    findings: tuple[Finding, ...]  # ranked
    offline_before: tuple[Key, ...]
    under_min_isr_before: tuple[Key, ...]
    plans_run: int

    @property
    def takes_offline(self) -> bool:
        return any(f.kind == OFFLINE for f in self.findings)


def min_isr_by_step(plan: Plan, steps: Sequence[Step]) -> list[Callable[[str], int]]:
    """Per step (0: before step 1), the topic -> min.insync.replicas in effect."""
    default = plan.settings.min_insync_replicas
    topics = dict(plan.settings.topic_min_insync_replicas)
    out: list[Callable[[str], int]] = []
    for s in (None, *steps):
        if s is not None and s.action == CONFIG and s.min_insync_replicas is not None:
            if s.topic:
                topics[s.topic] = s.min_insync_replicas
            else:
                default = s.min_insync_replicas
        out.append(_lookup(dict(topics), default))
    return out


def _lookup(topics: dict[str, int], default: int) -> Callable[[str], int]:
    def of(topic: str) -> int:
        return topics.get(topic, default)
    return of


def _bad(status: PartStatus, min_isr: int) -> tuple[bool, bool]:
    """(offline, under min ISR but online)."""
    return status.offline, not status.offline and len(status.isr) < min_isr


def findings_of(plan: Plan, steps: Sequence[Step], snapshots: list[Snapshot]) -> list[Finding]:
    min_isr = min_isr_by_step(plan, steps)
    out = []
    for i, s in enumerate(steps, start=1):
        before, after = snapshots[i - 1], snapshots[i]
        for key in sorted(after):
            now, was = after[key], before.get(key, after[key])
            m = min_isr[i](key[0])
            off, under = _bad(now, m)
            was_off, was_under = _bad(was, min_isr[i - 1](key[0]))
            if off and not was_off:
                out.append(Finding(s, key[0], key[1], OFFLINE, was, now, m))
            elif under and not was_under and not was_off:
                out.append(Finding(s, key[0], key[1], UNDER_MIN_ISR, was, now, m))
    return out


def _ever(plan: Plan, steps: Sequence[Step],
          snapshots: list[Snapshot]) -> tuple[set[Key], set[Key]]:
    """The partitions a plan takes offline, and under min ISR, at some step."""
    offline: set[Key] = set()
    under: set[Key] = set()
    for f in findings_of(plan, steps, snapshots):
        (offline if f.kind == OFFLINE else under).add((f.topic, f.partition))
    return offline, under


def _moves(steps: Sequence[Step], hurting: set[int]) -> list[tuple[str, tuple[int, ...]]]:
    """Reorderings (description, new order of step indices from 0) around the steps that
    hurt: a later step moved just before one, or one moved just after a later step."""
    n = len(steps)
    seen: set[tuple[int, ...]] = set()
    out = []
    for k in sorted(hurting):
        for j in range(k + 1, n):
            order = [x for x in range(n) if x != j]
            order.insert(order.index(k), j)
            moves = [(f"move step {j + 1} ({steps[j].describe()}) before step {k + 1} "
                      f"({steps[k].describe()})", tuple(order))]
            order = [x for x in range(n) if x != k]
            order.insert(order.index(j) + 1, k)
            moves.append((f"move step {k + 1} ({steps[k].describe()}) after step {j + 1} "
                          f"({steps[j].describe()})", tuple(order)))
            for desc, o in moves:
                if o not in seen:
                    seen.add(o)
                    out.append((desc, o))
    return out[:MAX_REORDERS]


@dataclass
class _Advisor:
    state: StartState
    plan: Plan
    run: Runner
    base_offline: int
    runs: int = 0

    def outcome(self, steps: Sequence[Step],
                state: StartState | None = None) -> tuple[set[Key], set[Key]]:
        self.runs += 1
        state = state or self.state
        return _ever(self.plan, steps, self.run(state, self.plan.settings, steps))

    def reorders(self, hurting: set[int]) -> list[tuple[str, set[Key], set[Key]]]:
        steps = self.plan.steps
        out = []
        for desc, order in _moves(steps, hurting):
            offline, under = self.outcome([steps[x] for x in order])
            out.append((desc, offline, under))
        return out

    def reassign_first(self, f: Finding) -> str | None:
        steps = self.plan.steps
        down_at: dict[int, int] = {}
        for s in steps[: f.step.number]:
            if s.action in (FAIL, SHUTDOWN):
                for b in s.brokers:
                    down_at.setdefault(b, s.number)
        # The assignment before step 1, where the move goes (a planned reassignment may
        # have changed it by the finding's step).
        assigned = next(p.replicas for p in self.state.partitions
                        if (p.topic, p.partition) == (f.topic, f.partition))
        taken = sorted((r for r in assigned if r in down_at), key=lambda r: (down_at[r], r))
        kept = sorted(self.state.live - {b for s in steps if s.action in (FAIL, SHUTDOWN)
                                         for b in s.brokers} - set(assigned))
        racks = self.plan.racks
        # The core replays whole topics independently (`statemachine.replay`): the
        # partition's own topic is all a replica move of it can change.
        own = replace(self.state, partitions=tuple(
            p for p in self.state.partitions if p.topic == f.topic))
        for r in taken[:2]:
            others = {racks.get(o) for o in assigned if o != r}
            for b in sorted(kept, key=lambda b: (racks.get(b) in others, b))[:2]:
                replicas = tuple(b if x == r else x for x in assigned)
                first = Step(0, "advice", REASSIGN, topic=f.topic, partition=f.partition,
                             replicas=replicas)
                offline, under = self.outcome([first, *steps], own)
                key = (f.topic, f.partition)
                if key not in offline and (f.kind == OFFLINE or key not in under):
                    where = f" (rack {racks[b]})" if b in racks else ""
                    return (f"before step 1, reassign {f.topic}-{f.partition} to "
                            f"{list(replicas)}: replica {r} moves to broker {b}{where}, "
                            "which the plan keeps alive")
        return None


def _advise(findings: list[Finding], advisor: _Advisor, reassign: bool) -> list[Finding]:
    hurting = {f.step.number - 1 for f in findings}
    tried = advisor.reorders(hurting)
    out = []
    reassigned = 0
    for f in findings:
        key = (f.topic, f.partition)
        saving = [(len(off), desc) for desc, off, under in tried
                  if key not in off and (f.kind == OFFLINE or key not in under)]
        if saving:
            count, desc = min(saving)
            out.append(replace(f, advice=f"{desc}: keeps {f.topic}-{f.partition} "
                               f"{'online' if f.kind == OFFLINE else 'at min ISR'}; that plan "
                               f"takes {count} partition(s) offline (the plan as given: "
                               f"{advisor.base_offline})", advice_kind=REORDER))
            continue
        advice = None
        searched = not reassign or reassigned < MAX_REASSIGN_ADVICE
        if reassign and searched:
            reassigned += 1
            advice = advisor.reassign_first(f)
        out.append(replace(f, advice=advice, advice_kind=REASSIGN_FIRST if advice else None,
                           searched=searched))
    return out


def rank(findings: list[Finding]) -> list[Finding]:
    """Offline before under min ISR; then the step taking most partitions offline first;
    then step order, topic and partition."""
    offline_by_step: dict[int, int] = {}
    for f in findings:
        if f.kind == OFFLINE:
            offline_by_step[f.step.number] = offline_by_step.get(f.step.number, 0) + 1
    return sorted(findings, key=lambda f: (f.kind != OFFLINE,
                                           -offline_by_step.get(f.step.number, 0),
                                           f.step.number, f.topic, f.partition))


def check_plan(state: StartState, plan: Plan, run: Runner,
               reassign_advice: bool = True) -> PlanCheck:
    """The plan run through `run`; `reassign_advice` False to search no replica move."""
    snapshots = run(state, plan.settings, plan.steps)
    found = findings_of(plan, plan.steps, snapshots)
    min_isr = min_isr_by_step(plan, plan.steps)[0]
    start = snapshots[0]
    offline_before = tuple(k for k in sorted(start) if start[k].offline)
    under_before = tuple(k for k in sorted(start)
                         if not start[k].offline and len(start[k].isr) < min_isr(k[0]))
    base_offline = len({(f.topic, f.partition) for f in found if f.kind == OFFLINE})
    advisor = _Advisor(state, plan, run, base_offline, runs=1)
    # In rank order: the replica-move searches, capped, go to the worst partitions first.
    advised = _advise(rank(found), advisor, reassign_advice) if found else []
    return PlanCheck(state, plan, tuple(advised), offline_before, under_before,
                     advisor.runs)
