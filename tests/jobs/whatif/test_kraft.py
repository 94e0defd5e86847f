"""`python -m jobs.whatif` on a KRaft log: the segments of tests/helpers/kraft_segments.py
(brokers 1-3; `orders` p0 [1,2] led by 1, p1 [1] alone; broker 1 fenced at 60 s (offsets
12-14) and unfenced at 180 s (16-17); p0's ISR back to [2,1] at 190 s (18); topic `tmp`
[2,3] created at 200 s (19-20) and removed at 240 s (21), the last record) ingested, then
one what-if run, on the 3.7 profile, derived by hand (seconds after the log's start; an
open window counts up to 240 s):

* baseline: p1 offline 60-180: 120 partition-seconds;
* fail-broker-1 (fenced at 10 s, held dead): p1 offline 10-240: 230; the log's fence and
  unfence of 1 with their partition changes dropped (5), the ISR change at 190 naming 1
  no longer applies;
* fail-broker-2: p0's ISR shrinks to [1]; the log's fence of 1 at 60 s, re-decided, leaves
  p0 and p1 without a leader until the re-decided unfence at 180 s: 2 x 120 = 240, 2 at
  once; `tmp` is created with ISR [3] (2 is not active);
* fail-broker-3: no partition of broker 3 before `tmp`: the baseline's 120;
* shutdown-broker-N: the controlled shutdown, then the fence: the same windows as
  fail-broker-N;
* fail-2-at-185 (broker 2 fenced after 1 is back, before it rejoins p0's ISR): p0's only
  ISR member is 2: offline 185-240, with the baseline's 120: 175;
  fail-2-at-185-unclean: broker 1 is elected uncleanly: the baseline's 120, 1 unclean;
* no-fence (drop offset 14, the log's fence of 1): its operation goes, p1 never offline: 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobs.engine.kraft.metadata_source import find_kraft_input, read_clusters
from jobs.engine.kraft.pipeline import FOLD_TABLES, profile_of
from jobs.ingest import job as ingest
from jobs.whatif.job import main
from jobs.whatif.kraft.plan import resolve
from jobs.whatif.kraft.run import FoldSettings, baseline_tasks, fold_task, variant_tasks
from jobs.whatif.plan import composite
from jobs.whatif.scenario import load_scenario
from schemas.whatif import WHATIF_IMPACT
from tests.helpers.same_tables import assert_same_tables

pytestmark = pytest.mark.slow

AT = "2023-11-14T22:13:30Z"  # the log's start (tests/helpers/kraft_segments.py) + 10 s
AT_185 = "2023-11-14T22:16:25Z"
SCENARIO = f"""
[sweep]
fail_each_broker = {{ at = "{AT}" }}
shutdown_each_broker = {{ at = "{AT}" }}

[[variant]]
name = "fail-2-at-185"
inject = [{{ at = "{AT_185}", event_type = "BrokerFailure", broker_id = 2 }}]

[[variant]]
name = "fail-2-at-185-unclean"
inject = [{{ at = "{AT_185}", event_type = "BrokerFailure", broker_id = 2 }}]
config = {{ unclean_leader_election_enable = true }}

