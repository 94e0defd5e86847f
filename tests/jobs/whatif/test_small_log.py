"""One what-if run on the small hand-made log (conftest.py): a `fail_each_broker` sweep at
T0 + 40 s, and broker 2 failing at the same time with unclean leader election enabled for
the cluster (`unclean-all`) or for topic `b` only (`unclean-b`).

Offline partition-seconds by hand (an open window counts up to the log's last event,
T0 + 100 s; the injected failure is at T0 + 40 s, after seq 11, so 60 s per partition):

* fail-broker-1: a-0, a-1, a-2 lose their only in-sync replica: 3 x 60 = 180, 3 at once;
* fail-broker-2: b-0 and e-0: 2 x 60 = 120, 2 at once;
* fail-broker-3: c-0 (one replica): 60, 1 at once;
* unclean-b: b-0 is elected uncleanly (broker 3), e-0 stays offline: 60, 1 unclean;
* unclean-all: both are elected uncleanly: 0, 2 unclean elections;
* baseline: 0.

Ties rank by name: fail-broker-3 before unclean-b, baseline before unclean-all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from jobs.store.variant_rows import read_variant_table
from jobs.whatif.job import main
from schemas.whatif import WHATIF_IMPACT, WHATIF_TABLES

pytestmark = pytest.mark.slow

AT = "2026-11-20T00:00:40Z"
SCENARIO = f"""
[sweep]
fail_each_broker = {{ at = "{AT}" }}

[[variant]]
name = "unclean-all"
inject = [{{ at = "{AT}", event_type = "BrokerFailure", broker_id = 2 }}]
config = {{ unclean_leader_election_enable = true }}

[[variant]]
name = "unclean-b"
inject = [{{ at = "{AT}", event_type = "BrokerFailure", broker_id = 2 }}]
topic_config = {{ "b" = {{ unclean_leader_election_enable = true }} }}
"""


@pytest.fixture(scope="module")
def out(spark: Any, small_log: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("whatif-small")
    scenario = root / "small.toml"
    scenario.write_text(SCENARIO)
    assert main(["--events", str(small_log), "--scenario", str(scenario),
                 "--out", str(root / "out"), "--buckets", "2"], spark=spark) == 0
    return root / "out"


def impact(spark: Any, out: Path) -> dict[str, Any]:
    df = spark.read.parquet(str(out / "whatif_impact"))
    assert df.where(F.col("run_id") == "small").count() == 6
    return {r["variant"]: r for r in df.collect()}


def test_sweep_ranks_the_only_isr_of_most_partitions_first(spark: Any, out: Path) -> None:
    rows = impact(spark, out)
    got = {v: (r["rank"], r["offline_partition_seconds"], r["max_partitions_offline_at_once"],
               r["partitions_offline_at_end"], r["topics_losing_only_isr"],
               r["unclean_elections"]) for v, r in rows.items()}
    assert got == {
        "fail-broker-1": (1, 180.0, 3, 3, 1, 0),
        "fail-broker-2": (2, 120.0, 2, 2, 2, 0),
        "fail-broker-3": (3, 60.0, 1, 1, 1, 0),
        "unclean-b": (4, 60.0, 1, 1, 1, 1),
        "baseline": (5, 0.0, 0, 0, 0, 0),
        "unclean-all": (6, 0.0, 0, 0, 0, 2),
    }
    assert rows["fail-broker-1"]["offline_partition_seconds_vs_baseline"] == 180.0
    assert rows["unclean-all"]["unclean_elections_vs_baseline"] == 2
    assert rows["unclean-all"]["findings_by_kind"] == {"unclean_leader_election": 2}


def test_unclean_config_and_topic_config(spark: Any, out: Path) -> None:
    diff = spark.read.parquet(str(out / "whatif_partition_diff"))
    cells = {(r["variant"], r["topic"], r["partition"], r["field"]): (r["baseline"], r["value"])
             for r in diff.where(F.col("variant").startswith("unclean")).collect()}
    # Cluster-wide: both partitions of broker 2 move to broker 3, online.
    assert cells[("unclean-all", "b", 0, "leader")] == ("2", "3")
    assert cells[("unclean-all", "e", 0, "leader")] == ("2", "3")
    assert ("unclean-all", "e", 0, "state") not in cells
    # Topic b only: e-0 stays offline (no leader), as with no override.
    assert cells[("unclean-b", "b", 0, "isr")] == ("[2]", "[3]")
    assert cells[("unclean-b", "e", 0, "state")] == ("OnlinePartition", "OfflinePartition")
    # a and c never had a replica on broker 2; d was created while broker 2 was dead.
    assert {topic for (_, topic, _, _) in cells} == {"b", "d", "e"}
    assert cells[("unclean-b", "d", 0, "isr")] == ("[1,2,3]", "[1,3]")


def test_tables_carry_the_variant_after_the_cluster(spark: Any, out: Path) -> None:
    for table in ("partition_states", "findings", "run_summary", "broker_timeline"):
        df = read_variant_table(spark, str(out), table, "small")
        assert df.columns == WHATIF_TABLES[table].fieldNames()
        assert df.columns[:3] == ["cluster", "variant", "run_id"]
        assert {r["cluster"] for r in df.select("cluster").distinct().collect()} == {"default"}
    impact_df = spark.read.parquet(str(out / "whatif_impact"))
    assert sorted(impact_df.columns) == sorted(WHATIF_IMPACT.fieldNames())
    findings = read_variant_table(spark, str(out), "findings", "small").where(
        F.col("kind") == "unclean_leader_election")
    assert {(r["variant"], r["topic"], r["seq"]) for r in findings.collect()} == {
        ("unclean-all", "b", 12), ("unclean-all", "e", 12), ("unclean-b", "b", 12)}
