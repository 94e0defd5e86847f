"""The shared fold without Spark: on the simulated `sample` log, every variant's rows from
`fold_shared` (the prefix folded once, each variant from its cut), read whole by the rule of
`jobs.whatif.differences` (the reference's rows before its cut, or all of them, plus its
own; its state rows stored as their difference from the reference's), equal the rows of
that variant's events replayed on their own, in every group: the per-event lists in order,
the state lists as sets."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest

from jobs.bench.core import group_log, read_log
from jobs.engine.group_rows import fold_order
from jobs.sim.cli import write_log
from jobs.whatif.differences import state_difference, with_base
from jobs.whatif.facts import facts_from_arrow
from jobs.whatif.plan import VariantPlan, resolve
from jobs.whatif.scenario import parse_scenario
from jobs.whatif.sharing import (
    VariantInput,
    divergence,
    fold_shared,
    timeline_difference,
)
from statemachine.cluster import build_timeline
from statemachine.context import Outputs, ReplayConfig
from statemachine.replay import replay

BUCKETS = 4
CLUSTER = "default"
TABLES = ("partition_states", "replica_states", "state_changes", "partition_state_writes",
          "leader_and_isr", "update_metadata", "stop_replica", "findings",
          "partition_windows")
EVENT_TABLES = TABLES[2:]


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample")
    write_log(str(out), preset="sample", seed=1)
    return out


def moment(table: Any, fraction: float) -> datetime:
    ts = pc.cast(table["ts"], "int64")
    low, high = pc.min(ts).as_py(), pc.max(ts).as_py()
    return datetime.fromtimestamp((low + (high - low) * fraction) / 1e6, UTC)


def inputs(log: Path, scenario: dict[str, Any]) -> tuple[list[VariantInput], Any]:
    table = read_log(log)
    groups = group_log(table, BUCKETS)
    plans: list[VariantPlan] = resolve(parse_scenario(scenario), ReplayConfig(),
                                       facts_from_arrow(str(log)), with_baseline=True)
    cluster_events = groups.cluster_events[CLUSTER]
    timelines = {}
    variants = []
    for p in plans:
        edited = p.edit_cluster_events(CLUSTER, cluster_events)
        timelines[p.name] = build_timeline(edited)
        variants.append(VariantInput(
            composite=p.name, cluster=CLUSTER, config=p.config_for(CLUSTER),
            timeline=timelines[p.name], horizon=max(e.seq for e in edited),
            drops=p.drops, points=tuple(p.points.get(CLUSTER, [])),
            failovers=p.failovers.get(CLUSTER, {}),
            injected=tuple(p.injected.get(CLUSTER, [])),
            timeline_differs=timeline_difference(timelines[plans[0].name],
                                                 timelines[p.name])))
    return variants, groups


def collect(into: dict[str, list[Any]], out: Outputs) -> None:
    for table in EVENT_TABLES:
        into.setdefault(table, []).extend(getattr(out, table))


def whole_rows(mine: dict[str, list[Any]], base: dict[str, list[Any]], base_out: Outputs,
               f: Any) -> None:
    """A variant's rows of the group read whole: the reference's rows it takes, then its
    own; its state as stored (the difference from the reference's) over the reference's."""
    if not f.whole and f.before is None:  # it shares nothing: its rows are its own
        for table in TABLES[:2]:
            mine[table] = list(getattr(f.out, table))
        return
    for table in EVENT_TABLES:
        mine[table] = with_base(table, base.get(table, []), mine.get(table, []), f.before)
    stored = state_difference([], [], [], []) if f.whole else state_difference(
        base_out.partition_states, base_out.replica_states, f.out.partition_states,
        f.out.replica_states)
    overridden = {(r.topic, r.partition) for r in (*stored.partition_states,
                                                   *stored.replica_states)}
    overridden.update(stored.removed)
    mine["partition_states"] = with_base("partition_states", base_out.partition_states,
                                         stored.partition_states, None, overridden)
    mine["replica_states"] = with_base("replica_states", base_out.replica_states,
                                       stored.replica_states, None, overridden)


def shared_equals_alone(variants: list[VariantInput], groups: Any) -> dict[str, int | None]:
    """Asserts the equality in every bucket; returns each variant's cut in one bucket."""
    cuts: dict[str, int | None] = {}
    for (_, bucket), events in sorted(groups.buckets.items()):
        rows = fold_order({tuple(e) for e in events})
        got: dict[str, dict[str, list[Any]]] = {v.composite: {} for v in variants}
        def emit(names: Sequence[str], out: Outputs,
                 got: dict[str, dict[str, list[Any]]] = got) -> None:
            for name in names:
                collect(got[name], out)

        forked = fold_shared(lambda rows=rows: iter(rows), variants, bucket, BUCKETS, emit)
        ref = forked[variants[0].composite]
        for v in variants:
            injected = v.injected_in(bucket, BUCKETS)
            alone_state, alone = replay(None, list(v.events(rows, injected)), v.timeline,
                                        v.config, until=v.horizon)
            f = forked[v.composite]
            mine = got[v.composite]
            collect(mine, f.out)
            if v is not variants[0]:
                assert not (f.whole and f.out.event_rows())  # a whole group: nothing own
                whole_rows(mine, got[variants[0].composite], ref.out, f)
            else:
                for table in TABLES[:2]:
                    mine[table] = list(getattr(f.out, table))
            for table in EVENT_TABLES:
                assert mine.get(table, []) == getattr(alone, table), (v.composite, bucket,
                                                                      table)
            for table in TABLES[:2]:
                assert sorted(mine[table]) == sorted(getattr(alone, table)), (
                    v.composite, bucket, table)
            assert f.out.applied == alone.applied
            assert f.state.watermark == alone_state.watermark
            assert f.state.thaw().keys() == alone_state.thaw().keys()
            cuts[v.composite] = divergence(lambda rows=rows: iter(rows), variants[0], v,
                                           variants[0].injected_in(bucket, BUCKETS), injected)
    return cuts


def test_a_broker_sweep_with_a_restart_folds_as_each_variant_alone(log: Path) -> None:
    at = moment(read_log(log), 0.5)
    variants, groups = inputs(log, {"sweep": {"fail_each_broker": {"at": at, "for": "10m"}}})
    assert len(variants) > 3
    cuts = shared_equals_alone(variants, groups)
    # Every failure leaves the baseline at its injected failure, halfway through the log:
    # holding the broker dead changes nothing before (it is alive until then).
    assert cuts[variants[0].composite] is None
    for v in variants[1:]:
        assert cuts[v.composite] == min(e.seq for e in v.injected)


def test_drops_injections_and_an_untouched_variant_fold_as_each_alone(log: Path) -> None:
    table = read_log(log)
    at = moment(table, 0.3)
    variants, groups = inputs(log, {"variant": [
        {"name": "no-unclean", "drop": [{"event_type": "UncleanLeaderElection"}]},
        {"name": "late-drop", "drop": [{"seq_from": int(pc.max(table["seq"]).as_py()) - 50}]},
        {"name": "shutdown", "inject": [
            {"at": at, "event_type": "ControlledShutdown", "broker_id": 1, "for": "5m"}]},
        {"name": "unclean-everywhere", "config": {"unclean_leader_election_enable": True}},
        {"name": "preferred", "inject": [  # no drop: its rows differ only by their seqs
            {"at": at, "event_type": "PreferredLeaderElection", "topic": "events-00001",
             "partition": 0}]},
    ]})
    cuts = shared_equals_alone(variants, groups)
    assert cuts["unclean-everywhere"] == -1  # other settings: nothing is shared
    preferred = next(v for v in variants if v.composite == "preferred")
    assert not preferred.drops
    assert cuts["preferred"] == min(e.seq for e in preferred.injected)
