"""The `incidents` table the replay writes: a hand-made log with hand-derived incidents,
replayed at once and as two nights on a checkpoint; the nights' latest rows are the full
replay's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from jobs.replay.job import main
from schemas import event_types as ET
from tests.helpers.event_log import created, ev, failover, write_log

pytestmark = pytest.mark.slow

NIGHT1 = [
    failover(1, 1, [1, 2, 3]),
    created(2, "t", 0, [1]),  # offline from 10 to 21
    created(2, "t", 1, [1, 2]),  # 2 takes over at 10, offline from 11 to 20
    created(3, "u", 0, [2]),  # offline from 11 to 20
    ev(10, ET.BROKER_FAILURE, broker_id=1),
    ev(11, ET.BROKER_FAILURE, broker_id=2),
]
NIGHT2 = [
    ev(20, ET.BROKER_STARTUP, broker_id=2),
    ev(21, ET.BROKER_STARTUP, broker_id=1),
    created(22, "v", 0, [3]),
    ev(23, ET.BROKER_FAILURE, broker_id=3),  # v-0 offline, still at the end
    created(30, "w", 0, [1]),
]
KEY = ("incident_id", "cause_event", "cause_broker", "end_seq", "peak_partitions_offline",
       "partitions_affected", "topics_affected", "offline_partition_seconds",
       "under_min_isr_partition_seconds", "recovery_event", "recovery_broker")


def run(events: Path, out: Path, run_id: str, *extra: str) -> int:
    return main(["--events", str(events), "--out", str(out), "--run-id", run_id,
                 "--buckets", "8", *extra])


def incidents(spark: Any, out: Path, run_id: str) -> dict[int, dict[str, Any]]:
    df = spark.read.parquet(str(out / "incidents")).where(F.col("run_id") == run_id)
    return {r["incident_id"]: r.asDict(recursive=True) for r in df.drop("run_id").collect()}


def test_incidents_of_one_replay_and_of_two_nights(spark: Any, tmp_path: Path) -> None:
    full_events, full_out = tmp_path / "full-events", tmp_path / "full"
    write_log(full_events, NIGHT1, "n1")
    write_log(full_events, NIGHT2, "n2")
    assert run(full_events, full_out, "full") == 0
    full = incidents(spark, full_out, "full")
    assert [tuple(full[i][k] for k in KEY) for i in sorted(full)] == [
        (10, ET.BROKER_FAILURE, 1, 21, 1, 1, 1, 11.0, 11.0, ET.BROKER_STARTUP, 1),
        (11, ET.BROKER_FAILURE, 2, 20, 2, 2, 2, 18.0, 18.0, ET.BROKER_STARTUP, 2),
        # Open: counted up to the last event (seq 30).
        (23, ET.BROKER_FAILURE, 3, None, 1, 1, 1, 7.0, 7.0, None, None),
    ]
    assert full[11]["seconds"] == 9.0 and full[23]["end_ts"] is None
    assert [t["topic"] for t in full[11]["worst_topics"]] == ["t", "u"]
    windows = spark.read.parquet(str(full_out / "partition_windows")) \
        .where(F.col("kind") == "offline").collect()
    assert sorted((w["topic"], w["partition"], w["incident_id"]) for w in windows) == [
        ("t", 0, 10), ("t", 1, 11), ("u", 0, 11), ("v", 0, 23)]

    events, out, chk = tmp_path / "events", tmp_path / "out", tmp_path / "chk"
    write_log(events, NIGHT1, "n1")
    assert run(events, out, "night1", "--checkpoint", str(chk)) == 0
    night1 = incidents(spark, out, "night1")
    assert sorted(night1) == [10, 11]
    assert {night1[i]["end_seq"] for i in night1} == {None}  # both open at its end
    write_log(events, NIGHT2, "n2")
    assert run(events, out, "night2", "--checkpoint", str(chk)) == 0
    night2 = incidents(spark, out, "night2")
    assert sorted(night2) == [10, 11, 23]
    assert {**night1, **night2} == full
