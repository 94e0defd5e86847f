"""Rows of the right types that cannot be true: each is quarantined with its reason or
raised by the audit, never applied in silence."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from jobs.audit import AuditOptions, run_audit
from jobs.replay.job import main
from jobs.store.tables import read_table
from schemas import event_types as ET
from tests.helpers.event_log import created, ev, failover, write_log

pytestmark = pytest.mark.slow
GOOD = [failover(1, 1, [1, 2, 3]), created(2, "orders", 0, [1, 2, 3]),
        created(2, "orders", 1, [2, 3, 1])]


def replay(events: Path, out: Path, *extra: str) -> int:
    return main(["--events", str(events), "--out", str(out), "--run-id", "r1",
                 "--buckets", "2", *extra])


def reasons(spark: Any, out: Path) -> dict[int, str]:
    rows = read_table(spark, str(out), "quarantine").where(F.col("run_id") == "r1").collect()
    return {r["seq"]: r["reason"] for r in rows}


def test_implausible_rows_are_quarantined_with_their_reason(spark: Any, tmp_path: Path) -> None:
    future = ev(3, ET.ISR_CHANGED, topic="orders", partition=0, isr=[1, 2])
    future["ts"] = datetime(9999, 12, 31, tzinfo=UTC)
    ancient = ev(4, ET.ISR_CHANGED, topic="orders", partition=1, isr=[2, 3])
    ancient["ts"] = datetime(1960, 1, 1, tzinfo=UTC)
    rows = [*GOOD, future, ancient,
            failover(5, 2, []),  # the new controller's own broker left out
            ev(6, ET.ISR_CHANGED, topic="orders", partition=0, isr=[1, 2]),
            ev(6, ET.ISR_CHANGED, topic="orders", partition=0, isr=[1, 3]),  # two events
            ev(7, ET.BROKER_FAILURE, broker_id=3),
            ev(7, ET.TOPIC_DELETION_REQUESTED, topic="orders"),  # two kinds at one seq
            ev(8, ET.ISR_CHANGED, topic="orders", partition=1, isr=[2, 3])]
    write_log(tmp_path / "events", rows)
    assert replay(tmp_path / "events", tmp_path / "out") == 0
    found = reasons(spark, tmp_path / "out")
    assert "implausible ts: after" in found[3]
    assert "implausible ts: before 2011-01-01" in found[4]
    assert found[5] == "brokers of ControllerFailover leave out the new controller"
    assert found[6] == found[7] == "conflicting events at one seq"
    [summary] = read_table(spark, str(tmp_path / "out"), "run_summary").collect()
    assert summary["conflicting_seqs"] == [6, 7]
    assert summary["rows_read"] == summary["rows_applied"] + summary["rows_quarantined"]
    assert summary["rows_quarantined"] == 7
    # The quarantined times (1960 after 9999) are not applied: they run no time backwards.
    assert (summary["ts_backwards_count"], summary["ts_backwards_seqs"]) == (0, [])
    checks = run_audit(spark, str(tmp_path / "out"), "r1", AuditOptions(echo=False))
    assert checks.rows_of("conflicting_events") == 1 and checks.exit_code == 1
    assert checks.rows_of("ts_backwards") == 0


def test_time_running_backwards_is_raised_by_the_audit(spark: Any, tmp_path: Path) -> None:
    stepped = ev(4, ET.ISR_CHANGED, topic="orders", partition=0, isr=[1, 2])
    stepped["ts"] = datetime(2026, 11, 19, tzinfo=UTC)  # a day before seq 3's time
    rows = [*GOOD, ev(3, ET.ISR_CHANGED, topic="orders", partition=1, isr=[2, 3]), stepped]
    write_log(tmp_path / "events", rows)
    assert replay(tmp_path / "events", tmp_path / "out") == 0
    [summary] = read_table(spark, str(tmp_path / "out"), "run_summary").collect()
    assert (summary["ts_backwards_count"], summary["ts_backwards_seqs"]) == (1, [4])
    result = run_audit(spark, str(tmp_path / "out"), "r1", AuditOptions(echo=False))
    assert result.rows_of("ts_backwards") == 1
    assert "time runs backwards" in result.report


@pytest.mark.parametrize("setting", ["[kafka]\nmin_insync_replicas = 0\n",
                                     '[topics."orders"]\nmin_insync_replicas = 0\n'])
def test_min_insync_replicas_below_one_is_refused(tmp_path: Path, capsys: Any,
                                                  setting: str) -> None:
    write_log(tmp_path / "events", GOOD)
    conf = tmp_path / "replay.toml"
    conf.write_text(setting)
    assert replay(tmp_path / "events", tmp_path / "out", "--config", str(conf)) == 2
    assert "min.insync.replicas is an integer of at least 1" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["0", '"8"', "true"])
def test_state_refresh_runs_that_is_not_a_whole_number_of_runs_is_refused(
    tmp_path: Path, capsys: Any, value: str
) -> None:
    write_log(tmp_path / "events", GOOD)
    conf = tmp_path / "replay.toml"
    conf.write_text(f"[replay]\nstate_refresh_runs = {value}\n")
    assert replay(tmp_path / "events", tmp_path / "out", "--config", str(conf)) == 2
    assert "state_refresh_runs" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
