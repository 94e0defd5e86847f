"""A failure a variant injects stays a failure: the log's later events that would undo it
are edited (pure: the plan), and the replay keeps the broker dead (Spark).

The log (ts = T0 + seq seconds; brokers 1-3):

* seq 1    ControllerFailover -> broker 1, live [1,2,3]
* seq 2    a-0, a-1, a-2 -> [1,2]; seq 3 b-0 -> [2,3]
* seq 10   the ISR of a-0, a-1, a-2 shrinks to [1] (broker 1 leads them alone)
* seq 100  ControllerFailover -> broker 2, live [1,2,3]: today this brings a failed 1 back
* seq 200  a-0's ISR grows to [1,2] (broker 1, its leader, sends it)
* seq 700  ControlledShutdown of 1; 710 BrokerFailure of 1; 720 BrokerStartup of 1
* seq 1000 d-0 -> [2,3] (the log's end, T0 + 1000 s)

Variants, broker 1 failing at T0 + 40 s (after seq 10, so it gets seq 11):

* `dead`: no `for`. The failover at 100 runs with live [2,3], broker 1's events at 700,
  710, 720 are dropped, the ISR change at 200 no longer applies. a-0..a-2 are offline from
  T0 + 40 s to the end: 3 x 960 = 2,880 partition-seconds, 3 still offline.
* `back`: `for = "10m"`: the restart is at T0 + 640 s, after seq 200 (the last at or before
  it), so it gets seq 202 (seq 200 has become 201). 100 is edited, 200 no longer applies;
  700-720 happen as logged. a-0..a-2 offline 600 s each (1,800), then again from 710 to
  720, all three, since a-0's ISR never grew: 30 more, 1,830 in all.
* `no-710`: the log's failure at 710 dropped: the startup at 720 re-registers a broker
  that is registered: a bounce (`processBrokerChange`'s bouncedBrokerIds).
* baseline: a-1, a-2 offline from 710 to 720: 20 partition-seconds.
* `nothing` sets the config's own value: no edit. `b-unclean` lets b elect uncleanly, but b
  never loses its leader: an edit, and the same rows as the baseline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from jobs.store.variant_rows import read_variant_table
from jobs.whatif.facts import facts_from_arrow
from jobs.whatif.job import main
from jobs.whatif.plan import VariantPlan, resolve
from jobs.whatif.ranking import print_ranking
from jobs.whatif.scenario import load_scenario
from schemas import event_types as ET
from statemachine.cluster import build_timeline
from statemachine.context import ReplayConfig
from tests.helpers.event_log import created, ev, failover, write_log

AT = "2026-11-20T00:00:40Z"
SCENARIO = f"""
[[variant]]
name = "dead"
inject = [{{ at = "{AT}", event_type = "BrokerFailure", broker_id = 1 }}]

[[variant]]
name = "back"
inject = [{{ at = "{AT}", event_type = "BrokerFailure", broker_id = 1, for = "10m" }}]

[[variant]]
name = "no-710"
drop = [{{ seq = 710 }}]

[[variant]]
name = "nothing"
config = {{ min_insync_replicas = 1 }}

