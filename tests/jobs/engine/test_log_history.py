"""The checkpoint's history of the log (`jobs.engine.log_history`): it reads back what it saved,
and a run that stopped between removing the old history and renaming the new one loses
nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jobs.engine.log_history import SavedPlan, compact_activity, load_history, save_history
from jobs.engine.timeline import LogScan
from schemas import event_types as ET
from schemas.state import CLUSTER_BUCKET
from statemachine.events import Event

BUCKETS = 4
EVERY_BUCKET = [CLUSTER_BUCKET, *range(BUCKETS)]
SCAN = LogScan(
    {"east": EVERY_BUCKET, "west": EVERY_BUCKET},
    {
        "east": [
            Event(1, 1_000_000, ET.CONTROLLER_FAILOVER, 1, brokers=(1, 2, 3), source="a:1"),
            Event(7, 7_000_000, ET.BROKER_FAILURE, 2),
        ],
        "west": [],
    },
)
FILES = ["file:/logs/day%201.parquet", "file:/logs/day2.parquet"]
APPLIED = {"default": 42, "west": 7}


def test_history_reads_back_what_it_saved(spark: Any, tmp_path: Path) -> None:
    assert load_history(spark, str(tmp_path), BUCKETS) is None
    save_history(spark, str(tmp_path), FILES, SCAN, APPLIED)
    history = load_history(spark, str(tmp_path), BUCKETS)
    assert history is not None
    assert history.files == frozenset(FILES)
    assert history.scan == SCAN  # lists come back as tuples, ts as microseconds
    assert history.applied_through == APPLIED


def test_history_left_under_its_temporary_name_is_used(spark: Any, tmp_path: Path) -> None:
    save_history(spark, str(tmp_path), FILES, SCAN, APPLIED)
    (tmp_path / "history.json").rename(tmp_path / "history.json.tmp")
    history = load_history(spark, str(tmp_path), BUCKETS)
    assert history is not None and history.scan == SCAN
    # The next save puts it back under its own name.
    save_history(spark, str(tmp_path), FILES[:1], SCAN, {})
    assert (tmp_path / "history.json").is_file()
    assert not (tmp_path / "history.json.tmp").exists()
    again = load_history(spark, str(tmp_path), BUCKETS)
    assert again is not None and again.files == frozenset(FILES[:1])


def test_a_history_from_before_per_cluster_lateness_reads_as_none_applied(
    spark: Any, tmp_path: Path
) -> None:
    save_history(spark, str(tmp_path), FILES, SCAN, APPLIED)
    saved = json.loads((tmp_path / "history.json").read_text())
    del saved["applied_through"]
    (tmp_path / "history.json").write_text(json.dumps(saved))
    (tmp_path / ".history.json.crc").unlink(missing_ok=True)
    history = load_history(spark, str(tmp_path), BUCKETS)
    assert history is not None and history.applied_through == {}


def test_deletion_activity_below_the_bound_is_left_out_broker_events_stay() -> None:
    """The history keeps a cluster's deletion activity from the previous run's horizon on
    (every group with state has replayed past what is below it); the broker and controller
    events, which the timeline tables list, all stay."""
    events = {"east": [
        Event(1, 1, ET.CONTROLLER_FAILOVER, 1, brokers=(1, 2)),
        Event(3, 3, ET.TOPIC_DELETION_REQUESTED, topic="t"),
        Event(4, 4, ET.STOP_REPLICA_RESPONSE, 2, topic="t"),
        Event(5, 5, ET.BROKER_FAILURE, 2),
        Event(9, 9, ET.STOP_REPLICA_RESPONSE, 1, topic="u"),
    ], "west": [Event(2, 2, ET.TOPIC_DELETION_REQUESTED, topic="w")]}
    kept = compact_activity(events, {"east": 9})
    assert [e.seq for e in kept["east"]] == [1, 5, 9]  # the horizon's own activity stays
    assert kept["west"] == events["west"]  # no bound: a cluster new to the history


def test_a_saved_history_keeps_the_plan_and_the_compacted_events(
    spark: Any, tmp_path: Path
) -> None:
    scan = LogScan(SCAN.buckets, {**SCAN.cluster_events, "west": [
        Event(2, 2_000_000, ET.TOPIC_DELETION_REQUESTED, topic="w"),
        Event(8, 8_000_000, ET.BROKER_STARTUP, 4)]})
    save_history(spark, str(tmp_path), FILES, scan, APPLIED, run_id="n3",
                 state_runs=["n2", "n3"], plan=SavedPlan(3, 2, "n2", True),
                 activity_from={"west": 8})
    history = load_history(spark, str(tmp_path), BUCKETS)
    assert history is not None
    assert [e.seq for e in history.scan.cluster_events["west"]] == [8]
    assert (history.state_runs, history.state_cycle, history.state_index,
            history.rollup_from, history.carried) == (("n2", "n3"), 3, 2, "n2", True)
