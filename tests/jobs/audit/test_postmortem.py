"""The post-mortem counts what `run_summary` counts: the offline seconds inside the run's
period. A log cut into three nights, with one window across nights 1-2 and one across
2-3, replayed nightly on a checkpoint and in one run: every night's post-mortem says its
run summary's figure, and the nights add up to the one replay.

Times: `ts_of(seq)` is T0 + seq seconds; each night ends with a marker event (seq 20, 40,
60), which is where its period ends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jobs.audit import AuditOptions, AuditResult, run_audit
from jobs.replay.job import main as replay_main
from jobs.store.tables import read_table
from schemas import event_types as ET
from tests.helpers.event_log import created, ev, failover, write_log

# Four replays and four audits: about a minute on two cores.
pytestmark = pytest.mark.slow

# solo-0 [1]: offline from seq 10, when broker 2 takes over from controller 1, whose broker
# died (missing from /brokers/ids), to broker 1's return at seq 30. pair-0 [3]: offline from
# broker 3's failure at seq 35 to its return at seq 50.
NIGHTS = {
    "n1": [
        failover(1, 1, [1, 2, 3]),
        created(2, "solo", 0, [1]),
        created(3, "pair", 0, [3]),
        created(4, "safe", 0, [2, 3]),
        failover(10, 2, [2, 3]),
        ev(20, ET.ISR_CHANGED, topic="safe", partition=0, isr=[2, 3]),
    ],
    "n2": [
        ev(30, ET.BROKER_STARTUP, broker_id=1),
        ev(35, ET.BROKER_FAILURE, broker_id=3),
        ev(40, ET.ISR_CHANGED, topic="safe", partition=0, isr=[2]),
    ],
    "n3": [
        ev(50, ET.BROKER_STARTUP, broker_id=3),
        ev(60, ET.ISR_CHANGED, topic="safe", partition=0, isr=[2, 3]),
    ],
}
# Offline seconds inside each night: solo 10-20 | solo 20-30 + pair 35-40 | pair 40-50.
EXPECTED = {"n1": 10.0, "n2": 15.0, "n3": 10.0}


def replay(events: Path, out: Path, run_id: str, spark: SparkSession, *extra: str) -> None:
    assert replay_main(["--events", str(events), "--out", str(out), "--run-id", run_id,
                        "--buckets", "2", *extra], spark=spark) == 0


def audit(spark: SparkSession, out: Path, run_id: str) -> AuditResult:
    return run_audit(spark, str(out), run_id,
                     AuditOptions(fail_on="never", write=False, echo=False))


def summary(spark: SparkSession, out: Path, run_id: str) -> Any:
    [row] = read_table(spark, str(out), "run_summary").where(
        F.col("run_id") == run_id).collect()
    return row


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, spark: SparkSession) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("postmortem")
    write_log(tmp / "all", [row for rows in NIGHTS.values() for row in rows])
    replay(tmp / "all", tmp / "full", "full", spark)
    events, out = tmp / "events", tmp / "nightly"
    for run_id, rows in NIGHTS.items():
        write_log(events, rows, run_id)  # the night's file arrives
        replay(events, out, run_id, spark, "--checkpoint", str(tmp / "chk"))
    return {
        "full": (summary(spark, tmp / "full", "full"), audit(spark, tmp / "full", "full")),
        **{run_id: (summary(spark, out, run_id), audit(spark, out, run_id))
           for run_id in NIGHTS},
    }


def test_each_nights_post_mortem_is_its_run_summary(runs: dict[str, Any]) -> None:
    for run_id, seconds in EXPECTED.items():
        row, result = runs[run_id]
        [pm] = result.post_mortem
        assert pm.seconds == row["offline_partition_seconds"] == seconds, run_id
        assert pm.period_end == row["period_end"].astimezone(pm.period_end.tzinfo)
        by_broker = {r.key: r.seconds for r in pm.by_cause_broker}
        assert by_broker == {k: v for k, v in row["offline_seconds_by_cause_broker"].items()
                             if v > 0}, run_id


def test_the_nights_add_up_to_one_replay(runs: dict[str, Any]) -> None:
    row, result = runs["full"]
    assert result.post_mortem[0].seconds == row["offline_partition_seconds"] == 35.0
    assert sum(runs[n][1].post_mortem[0].seconds for n in NIGHTS) == 35.0


def test_a_window_from_an_earlier_night_shows_its_seconds_in_this_run(
    runs: dict[str, Any]
) -> None:
    [pm] = runs["n2"][1].post_mortem
    shown = {(w.topic, w.seconds, w.end_ts is None) for w in pm.longest}
    assert shown == {("solo", 10.0, False), ("pair", 5.0, True)}
    assert (pm.windows, pm.still_offline) == (2, 1)
    assert "15.0 partition-seconds offline in this run" in runs["n2"][1].report
    assert "10.0 s in this run" in runs["n2"][1].report


def test_the_dead_controller_broker_carries_its_outage(runs: dict[str, Any]) -> None:
    """solo-0 went offline when the failover found controller 1's broker gone: broker 1,
    not the new controller 2, is its cause, in the run summary and the post-mortem."""
    row, result = runs["full"]
    assert dict(row["offline_seconds_by_cause_broker"]) == {"1": 20.0, "3": 15.0}
    [pm] = result.post_mortem
    assert {r.key: r.seconds for r in pm.by_cause_broker} == {"1": 20.0, "3": 15.0}
    solo = [w for w in pm.longest if w.topic == "solo"]
    assert [(w.cause_event, w.cause_broker) for w in solo] == [(ET.CONTROLLER_FAILOVER, 1)]
