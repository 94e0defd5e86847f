"""A scenario resolved against a KRaft metadata log (docs/whatif.md, "KRaft logs"): every
variant as the edits of `statemachine.kraft.variant` per cluster, checked before Spark
starts, with one line and exit 2 for what a KRaft log cannot take.

* injected events become controller operations: `BrokerFailure` a fence (the broker's
  heartbeats stop), `ControlledShutdown` a controlled shutdown, `BrokerStartup` an unfence
  (the broker back); `for` unfences the broker that long after (a controlled shutdown's
  broker is fenced first, once it has shut down, as in the ZooKeeper what-if). `at` places
  the operation before the first batch written after that time, `after_seq` after the
  batch of that record offset. Other event types have no KRaft counterpart;
* `drop` matches records: `seq`, `seq_from`, `seq_to` are record offsets, `event_type` a
  record type (`PartitionChangeRecord`, ...), `topic` the name of the record's topic id;
* `config`: `unclean_leader_election_enable` is the cluster's default (a topic's own setting
  in the log still wins), `min_insync_replicas` the default min ISR, and
  `eligible_leader_replicas_enable` turns KIP-966 on or off on the 4.0 profile (refused on
  3.x); without it a variant elects with ELR when the log shows ELR in use;
  `delete_topic_enable` has no KRaft counterpart (a deletion is one record);
* `topic_config` wins over the topics' own settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from jobs.engine.kraft.metadata_source import ClusterLog
from jobs.whatif.facts import ClusterFacts, LogFacts
from jobs.whatif.matching import EditCounts
from jobs.whatif.plan import topic_settings
from jobs.whatif.scenario import Drop, Injection, Scenario, ScenarioError, VariantSpec
from jobs.whatif.sweeps import sweep_variants
from schemas import event_types as ET
from statemachine.kraft import records as K
from statemachine.kraft.controller import FENCE, SHUTDOWN, UNFENCE, Settings
from statemachine.kraft.profiles import KraftProfile
from statemachine.kraft.records import MetadataRecord
from statemachine.kraft.variant import (
    Edits,
    Injected,
    elr_in_use,
    fencing_by_registration_change,
)

OPERATION_OF = {ET.BROKER_FAILURE: FENCE, ET.CONTROLLED_SHUTDOWN: SHUTDOWN,
                ET.BROKER_STARTUP: UNFENCE}
ELR_SETTING = "eligible_leader_replicas_enable"


@dataclass
class KraftVariant:
    """One variant: per cluster its edits and the controller's settings."""

    name: str
    edits: dict[str, Edits]
    settings: dict[str, Settings]
    default_min_isr: int
    no_edit: bool
    counts: dict[str, EditCounts] = field(default_factory=dict)  # filled by the run


def kraft_facts(clusters: dict[str, ClusterLog]) -> LogFacts:
    """The brokers, topics and offsets of the log, as `jobs.whatif.sweeps` reads them."""
    out = {}
    for name, log in clusters.items():
        facts = ClusterFacts()
        timed = [(r.offset, r.ts) for r in log.records
                 if r.offset is not None and r.ts is not None]
        facts.seqs = np.array([o for o, _ in timed], np.int64)
        facts.times = np.array([t for _, t in timed], np.int64)
        for r in log.records:
            if r.record_type in (K.REGISTER_BROKER, K.BROKER_REGISTRATION_CHANGE,
                                 K.FENCE_BROKER, K.UNFENCE_BROKER) and r.broker_id is not None:
                facts.brokers.add(r.broker_id)
            facts.brokers |= {b for b in r.replicas or () if b >= 0}
            if r.record_type == K.TOPIC and r.topic is not None:
                facts.topics.add(r.topic)
        out[name] = facts
    return LogFacts(out)


def _cluster(where: str, given: str | None, clusters: dict[str, ClusterLog]) -> str:
    if given is not None:
        if given not in clusters:
            raise ScenarioError(f"{where}: cluster {given!r} is not in the log")
        return given
    if len(clusters) != 1:
        raise ScenarioError(f"{where}: the log has clusters {sorted(clusters)}; give cluster")
    return next(iter(clusters))


def _operations(where: str, inj: Injection, log: ClusterLog,
                facts: ClusterFacts) -> list[Injected]:
    event_type, broker = inj.get("event_type"), inj.get("broker_id")
    if event_type not in OPERATION_OF:
        raise ScenarioError(f"{where}: {event_type} has no KRaft counterpart; a KRaft "
                            "what-if injects BrokerFailure (a fence), ControlledShutdown "
                            "and BrokerStartup (an unfence)")
    if broker is None or broker not in facts.brokers:
        raise ScenarioError(f"{where}: broker {broker} is never mentioned by the log")
    if inj.after_seq is not None:
        ts = next((r.ts for r in log.records if r.offset == inj.after_seq), None)
        if ts is None:
            raise ScenarioError(f"{where}: after_seq {inj.after_seq} is not an offset of "
                                "the log")
    else:
        assert inj.at is not None
        ts = inj.at
        outside = facts.outside(ts)
        if outside is not None:
            raise ScenarioError(f"{where}: {outside}")
    ops = [Injected(OPERATION_OF[event_type], broker, ts)]
    if inj.restart_after is not None:
        if event_type == ET.CONTROLLED_SHUTDOWN:
            ops.append(Injected(FENCE, broker, ts))
        ops.append(Injected(UNFENCE, broker, ts + inj.restart_after))
    return ops


