"""A scenario resolved against the log: per variant, its drops, its injected events with
their seqs, its seq renumbering and its `ReplayConfig`. Pure Python, before Spark starts.

Seq renumbering: a variant's seq is its own event order. The injections of one cluster of a
variant are sorted by the seq they follow (`after_seq`, or for `at` the highest seq of an
event at or before that time, -1 when none is; ties in scenario order); the k-th of them
(from 0) after seq `p` gets seq `p + 1 + k`, and an event of the log with seq `s` gets
`s + (injections after a seq below s)`. Drops match the log's own seqs.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow.compute as pc

from jobs.engine.keying import TOPIC_MAX_LENGTH
from jobs.whatif.consistency import consistency
from jobs.whatif.facts import ClusterFacts, LogFacts
from jobs.whatif.matching import EditCounts, drop_rows, partitions_of
from jobs.whatif.scenario import (
    Drop,
    Injection,
    Scenario,
    ScenarioError,
    VariantSpec,
)
from jobs.whatif.sweeps import sweep_variants
from schemas import event_types as ET
from schemas.whatif import BASELINE, VARIANT_SEPARATOR
from statemachine.cluster import TIMELINE_EVENTS
from statemachine.context import ReplayConfig
from statemachine.events import Event

LIST_FIELDS = ("replicas", "isr", "brokers")


@dataclass(frozen=True)
class VariantPlan:
    """One variant as the job runs it."""

    name: str
    # The scenario's drops, then those that keep its failures consistent (with a cluster)
    drops: tuple[Drop, ...]
    config: ReplayConfig
    # cluster -> the injected events (ts in microseconds), in seq order, renumbered
    injected: dict[str, list[Event]] = field(default_factory=dict)
    # cluster -> the sorted seqs of the log the injections follow (the renumbering)
    points: dict[str, list[int]] = field(default_factory=dict)
    # cluster -> log seq -> the log's ControllerFailover as the variant has it
    failovers: dict[str, dict[int, Event]] = field(default_factory=dict)
    # cluster -> the brokers the variant fails and holds dead against the log
    held_dead: dict[str, tuple[int, ...]] = field(default_factory=dict)
    counts: dict[str, EditCounts] = field(default_factory=dict)  # cluster -> its edits
    no_edit: bool = False  # no drop, no injection, the replay's own config

    def composite(self, cluster: str) -> str:
        return composite(cluster, self.name)

    def config_for(self, cluster: str) -> ReplayConfig:
        """The config of the variant's replay of `cluster` (with the brokers it holds
        dead there, `ReplayConfig.held_dead`)."""
        held = self.held_dead.get(cluster, ())
        return dataclasses.replace(self.config, held_dead=held) if held else self.config

    def renumber(self, cluster: str, seq: int) -> int:
        """The variant's seq of the log's event `seq`."""
        return seq + bisect_left(self.points.get(cluster, []), seq)

    def drops_event(self, cluster: str, e: Event) -> bool:
        return any(drop_matches(d, cluster, e) for d in self.drops)

    def edit_cluster_events(self, cluster: str, events: Iterable[Event]) -> list[Event]:
        """The log's cluster events (and deletion activity) of `cluster` as this variant
        has them: dropped ones out, seqs renumbered, injected ones in."""
        failovers = self.failovers.get(cluster, {})
        kept = [(failovers.get(e.seq, e) if e.event_type == ET.CONTROLLER_FAILOVER else e)
                ._replace(seq=self.renumber(cluster, e.seq))
                for e in events if not self.drops_event(cluster, e)]
        kept += [e for e in self.injected.get(cluster, []) if e.event_type in TIMELINE_EVENTS]
        return kept


def composite(cluster: str, variant: str) -> str:
    """The replay's cluster key of a variant's rows."""
    return f"{cluster}{VARIANT_SEPARATOR}{variant}"


def drop_matches(drop: Drop, cluster: str, e: Event) -> bool:
    """The Python twin of `jobs.whatif.edits._entry_matches` (Spark) and
    `jobs.whatif.matching.drop_rows` (pyarrow): the timelines' cluster events are edited
    on the driver, the stream's rows in Spark, the counts from the log's facts."""
    for name, value in drop.fields:
        if name == "cluster":
            ok = cluster == value
        elif name == "seq_from":
            ok = e.seq is not None and e.seq >= value
        elif name == "seq_to":
            ok = e.seq is not None and e.seq <= value
        elif name == "ts_from":
            ok = e.ts is not None and e.ts >= value
        elif name == "ts_to":
            ok = e.ts is not None and e.ts <= value
        else:
            ok = getattr(e, name) == value
        if not ok:
            return False
    return True


# -- an injected event honours the input contract (the rules of jobs.engine.keying) -------

def _list_problems(name: str, values: tuple[int, ...]) -> list[str]:
    problems = []
    if any(v < 0 for v in values):
        problems.append(f"{name} has a negative broker id")
    if len(set(values)) != len(values):
        problems.append(f"{name} has duplicate broker ids")
    return problems


def _legal_topic(topic: str | None) -> bool:
    """`org.apache.kafka.common.internals.Topic.validate` (None: not judged here)."""
    if topic is None:
        return True
    return topic not in ("", ".", "..") and len(topic) <= TOPIC_MAX_LENGTH and all(
        c.isascii() and (c.isalnum() or c in "._-") for c in topic)


def event_problems(row: dict[str, Any]) -> list[str]:
    """Why an injected event would be quarantined: `jobs.engine.keying.reason_column`'s
    rules (seq and ts are the job's, so always present)."""
    et = row.get("event_type")
    if et not in ET.ALL_EVENTS:
        return [f"unknown event_type {et!r}"]
    problems = [f"missing {f} for {et}" for f in ET.REQUIRED_FIELDS[et] if row.get(f) is None]
    if not _legal_topic(row.get("topic")):
        problems.append(f"illegal topic name {row['topic']!r}")
    for name in LIST_FIELDS:
        if row.get(name) is not None:
            problems += _list_problems(name, row[name])
    if et in (ET.PARTITION_CREATED, ET.REASSIGNMENT_REQUESTED) and row.get("replicas") == ():
        problems.append("empty replicas")
    for name in ("partition", "broker_id"):
        if row.get(name) is not None and row[name] < 0:
            problems.append(f"negative {name}")
    if et == ET.CONTROLLER_FAILOVER and row.get("brokers") is not None \
            and row.get("broker_id") is not None and row["broker_id"] not in row["brokers"]:
        problems.append("brokers of ControllerFailover leave out the new controller")
    return problems


def _mention_problems(row: dict[str, Any], facts: ClusterFacts) -> list[str]:
    brokers = [row["broker_id"]] if row.get("broker_id") is not None else []
    for name in LIST_FIELDS:
        brokers += list(row.get(name) or ())
    problems = [f"broker {b} is never mentioned by the log" for b in sorted(set(brokers))
                if b not in facts.brokers]
    if row.get("topic") is not None and row["topic"] not in facts.topics:
        problems.append(f"topic {row['topic']!r} is never mentioned by the log")
    return problems


# -- resolution ----------------------------------------------------------------------------

def _cluster_of(where: str, given: str | None, facts: LogFacts) -> str:
    if given is not None:
        if given not in facts.clusters:
            raise ScenarioError(f"{where}: cluster {given!r} is not in the log")
        return given
    if len(facts.clusters) != 1:
        raise ScenarioError(f"{where}: the log has clusters {sorted(facts.clusters)}; "
                            "give cluster")
    return next(iter(facts.clusters))


def _place(where: str, inj: Injection, cluster: ClusterFacts) -> tuple[int, int]:
    """(the seq the injected event follows, its time)."""
    if inj.after_seq is not None:
        if not cluster.has_seq(inj.after_seq):
            raise ScenarioError(f"{where}: after_seq {inj.after_seq} is not a seq of the log")
        return inj.after_seq, inj.ts if inj.ts is not None else cluster.ts_of(inj.after_seq)
    assert inj.at is not None
    outside = cluster.outside(inj.at)
    if outside is not None:
        raise ScenarioError(f"{where}: {outside}")
    return cluster.last_seq_at(inj.at), inj.at


# (point, order, event with seq unset, the same controller event as the one before)
Placed = tuple[int, tuple[int, int], Event, bool]


def _restart(inj: Injection, point: int, e: Event, cluster: ClusterFacts,
             order: int) -> list[Placed]:
    """`for`: the broker's `BrokerStartup` that long after its failure. A controlled
    shutdown is followed by the broker's exit first (its `BrokerChange` failure): in Kafka
    the broker deregisters from ZooKeeper once its controlled shutdown is done."""
    if inj.restart_after is None:
        return []
    exits: list[Placed] = [] if e.event_type == ET.BROKER_FAILURE else [
        (point, (order, 1), e._replace(event_type=ET.BROKER_FAILURE), False)]
    back = int(e.ts) + inj.restart_after
    return [*exits, (cluster.last_seq_at(back), (order, 2),
                     e._replace(event_type=ET.BROKER_STARTUP, ts=back), inj.together)]


def _injected(spec: VariantSpec, facts: LogFacts) -> dict[str, list[Placed]]:
    """cluster -> (point, order, event with seq unset) of every injection of `spec`."""
    placed: dict[str, list[Placed]] = {}
    for i, inj in enumerate(spec.injections):
        where = f"variant {spec.name!r} inject #{i + 1}"
        cluster = _cluster_of(where, inj.get("cluster"), facts)
        row = {k: v for k, v in inj.fields if k != "cluster"}
        row.setdefault("source", f"whatif:{spec.name}")
        problems = event_problems(row) or _mention_problems(row, facts.clusters[cluster])
        if problems:
            raise ScenarioError(f"{where}: {'; '.join(problems)}")
        point, ts = _place(where, inj, facts.clusters[cluster])
        e = Event(seq=-1, ts=ts, **row)
        placed.setdefault(cluster, []).extend(
            [(point, (i, 0), e, inj.together),
             *_restart(inj, point, e, facts.clusters[cluster], i)])
    return placed


def _drop_hits(spec: VariantSpec, facts: LogFacts) -> dict[str, list[np.ndarray]]:
    """cluster -> the rows each drop entry matches; an entry matching no row is refused."""
    hits: dict[str, list[np.ndarray]] = {c: [] for c in facts.clusters}
    for i, drop in enumerate(spec.drops):
        found = {c: drop_rows(drop, c, f) for c, f in facts.clusters.items()}
        if not any(len(rows) for rows in found.values()):
            raise ScenarioError(f"variant {spec.name!r} drop #{i + 1}: matches no event of "
                                "the log")
        for c, rows in found.items():
            hits[c].append(rows)
    return hits


def _check_drops(spec: VariantSpec, facts: LogFacts) -> None:
    for i, drop in enumerate(spec.drops):
        where = f"variant {spec.name!r} drop #{i + 1}"
        et = drop.get("event_type")
        if et is not None and et not in ET.ALL_EVENTS:
            raise ScenarioError(f"{where}: unknown event_type {et!r}")
        scope = [facts.clusters[_cluster_of(where, drop.get("cluster"), facts)]] \
            if drop.get("cluster") is not None else list(facts.clusters.values())
        broker, topic = drop.get("broker_id"), drop.get("topic")
        if broker is not None and not any(broker in c.brokers for c in scope):
            raise ScenarioError(f"{where}: broker {broker} is never mentioned by the log")
        if topic is not None and not any(topic in c.topics for c in scope):
            raise ScenarioError(f"{where}: topic {topic!r} is never mentioned by the log")


def topic_settings(spec: VariantSpec, known: set[str], min_isr: dict[str, int],
                   unclean: dict[str, bool]) -> None:
    """The variant's `topic_config` into `min_isr` and `unclean` (topic -> value); a
    topic the log never mentions is refused. ZooKeeper and KRaft logs alike."""
    for topic, settings in spec.topic_config:
        if topic not in known:
            raise ScenarioError(f"variant {spec.name!r} topic_config: topic {topic!r} is "
                                "never mentioned by the log")
        values = dict(settings)
        if "min_insync_replicas" in values:
            min_isr[topic] = int(values["min_insync_replicas"])
        if "unclean_leader_election_enable" in values:
            unclean[topic] = bool(values["unclean_leader_election_enable"])


def variant_config(spec: VariantSpec, base: ReplayConfig, facts: LogFacts) -> ReplayConfig:
    """The base config with the variant's `config` and `topic_config` over it."""
    if "eligible_leader_replicas_enable" in dict(spec.config):
        raise ScenarioError(f"variant {spec.name!r} config: eligible_leader_replicas_enable "
                            "is a KRaft setting (KIP-966); the log is a ZooKeeper event log")
    config = dataclasses.replace(base, **dict(spec.config))
    min_isr = dict(config.topic_min_insync_replicas)
    unclean = dict(config.topic_unclean_leader_election_enable)
    known = set().union(*(c.topics for c in facts.clusters.values()))
    topic_settings(spec, known, min_isr, unclean)
    return dataclasses.replace(
        config, topic_min_insync_replicas=tuple(sorted(min_isr.items())),
        topic_unclean_leader_election_enable=tuple(sorted(unclean.items())))


def _edited_rows(failovers: dict[int, Event], cluster: ClusterFacts) -> int:
    """The log's rows of the failovers the variant edits."""
    return sum(int(np.count_nonzero(pc.equal(
        cluster.rows.column("event_type").slice(lo, hi - lo), ET.CONTROLLER_FAILOVER)
        .to_numpy(zero_copy_only=False)))
        for lo, hi in map(cluster.rows_of_seq, failovers))


def _numbered(placed: list[Placed]) -> tuple[list[Event], list[int]]:
    """The injected events with their seqs (the k-th new seq, from 0, in the order of the
    points, placed after log seq p is p + 1 + k: the log's seq p has become p + the new
    seqs before it; an event `together` with the one before it at the same point shares
    its seq), and the renumbering points (one per new seq)."""
    events: list[Event] = []
    points: list[int] = []
    for point, _, e, together in placed:
        if not (together and points and points[-1] == point):
            points.append(point)
        events.append(e._replace(seq=point + len(points)))
    return events, points


def resolve_variant(spec: VariantSpec, base: ReplayConfig, facts: LogFacts) -> VariantPlan:
    _check_drops(spec, facts)
    config = variant_config(spec, base, facts)
    hits = _drop_hits(spec, facts)
    injected: dict[str, list[Event]] = {}
    points: dict[str, list[int]] = {}
    drops = list(spec.drops)
    failovers: dict[str, dict[int, Event]] = {}
    held: dict[str, tuple[int, ...]] = {}
    for cluster, placed in _injected(spec, facts).items():
        placed.sort(key=lambda p: (p[0], p[1]))
        injected[cluster], points[cluster] = _numbered(placed)
        edits = consistency(cluster, facts.clusters[cluster], injected[cluster],
                            [point for point, *_ in placed])
        drops += edits.drops
        hits[cluster] += [drop_rows(d, cluster, facts.clusters[cluster]) for d in edits.drops]
        failovers[cluster], held[cluster] = edits.failovers, edits.held_dead
    dropped = {c: np.unique(np.concatenate(rows)) if rows else np.zeros(0, np.int64)
               for c, rows in hits.items()}
    counts = {c: EditCounts(
        dropped=len(dropped[c]), injected=len(injected.get(c, [])),
        edited=_edited_rows(failovers.get(c, {}), f),
        partitions=len(partitions_of(f, dropped[c], injected.get(c, []))))
        for c, f in facts.clusters.items()}
    return VariantPlan(spec.name, tuple(drops), config, injected, points, failovers, held,
                       counts, no_edit=not drops and not injected and config == base)


def resolve(scenario: Scenario, base: ReplayConfig, facts: LogFacts,
            with_baseline: bool = True) -> list[VariantPlan]:
    """Every variant the job replays, the baseline first (unless read from elsewhere)."""
    specs = list(scenario.variants)
    for sweep in scenario.sweeps:
        specs += sweep_variants(sweep, scenario.racks, facts)
    counts = Counter(s.name for s in specs)
    duplicate = next((s.name for s in specs if counts[s.name] > 1), None)
    if duplicate is not None:
        raise ScenarioError(f"variant name {duplicate!r} is given twice (a [[variant]] and "
                            "the sweep's)")
    plans = [resolve_variant(s, base, facts) for s in specs]
    if with_baseline:
        plans.insert(0, VariantPlan(BASELINE, (), base))
    return plans