[[variant]]
name = "no-fence"
drop = [{{ seq = 14 }}]
"""


@pytest.fixture(scope="module")
def ingested(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.helpers.kraft_segments import write_segments

    tmp = tmp_path_factory.mktemp("kraft-whatif")
    write_segments(tmp / "logs")
    assert ingest.main(["--logs", str(tmp / "logs"), "--out", str(tmp / "ingest"),
                        "--cluster", "k1"], spark=spark) == 0
    return tmp / "ingest"


@pytest.fixture(scope="module")
def out(spark: Any, ingested: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kraft-whatif-out")
    scenario = root / "kraft.toml"
    scenario.write_text(SCENARIO)
    assert main(["--events", str(ingested), "--scenario", str(scenario),
                 "--out", str(root / "out"), "--kafka-version", "3.7"], spark=spark) == 0
    return root / "out"


def impact(spark: Any, out: Path) -> dict[str, Any]:
    return {r.variant: r for r in spark.read.schema(WHATIF_IMPACT)
            .parquet(str(out / "whatif_impact")).collect()}


def test_the_ranking_follows_the_election_rules(spark: Any, out: Path) -> None:
    rows = impact(spark, out)
    ranked = [(v, r.offline_partition_seconds, r.max_partitions_offline_at_once)
              for v, r in sorted(rows.items(), key=lambda kv: kv[1].rank)]
    assert ranked == [
        ("fail-broker-2", 240.0, 2), ("shutdown-broker-2", 240.0, 2),
        ("fail-broker-1", 230.0, 1), ("shutdown-broker-1", 230.0, 1),
        ("fail-2-at-185", 175.0, 1), ("baseline", 120.0, 1),
        ("fail-2-at-185-unclean", 120.0, 1), ("fail-broker-3", 120.0, 1),
        ("shutdown-broker-3", 120.0, 1), ("no-fence", 0.0, 0)]
    assert rows["fail-2-at-185-unclean"].unclean_elections == 1
    assert rows["fail-2-at-185"].unclean_elections == 0
    assert rows["fail-broker-1"].offline_partition_seconds_vs_baseline == 110.0


def test_the_edits_are_counted(spark: Any, out: Path) -> None:
    rows = impact(spark, out)
    one = rows["fail-broker-1"]
    assert (one.events_dropped, one.events_injected, one.events_edited,
            one.events_no_longer_applying) == (5, 3, 0, 1)
    # Broker 2: the fence's ISR shrink and the fence; the log's fence and unfence of 1
    # re-decided (their 3 partition changes) and `tmp` created without it.
    two = rows["fail-broker-2"]
    assert (two.events_dropped, two.events_injected, two.events_edited) == (0, 2, 4)
    assert (rows["no-fence"].events_dropped, rows["no-fence"].events_edited) == (3, 1)
    assert rows["baseline"].events_dropped == 0 and not rows["baseline"].same_as_baseline


def test_the_request_figures_do_not_apply_to_a_kraft_log(spark: Any, out: Path) -> None:
    """A KRaft controller sends no LeaderAndIsr, UpdateMetadata or StopReplica: the figures
    read from them are null for every variant, never a 0 that reads as "none sent"."""
    rows = impact(spark, out).values()
    assert {(r.topics_losing_only_isr, r.leader_and_isr_requests, r.update_metadata_requests,
             r.stop_replica_requests) for r in rows} == {(None, None, None, None)}
    assert all(r.offline_partition_seconds is not None for r in rows)


def test_the_variant_tables(spark: Any, out: Path) -> None:
    windows = spark.read.parquet(str(out / "partition_windows"))
    offline = sorted((r.variant, r.topic, r.partition, r.cause_event, r.cause_broker)
                     for r in windows.where("kind = 'offline'").collect()
                     if r.variant in ("fail-broker-1", "shutdown-broker-1"))
    assert offline == [("fail-broker-1", "orders", 1, "FenceBrokerRecord", 1),
                       ("shutdown-broker-1", "orders", 1,
                        "BrokerRegistrationChangeRecord(in controlled shutdown)", 1)]
    states = {(r.variant, r.topic, r.partition): (r.leader, list(r.isr))
              for r in spark.read.parquet(str(out / "partition_states")).collect()}
    assert states[("fail-broker-1", "orders", 0)] == (2, [2])
    assert states[("baseline", "orders", 0)] == (2, [2, 1])
    assert states[("fail-2-at-185-unclean", "orders", 0)] == (1, [1])


def test_a_kraft_what_if_refuses_what_has_no_kraft_counterpart(
        spark: Any, ingested: Path, tmp_path: Path, capsys: Any) -> None:
    scenario = tmp_path / "bad.toml"
    scenario.write_text(f"""
[[variant]]
name = "isr"
inject = [{{ at = "{AT}", event_type = "IsrChanged", topic = "orders", partition = 0, \
isr = [1] }}]
""")
    assert main(["--events", str(ingested), "--scenario", str(scenario),
                 "--out", str(tmp_path / "out")], spark=spark) == 2
    assert "IsrChanged has no KRaft counterpart" in capsys.readouterr().err
    scenario.write_text("""
[[variant]]
name = "elr"
inject = []
config = { eligible_leader_replicas_enable = true }
""")
    assert main(["--events", str(ingested), "--scenario", str(scenario),
                 "--out", str(tmp_path / "out")], spark=spark) == 2
    assert "needs the 4.0 profile" in capsys.readouterr().err


def test_the_variants_fold_alike_however_they_are_dealt_to_tasks(
        ingested: Path, tmp_path: Path) -> None:
    """The executors' tasks (run here in the test's process) write the same rows whether
    one task folds every variant, as the driver did, or four share them."""
    kraft = find_kraft_input(str(ingested))
    assert kraft is not None
    (tmp_path / "kraft.toml").write_text(SCENARIO)
    clusters = read_clusters(kraft)
    variants = resolve(load_scenario(str(tmp_path / "kraft.toml")), clusters,
                       profile_of("3.7"), 1)
    for slots in (1, 4):
        settings = FoldSettings(profile_of("3.7"), 1, {}, str(tmp_path / f"s{slots}"), "r")
        first = [fold_task(t) for t in baseline_tasks(kraft, clusters, settings, True)]
        tasks = variant_tasks(kraft, {r.cluster: r.anchors or {} for r in first}, variants,
                              slots, settings)
        assert len(tasks) == slots
        folded = [f.key for r in first + [fold_task(t) for t in tasks] for f in r.folded]
        assert sorted(folded) == sorted(composite("k1", name) for name in
                                        ["baseline", *(v.name for v in variants)])
    assert_same_tables(tmp_path / "s4", tmp_path / "s1",
                       (*FOLD_TABLES, "incidents", "changes"), ["r"])
