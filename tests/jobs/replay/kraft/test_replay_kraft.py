"""A KRaft log end to end (one Spark session for the file): segments written by the test
encoder (tests/helpers/kraft_segments.py: a fence and an unfence, a topic created and
deleted) -> `jobs.ingest` -> `jobs.replay` -> `jobs.audit` -> `jobs.report`, against the
hand derivations in that history's comments."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from jobs.audit.job import main as audit
from jobs.ingest import job as ingest
from jobs.replay.job import main as replay
from jobs.report.job import main as report
from jobs.whatif.job import main as whatif
from schemas.tables import KRAFT_TABLES, TABLES
from tests.helpers.kraft_segments import write_segments
from tests.helpers.same_tables import assert_same_tables


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("kraft")
    write_segments(tmp / "logs")
    assert ingest.main(["--logs", str(tmp / "logs"), "--out", str(tmp / "ingest"),
                        "--cluster", "k1"], spark=spark) == 0
    out = tmp / "tables"
    assert replay(["--events", str(tmp / "ingest"), "--out", str(out), "--run-id", "r1",
                   "--kafka-version", "3.7"], spark=spark) == 0
    return out


def test_folded_on_the_driver_the_tables_are_the_same(spark: Any, tables: Path) -> None:
    """The run above folds by (cluster, topic bucket) in Spark tasks (the default), the
    core's objects pickled to and from the Python workers: `--kraft-fold driver`, every
    cluster folded whole on the driver, gives the same rows."""
    assert len(list((tables / "partition_states" / "run_id=r1").glob("part-k*.parquet"))) >= 1
    out = tables.parent / "driver"
    assert replay(["--events", str(tables.parent / "ingest"), "--out", str(out),
                   "--run-id", "r1", "--kafka-version", "3.7", "--kraft-fold", "driver"],
                  spark=spark) == 0
    assert not list((out / "partition_states" / "run_id=r1").glob("part-k*.parquet"))
    assert_same_tables(out, tables, [*TABLES, *KRAFT_TABLES], ["r1"])


def _rows(spark: Any, out: Path, table: str) -> list[Any]:
    return spark.read.parquet(str(out / table)).collect()


def test_every_table_has_the_runs_partition_in_its_schema(spark: Any, tables: Path) -> None:
    for table, schema in {**TABLES, **KRAFT_TABLES}.items():
        df = spark.read.parquet(str(tables / table))
        assert sorted(df.schema.fieldNames()) == sorted(schema.fieldNames()), table
        assert {r.run_id for r in df.select("run_id").distinct().collect()} <= {"r1"}
    # The ZooKeeper-only tables exist and are empty.
    for table in ("state_changes", "leader_and_isr_requests", "quarantine"):
        assert spark.read.parquet(str(tables / table)).count() == 0


def test_windows_incident_and_summary(spark: Any, tables: Path) -> None:
    offline = [(w.topic, w.partition, w.start_seq, w.end_seq, w.seconds, w.cause_event,
                w.cause_broker, w.incident_id)
               for w in _rows(spark, tables, "partition_windows") if w.kind == "offline"]
    # p1's own records (13: leader -1; 17: its election), of the fence's incident (14).
    assert offline == [("orders", 1, 13, 17, 120.0, "FenceBrokerRecord", 1, 14)]
    [i] = _rows(spark, tables, "incidents")
    assert (i.incident_id, i.cause_broker, i.end_seq, i.seconds, i.offline_partition_seconds,
            i.recovery_event) == (14, 1, 17, 120.0, 120.0, "UnfenceBrokerRecord")
    [s] = _rows(spark, tables, "run_summary")
    assert (s.rows_read, s.rows_applied, s.offline_partition_seconds) == (23, 18, 120.0)
    skipped = {k: v for k, v in s.findings_by_kind.items() if k.startswith("skipped:")}
    assert s.rows_read == s.rows_applied + sum(skipped.values())
    assert skipped["skipped:NoOpRecord"] == 3
    assert s.offline_seconds_by_cause_broker == {"1": 120.0}
    writes = _rows(spark, tables, "metadata_writes")
    assert len(writes) == 18 and s.rows_written["metadata_writes"] == 18
    changes = {c["change"]: c["count"] for c in _rows(spark, tables, "changes")}
    assert (changes["topic_created"], changes["topic_deleted"], changes["broker_fenced"],
            changes["broker_unfenced"]) == (2, 1, 1, 4)
    brokers = sorted((b.broker_id, b.status, b.seq_from, b.seq_to)
                     for b in _rows(spark, tables, "broker_timeline") if b.broker_id == 1)
    assert brokers == [(1, "dead", 2, 3), (1, "dead", 14, 16), (1, "live", 3, 14),
                       (1, "live", 16, None)]


def test_the_audit_verdict(spark: Any, tables: Path, tmp_path: Path) -> None:
    # Warnings only: orders-1 has ISR [1] = min.insync.replicas 1, and broker 1 is the
    # preferred replica of orders-0 and orders-1 but leads only orders-1 (50% > 10%).
    verdict = tmp_path / "v.json"
    assert audit(["--tables", str(tables), "--verdict-json", str(verdict)], spark=spark) == 0
    doc = json.loads(verdict.read_text())
    assert doc["verdict"] == "PASS"
    assert audit(["--tables", str(tables), "--fail-on", "warning"], spark=spark) == 1
    checks = {r.check: r.severity for r in spark.read.parquet(str(tables / "audit_checks"))
              .where("run_id = 'r1'").collect() if r.severity != "ok"}
    # And orders-1 was offline for 120 s during the run, back by its end.
    assert checks == {"at_min_isr_partition": "warning", "leader_imbalance": "warning",
                      "offline_during_run": "warning"}


def test_the_report(tables: Path, tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    assert report(["--tables", str(tables), "--out", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert 'data-peak-offline="1"' in html
    table = re.search(r'<table id="worst-topics">.*?</table>', html, re.DOTALL)
    assert table and re.findall(r'data-topic="([^"]+)" data-seconds="([^"]+)"',
                                table.group(0)) == [("orders", "120.000")]
    assert "FenceBrokerRecord" in html


def test_replay_with_audit_exits_with_the_verdict(spark: Any, tables: Path,
                                                  tmp_path: Path) -> None:
    # The same two warnings as above: `--fail-on warning` fails the run, and the
    # verdict file says so.
    verdict = tmp_path / "v.json"
    rc = replay(["--events", str(tables.parent / "ingest"), "--out", str(tmp_path / "t"),
                 "--run-id", "r2", "--audit", "--fail-on", "warning", "--verdict-json",
                 str(verdict)], spark=spark)
    assert rc == 1
    assert json.loads(verdict.read_text())["verdict"] == "FAIL"


def test_a_plan_checked_against_the_kraft_replays_state(tables: Path, tmp_path: Path) -> None:
    """`jobs.whatif --from-state` on this replay's own tables (no replay again). At the end
    brokers 1-3 are live, orders-0 is [1, 2] led by 2 with ISR [2, 1], orders-1 is [1] led
    by 1. With min ISR 2: failing 2 (`handleBrokerFenced`) leaves orders-0 led by 1 with
    ISR [1]: under min ISR at step 1; shutting 1 down then leaves neither partition a live
    ISR member: both offline at step 2; restarting 2 comes too late (2 is not in orders-0's
    ISR, no clean election). Restarting 2 before shutting 1 down gives orders-0 its ISR
    [1, 2] back, and the controlled shutdown then moves its leadership to 2: that reorder is
    the advice. No reorder saves orders-1, whose one replica is 1: moving it first to 3, the
    broker the plan keeps alive, does (3.7.0 `changePartitionReassignment`: replicas
    [3, 1], adding [3], removing [1]; leader 1's AlterPartition with 3 caught up completes
    it, and 1, being removed, hands the leadership to 3)."""
    plan = tmp_path / "k.toml"
    plan.write_text('[settings]\nmin_insync_replicas = 2\n'
                    '[[step]]\naction = "fail"\nbrokers = [2]\n'
                    '[[step]]\naction = "shutdown"\nbrokers = [1]\n'
                    '[[step]]\naction = "restart"\nbrokers = [2]\n')
    assert whatif(["--from-state", str(tables), "--plan", str(plan), "--out",
                   str(tmp_path / "plan")]) == 1
    rows = pq.read_table(tmp_path / "plan" / "plan_check" / "run_id=k").to_pylist()
    assert {r["mode"] for r in rows} == {"kraft"}
    assert [(r["step"], r["topic"], r["partition"], r["finding"]) for r in rows] == [
        (2, "orders", 0, "offline"), (2, "orders", 1, "offline"),
        (1, "orders", 0, "under_min_isr")]
    assert str(rows[0]["advice"]).startswith(
        "move step 3 (restart broker 2) before step 2 (shutdown broker 1)")
    assert str(rows[1]["advice"]).startswith(
        "before step 1, reassign orders-1 to [3]: replica 1 moves to broker 3")
