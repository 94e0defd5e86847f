"""The audit on the simulated sample log (`jobs.sim`, preset `sample`, seed 1), replayed in
three incremental runs over one checkpoint:

    r1  events up to seq 800: broker 6 failed at seq 701, its sole-ISR partitions are
        offline at the end -> unavailable_partition, exit 1 with --fail-on critical
    r2  up to seq 1000: broker 6 came back at seq 857, nothing critical -> exit 0
    r3  the rest: every run's windows reconcile with every run's state changes
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jobs.audit import AuditOptions, run_audit
from jobs.audit.load import read_checks
from jobs.replay.job import main as replay_main
from jobs.store.tables import read_table

pytestmark = pytest.mark.slow

CUTS = (("r1", 800), ("r2", 1000), ("r3", None))


def split_log(source: Path, target: Path) -> list[Path]:
    """The sample's rows in three files of consecutive seqs, one per run."""
    table = ds.dataset(str(source), format="parquet").to_table()
    seq = table.column("seq").to_pylist()
    files, low = [], -1
    for run_id, high in CUTS:
        keep = [low < s <= (high if high is not None else s) for s in seq]
        path = target / f"{run_id}.parquet"
        pq.write_table(table.filter(keep), path)
        files.append(path)
        low = high if high is not None else low
    return files


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, spark: SparkSession,
         sample_log: Path) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("sample-audit")
    staging, events, out = tmp / "staging", tmp / "events", tmp / "tables"
    staging.mkdir()
    events.mkdir()
    results = {}
    for (run_id, _), piece in zip(CUTS, split_log(sample_log, staging), strict=True):
        piece.rename(events / piece.name)  # the next day's file arrives
        assert replay_main(["--events", str(events), "--out", str(out), "--run-id", run_id,
                            "--checkpoint", str(tmp / "checkpoint")], spark=spark) == 0
        results[run_id] = run_audit(spark, str(out), run_id, AuditOptions(fail_on="critical"))
    return {"out": out, "results": results}


def test_a_partition_left_offline_fails_the_run(runs: dict[str, Any],
                                                spark: SparkSession) -> None:
    result = runs["results"]["r1"]
    assert (result.verdict, result.exit_code) == ("FAIL", 1)
    offline = read_checks(spark, str(runs["out"])).where(
        "run_id = 'r1' AND check = 'unavailable_partition'").collect()
    assert len(offline) == result.rows_of("unavailable_partition") > 0
    assert {r["broker_id"] for r in offline} == {6}  # BrokerFailure of broker 6 at seq 701
    assert result.post_mortem[0].still_offline >= len(offline)


def test_a_run_that_ends_healthy_passes(runs: dict[str, Any]) -> None:
    result = runs["results"]["r2"]
    assert (result.verdict, result.exit_code) == ("PASS", 0)
    assert result.rows_of("unavailable_partition") == 0


def test_windows_reconcile_with_state_changes(runs: dict[str, Any],
                                              spark: SparkSession) -> None:
    """Every applied transition to OfflinePartition lies in an offline window of its
    partition (every run's closed windows and the last run's open ones), unless the same
    event elected a leader again or the topic was being deleted (the windows are closed
    while a topic is queued for deletion)."""
    out = str(runs["out"])
    windows = read_table(spark, out, "partition_windows")
    windows = windows.where(F.col("end_seq").isNotNull() | (F.col("run_id") == "r3"))
    key = ["cluster", "topic", "partition"]
    changes = read_table(spark, out, "state_changes").where(
        "machine = 'partition' AND outcome = 'applied'")
    offline = changes.where("to_state = 'OfflinePartition'").select(*key, "seq", "step")
    online_again = changes.where("to_state = 'OnlinePartition'").select(
        *key, "seq", F.col("step").alias("online_step"))
    re_elected = offline.join(online_again, [*key, "seq"]) \
        .where("online_step > step").select(*key, "seq")

    def covered(kind: str) -> Any:
        w = windows.where(F.col("kind") == kind).select(*key, "start_seq", "end_seq")
        return offline.join(w, key).where(
            (F.col("start_seq") <= F.col("seq"))
            & (F.col("end_seq").isNull() | (F.col("end_seq") > F.col("seq")))
        ).select(*key, "seq")

    unexplained = offline.select(*key, "seq").subtract(covered("offline")) \
        .subtract(re_elected).subtract(covered("deleting"))
    assert offline.count() > 0
    assert unexplained.collect() == []


def test_each_runs_post_mortem_counts_what_its_run_summary_counts(
    runs: dict[str, Any], spark: SparkSession
) -> None:
    """Windows straddle the cuts; each run's post-mortem counts only its part of them, as
    `run_summary` does, per run and per cause broker."""
    summaries = {r["run_id"]: r for r in read_table(spark, str(runs["out"]), "run_summary")
                 .collect()}
    for run_id, result in runs["results"].items():
        [pm] = result.post_mortem
        row = summaries[run_id]
        assert pm.seconds == pytest.approx(row["offline_partition_seconds"], abs=1e-3), run_id
        by_broker = dict(row["offline_seconds_by_cause_broker"])
        for r in pm.by_cause_broker:  # the same keys: `none` is a topic or partition event
            assert r.seconds == pytest.approx(by_broker[r.key], abs=1e-3), (run_id, r.key)
    assert sum(row["offline_partition_seconds"] for row in summaries.values()) > 0