def _topics(log: ClusterLog) -> dict[str, str]:
    return {r.topic_id: r.topic for r in log.records
            if r.record_type == K.TOPIC and r.topic_id and r.topic}


def _matches(drop: Drop, cluster: str, r: MetadataRecord, names: dict[str, str]) -> bool:
    for name, value in drop.fields:
        if name == "cluster":
            ok = cluster == value
        elif name in ("seq", "seq_from", "seq_to"):
            o = r.offset
            ok = o is not None and (o == value if name == "seq" else
                                    o >= value if name == "seq_from" else o <= value)
        elif name in ("ts_from", "ts_to"):
            ok = r.ts is not None and (r.ts >= value if name == "ts_from" else r.ts <= value)
        elif name == "event_type":
            ok = r.record_type == value
        elif name == "topic":
            ok = (r.topic or names.get(r.topic_id or "")) == value
        else:
            ok = getattr(r, name) == value
        if not ok:
            return False
    return True


def _dropped(spec: VariantSpec, clusters: dict[str, ClusterLog]) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {c: set() for c in clusters}
    for i, drop in enumerate(spec.drops):
        hits = 0
        for c, log in clusters.items():
            names = _topics(log)
            found = {r.offset for r in log.records
                     if r.offset is not None and _matches(drop, c, r, names)}
            out[c] |= found
            hits += len(found)
        if not hits:
            raise ScenarioError(f"variant {spec.name!r} drop #{i + 1}: matches no record of "
                                "the log")
    return out


def _settings(spec: VariantSpec, profile: KraftProfile, log: ClusterLog,
              facts: ClusterFacts) -> tuple[Settings, tuple[tuple[str, int], ...]]:
    config = dict(spec.config)
    where = f"variant {spec.name!r}"
    if "delete_topic_enable" in config:
        raise ScenarioError(f"{where} config: delete_topic_enable has no KRaft counterpart "
                            "(a KRaft controller deletes a topic in one record)")
    elr = config.get(ELR_SETTING)
    if elr and not profile.elr:
        raise ScenarioError(f"{where} config: {ELR_SETTING} needs the 4.0 profile "
                            f"(--kafka-version 4.0); this run uses {profile.name}")
    unclean: dict[str, bool] = {}
    min_isr: dict[str, int] = {}
    topic_settings(spec, facts.topics, min_isr, unclean)
    return Settings(
        profile, elr=profile.elr and (elr_in_use(log.records) if elr is None else bool(elr)),
        registration_change=fencing_by_registration_change(log.records),
        unclean_default=config.get("unclean_leader_election_enable"),
        topic_unclean=unclean), tuple(sorted(min_isr.items()))


def resolve_variant(spec: VariantSpec, clusters: dict[str, ClusterLog], facts: LogFacts,
                    profile: KraftProfile, default_min_isr: int) -> KraftVariant:
    injected: dict[str, list[Injected]] = {c: [] for c in clusters}
    for i, inj in enumerate(spec.injections):
        where = f"variant {spec.name!r} inject #{i + 1}"
        c = _cluster(where, inj.get("cluster"), clusters)
        injected[c] += _operations(where, inj, clusters[c], facts.clusters[c])
    dropped = _dropped(spec, clusters)
    edits, settings = {}, {}
    for c, log in clusters.items():
        settings[c], topic_min_isr = _settings(spec, profile, log, facts.clusters[c])
        ops = sorted(injected[c], key=lambda op: op.ts)  # stable: scenario order at a time
        edits[c] = Edits(tuple(ops), frozenset(dropped[c]), topic_min_isr)
    config = dict(spec.config)
    return KraftVariant(
        spec.name, edits, settings,
        int(config.get("min_insync_replicas", default_min_isr)),
        no_edit=not spec.drops and not spec.injections and not spec.config
        and not spec.topic_config)


def resolve(scenario: Scenario, clusters: dict[str, ClusterLog], profile: KraftProfile,
            default_min_isr: int) -> list[KraftVariant]:
    """Every variant of the scenario (the baseline is the log folded as it is)."""
    facts = kraft_facts(clusters)
    specs = list(scenario.variants)
    for sweep in scenario.sweeps:
        specs += sweep_variants(sweep, scenario.racks, facts)
    names = [s.name for s in specs]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise ScenarioError(f"variant name {duplicate!r} is given twice (a [[variant]] and "
                            "the sweep's)")
    return [resolve_variant(s, clusters, facts, profile, default_min_isr) for s in specs]
