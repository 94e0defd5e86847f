"""The sweeps: one variant per broker, rack or pair, per time (pure: names, seqs, limits;
Spark: the rankings on a hand-made log).

The log (ts = T0 + seq seconds; brokers 1-6 in racks r1 = {1,2}, r2 = {3,4}, r3 = {5,6}):

* seq 1   ControllerFailover -> broker 1, live [1..6]
* seq 2   x-0, x-1, x-2 -> [1,2]: every replica of topic x is in rack r1
* seq 3   y-0 -> [3,5], y-1 -> [4,6], y-2 -> [5,3]; seq 4 z-0 -> [2,4]
* seq 5   s-0 -> [1] (one replica)
* seq 100 d-0 -> [3,4,5] (the log's end, T0 + 100 s)

Failures at T0 + 40 s (after seq 5) last 60 s to the end, at T0 + 70 s 30 s:

* fail-rack-r1: x-0..2 and s-0 lose every replica: 4 x 60 = 240; r2 and r3 take none
  offline (every partition keeps a replica elsewhere).
* fail-pair-1-2: 240 at T0 + 40 s (4 at once), 120 at T0 + 70 s; fail-pair-3-5: y-0 and
  y-2, 120; a pair with broker 1 and another: s-0 only, 60; 4-6 (y-1) and 2-4 (z-0): 60.
* shutdown-broker-1 for 20 s: leadership of x moves to broker 2; s-0 cannot move, is
  offline from the broker's exit to its restart at T0 + 60 s: 20.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from jobs.whatif import job
from jobs.whatif.facts import facts_from_arrow
from jobs.whatif.plan import resolve
from jobs.whatif.scenario import ScenarioError, parse_scenario
from schemas import event_types as ET
from statemachine.context import ReplayConfig
from tests.helpers.event_log import T0, created, failover, write_log

AT_40, AT_70 = "2026-11-20T00:00:40Z", "2026-11-20T00:01:10Z"
RACKS = '[racks]\n1 = "r1"\n2 = "r1"\n3 = "r2"\n4 = "r2"\n5 = "r3"\n6 = "r3"\n'
SCENARIO = RACKS + f"""
[sweep]
fail_each_rack = {{ at = "{AT_40}" }}
fail_each_pair = {{ at = ["{AT_40}", "{AT_70}"], max_variants = 30 }}
shutdown_each_broker = {{ at = "{AT_40}", for = "20s" }}
"""
PAIR = "fail-pair-{}-at-2026112{}"


def rows() -> list[dict[str, Any]]:
    log = [failover(1, 1, [1, 2, 3, 4, 5, 6])]
    log += [created(2, "x", p, [1, 2]) for p in range(3)]
    log += [created(3, "y", p, r) for p, r in enumerate(([3, 5], [4, 6], [5, 3]))]
    log += [created(4, "z", 0, [2, 4]), created(5, "s", 0, [1]), created(100, "d", 0, [3, 4, 5])]
    return log


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sweeps")
    write_log(root / "log", rows())
    (root / "sweeps.toml").write_text(SCENARIO)
    return root


def _plans(log_dir: Path, text: str) -> dict[str, Any]:
    import tomllib
    facts = facts_from_arrow(str(log_dir / "log"))
    assert facts is not None
    return {p.name: p for p in resolve(parse_scenario(tomllib.loads(text)), ReplayConfig(),
                                       facts)}


def test_sweep_names_and_one_controller_event_per_member(log_dir: Path) -> None:
    plans = _plans(log_dir, SCENARIO)
    assert len(plans) == 1 + 3 + 15 * 2 + 6
    assert {"fail-rack-r1", "fail-rack-r2", "fail-rack-r3", "shutdown-broker-6",
            PAIR.format("1-2", "0T000040Z"), PAIR.format("5-6", "0T000110Z")} <= set(plans)
    rack = plans["fail-rack-r1"].injected["default"]
    assert [(e.seq, e.event_type, e.broker_id) for e in rack] == [
        (6, ET.BROKER_FAILURE, 1), (6, ET.BROKER_FAILURE, 2)]
    assert plans["fail-rack-r1"].renumber("default", 100) == 101
    shutdown = plans["shutdown-broker-1"].injected["default"]
    assert [(e.seq, e.event_type, e.ts - shutdown[0].ts) for e in shutdown] == [
        (6, ET.CONTROLLED_SHUTDOWN, 0), (7, ET.BROKER_FAILURE, 0),
        (8, ET.BROKER_STARTUP, 20_000_000)]


@pytest.mark.parametrize(("text", "message"), [
    (f'[sweep]\nfail_each_pair = {{ at = ["{AT_40}", "{AT_70}"] , max_variants = 29 }}\n',
     "fail_each_pair makes 30 variants, more than max_variants = 29"),
    (f'[sweep]\nfail_each_rack = {{ at = "{AT_40}" }}\n', "needs a [racks] table"),
    (f'[racks]\n9 = "r9"\n[sweep]\nfail_each_rack = {{ at = "{AT_40}" }}\n',
     "broker 9 is never mentioned"),
    (f'[sweep]\nfail_each_broker = {{ at = "{AT_40}", max_variants = 3 }}\n',
     "unknown field(s) ['max_variants']"),
])
def test_a_sweep_too_big_or_without_racks_is_refused_before_spark(
        log_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], text: str, message: str) -> None:
    def no_spark(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("Spark must not start")

    monkeypatch.setattr(job, "build_session", no_spark)
    (tmp_path / "bad.toml").write_text(text)
    rc = job.main(["--events", str(log_dir / "log"), "--scenario", str(tmp_path / "bad.toml"),
                   "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and message in err, err


def test_at_may_not_be_an_empty_list() -> None:
    with pytest.raises(ScenarioError, match="at is an empty list"):
        parse_scenario({"sweep": {"fail_each_broker": {"at": []}}})
    assert parse_scenario({"sweep": {"fail_each_broker": {"at": T0}}}).sweeps[0].at == (
        int(T0.timestamp() * 1e6),)


@pytest.fixture(scope="module")
def impact(spark: Any, log_dir: Path) -> dict[str, Any]:
    out = log_dir / "out"
    assert job.main(["--events", str(log_dir / "log"), "--scenario",
                     str(log_dir / "sweeps.toml"), "--out", str(out), "--buckets", "1"],
                    spark=spark) == 0
    return {r["variant"]: r for r in spark.read.parquet(str(out / "whatif_impact")).collect()}


def test_a_rack_sweep_ranks_the_rack_holding_a_whole_topic_first(impact: dict[str, Any]) -> None:
    racks = sorted((r["rank"], v, r["offline_partition_seconds"]) for v, r in impact.items()
                   if v.startswith("fail-rack-"))
    assert racks[0][1:] == ("fail-rack-r1", 240.0)
    assert [seconds for _, _, seconds in racks[1:]] == [0.0, 0.0]


def test_a_pair_sweep_finds_the_pair_taking_most_partitions_offline(
        impact: dict[str, Any]) -> None:
    first = min((r for v, r in impact.items() if v.startswith("fail-pair-")),
                key=lambda r: r["rank"])
    assert first["variant"] == PAIR.format("1-2", "0T000040Z")
    assert (first["rank"], first["offline_partition_seconds"],
            first["max_partitions_offline_at_once"]) == (1, 240.0, 4)
    assert impact[PAIR.format("1-2", "0T000110Z")]["offline_partition_seconds"] == 120.0
    assert impact[PAIR.format("3-5", "0T000040Z")]["max_partitions_offline_at_once"] == 2
    assert impact[PAIR.format("1-3", "0T000040Z")]["offline_partition_seconds"] == 60.0
    assert impact[PAIR.format("4-6", "0T000040Z")]["offline_partition_seconds"] == 60.0
    assert impact[PAIR.format("5-6", "0T000040Z")]["offline_partition_seconds"] == 0.0


def test_a_shutdown_sweep_restarts_after_for(impact: dict[str, Any], spark: Any,
                                            log_dir: Path) -> None:
    r = impact["shutdown-broker-1"]
    assert (r["offline_partition_seconds"], r["partitions_offline_at_end"],
            r["events_injected"], r["findings_by_kind"].get("controlled_shutdown_incomplete")) \
        == (20.0, 0, 3, None)
    statuses = spark.read.parquet(str(log_dir / "out" / "broker_timeline")).where(
        (F.col("variant") == "shutdown-broker-1") & (F.col("broker_id") == 1)).collect()
    assert [(s["status"], s["seq_from"]) for s in sorted(statuses, key=lambda s: s["seq_from"])
            ] == [("live", 1), ("shutting_down", 6), ("dead", 7), ("live", 8)]