[[variant]]
name = "b-unclean"
topic_config = {{ "b" = {{ unclean_leader_election_enable = true }} }}
"""


def rows() -> list[dict[str, Any]]:
    log = [failover(1, 1, [1, 2, 3])]
    log += [created(2, "a", p, [1, 2]) for p in range(3)]
    log += [created(3, "b", 0, [2, 3])]
    log += [ev(10, ET.ISR_CHANGED, topic="a", partition=p, isr=[1], leader_epoch=0)
            for p in range(3)]
    log += [failover(100, 2, [1, 2, 3]),
            ev(200, ET.ISR_CHANGED, topic="a", partition=0, isr=[1, 2], leader_epoch=0),
            ev(700, ET.CONTROLLED_SHUTDOWN, broker_id=1),
            ev(710, ET.BROKER_FAILURE, broker_id=1),
            ev(720, ET.BROKER_STARTUP, broker_id=1),
            created(1000, "d", 0, [2, 3])]
    return log


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("consistency")
    write_log(root / "log", rows())
    (root / "scenario.toml").write_text(SCENARIO)
    return root


@pytest.fixture(scope="module")
def plans(log_dir: Path) -> dict[str, VariantPlan]:
    facts = facts_from_arrow(str(log_dir / "log"))
    assert facts is not None
    resolved = resolve(load_scenario(str(log_dir / "scenario.toml")), ReplayConfig(), facts)
    return {p.name: p for p in resolved}


def test_a_failure_without_for_stays_dead(plans: dict[str, VariantPlan]) -> None:
    dead = plans["dead"]
    assert [(d.get("seq"), d.get("event_type"), d.get("broker_id")) for d in dead.drops] == [
        (700, ET.CONTROLLED_SHUTDOWN, 1), (710, ET.BROKER_FAILURE, 1),
        (720, ET.BROKER_STARTUP, 1)]
    edited = dead.failovers["default"][100]
    assert (edited.seq, edited.broker_id, edited.brokers) == (100, 2, (2, 3))
    assert dead.held_dead == {"default": (1,)}
    assert dead.config_for("default").held_dead == (1,)
    assert (dead.counts["default"].dropped, dead.counts["default"].injected,
            dead.counts["default"].edited) == (3, 1, 1)


def test_a_failure_for_10m_restarts_after_the_last_seq_before_it(
        plans: dict[str, VariantPlan]) -> None:
    back = plans["back"]
    assert [(e.seq, e.event_type, e.broker_id) for e in back.injected["default"]] == [
        (11, ET.BROKER_FAILURE, 1), (202, ET.BROKER_STARTUP, 1)]
    assert back.injected["default"][1].ts == back.injected["default"][0].ts + 600_000_000
    assert back.drops == ()  # 700-720 are after the restart
    assert sorted(back.failovers["default"]) == [100]
    assert (back.counts["default"].dropped, back.counts["default"].injected,
            back.counts["default"].edited) == (0, 2, 1)


def test_a_dropped_failure_makes_the_later_startup_a_bounce(
        plans: dict[str, VariantPlan], log_dir: Path) -> None:
    facts = facts_from_arrow(str(log_dir / "log"))
    assert facts is not None
    events = facts.clusters["default"].broker_events
    plain = build_timeline(events)
    edited = build_timeline(plans["no-710"].edit_cluster_events("default", events))
    assert [(s.seq, s.new, s.bounced) for s in plain.steps if s.seq == 720] == [
        (720, (1,), ())]
    assert [(s.seq, s.new, s.bounced, s.dead) for s in edited.steps if s.seq == 720] == [
        (720, (), (1,), ())]
    assert plans["no-710"].counts["default"].dropped == 1


@pytest.fixture(scope="module")
def out(spark: Any, log_dir: Path) -> Path:
    assert main(["--events", str(log_dir / "log"), "--scenario",
                 str(log_dir / "scenario.toml"), "--out", str(log_dir / "out"),
                 "--buckets", "2"], spark=spark) == 0
    return log_dir / "out"


def test_the_replay_keeps_the_broker_dead(spark: Any, out: Path) -> None:
    impact = {r["variant"]: r for r in spark.read.parquet(str(out / "whatif_impact")).collect()}
    got = {v: (r["offline_partition_seconds"], r["partitions_offline_at_end"],
               r["events_no_longer_applying"]) for v, r in impact.items()}
    assert got == {"dead": (2880.0, 3, 1), "back": (1830.0, 0, 1), "no-710": (0.0, 0, 0),
                   "baseline": (20.0, 0, 0), "nothing": (20.0, 0, 0),
                   "b-unclean": (20.0, 0, 0)}
    assert "alter_partition_rejected" not in impact["dead"]["findings_by_kind"]
    intervals = read_variant_table(spark, str(out), "broker_timeline", "scenario", ["dead"]) \
        .where(F.col("broker_id") == 1).collect()
    assert [(r["status"], r["seq_from"], r["seq_to"]) for r in
            sorted(intervals, key=lambda r: r["seq_from"])] == [
        ("live", 1, 11), ("dead", 11, None)]


def test_each_variant_says_what_its_edits_did(spark: Any, out: Path) -> None:
    impact = {r["variant"]: r for r in spark.read.parquet(str(out / "whatif_impact")).collect()}
    got = {v: (r["events_dropped"], r["events_injected"], r["events_edited"],
               r["partitions_edited"], r["no_edit"], r["same_as_baseline"])
           for v, r in impact.items()}
    assert got == {
        "dead": (3, 1, 1, 0, False, False), "back": (0, 2, 1, 0, False, False),
        "no-710": (1, 0, 0, 0, False, False), "nothing": (0, 0, 0, 0, True, True),
        "b-unclean": (0, 0, 0, 0, False, True), "baseline": (0, 0, 0, 0, False, False)}


def test_the_printed_ranking_flags_and_counts(capsys: pytest.CaptureFixture[str]) -> None:
    def row(variant: str, rank: int, **kw: Any) -> dict[str, object]:
        r: dict[str, object] = {
            "cluster": "default", "variant": variant, "rank": rank,
            "offline_partition_seconds": 10.0, "offline_partition_seconds_vs_baseline": 0.0,
            "max_partitions_offline_at_once": 1, "partitions_offline_at_end": 0,
            "topics_losing_only_isr": 0, "unclean_elections": 0, "events_dropped": 0,
            "events_injected": 0, "events_edited": 0, "partitions_edited": 0,
            "events_no_longer_applying": 0, "no_edit": False, "same_as_baseline": False}
        return {**r, **kw}

    print_ranking([row("dead", 1, events_dropped=3, events_injected=1, events_edited=1,
                       events_no_longer_applying=940),
                   row("nothing", 2, no_edit=True, same_as_baseline=True),
                   row("b-unclean", 3, same_as_baseline=True), row("baseline", 4)])
    lines = capsys.readouterr().out.splitlines()
    assert "   edits: 3 events dropped, 1 injected, 1 edited, 0 partitions with edited " \
        "events" in lines
    assert "   940 events of the log no longer apply" in lines
    assert any(x.startswith("2. nothing") and x.endswith("[no edit: the baseline's log and "
                                                         "config]") for x in lines)
    assert any(x.startswith("3. b-unclean") and x.endswith("[same rows as the baseline]")
               for x in lines)
    assert not any("edits:" in x for x in lines[lines.index(next(
        x for x in lines if x.startswith("4. baseline"))):])
