"""The `incidents` table the replay writes: a hand-made log with hand-derived incidents,
replayed at once and as two nights on a checkpoint (the nights' latest rows are the full
replay's), and the driver's reads of the windows of several runs."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from jobs.engine.incidents_table import read_elections, read_windows, run_incidents, write_incidents
from jobs.replay.job import main
from jobs.store.tables import WRITE_OPTIONS, file_schema
from schemas import event_types as ET
from statemachine.incidents import Election
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


# -- the driver's reads -----------------------------------------------------------------------

S = 1_000_000


def _file(out: Path, table: str, run_id: str, rows: list[dict[str, Any]],
          schema: pa.Schema | None = None) -> None:
    partition = out / table / f"run_id={run_id}"
    partition.mkdir(parents=True, exist_ok=True)
    schema = schema or file_schema(table)
    full = [{name: row.get(name) for name in schema.names} for row in rows]
    pq.write_table(pa.Table.from_pylist(full, schema=schema), partition / "part-0.parquet",
                   **WRITE_OPTIONS)


def _window(topic: str, kind: str, start: int, end: int | None, **kw: Any) -> dict[str, Any]:
    return {"cluster": "east", "topic": topic, "partition": 0, "kind": kind,
            "start_seq": start, "start_ts": datetime.fromtimestamp(start, UTC),
            "end_seq": end, "end_ts": None if end is None else datetime.fromtimestamp(end, UTC),
            "cause_event": ET.BROKER_FAILURE, "cause_broker": 1, **kw}


def test_the_reads_over_runs_roll_up_the_incidents_the_run_touched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # r0: written before `end_broker` and `incident_id` existed; a's window still open.
    old = pa.schema([f for f in file_schema("partition_windows")
                     if f.name not in ("end_broker", "incident_id")])
    _file(out, "partition_windows", "r0", [
        _window("a", "offline", 10, None), _window("a", "under_replicated", 10, None),
        _window("b", "offline", 5, 8)], old)
    _file(out, "partition_windows", "r1", [
        _window("a", "offline", 10, 20, end_event=ET.BROKER_STARTUP, end_broker=1,
                incident_id=10),
        _window("c", "under_min_isr", 15, None, incident_id=15)])
    _file(out, "findings", "r1", [
        {"cluster": "east", "seq": 12, "topic": "a", "partition": 0,
         "kind": "unclean_leader_election"},
        {"cluster": "east", "seq": 12, "topic": "a", "partition": 0, "kind": "election_failed"}])
    runs = ["r0", "r1"]
    fast = (read_windows(str(out), runs), read_elections(str(out), runs))
    assert len(fast[0]) == 4 and fast[1] == [("east", Election(12, "a", 0))]

    found = run_incidents(*fast, "r1", {"east": 30 * S})["east"]
    # b's incident (5) ended in r0 and has nothing in r1: not listed again.
    assert [(i.incident_id, i.end_seq, i.offline_partition_seconds,
             i.under_min_isr_partition_seconds, i.unclean_elections) for i in found] == [
        (10, 20, 10.0, 0.0, 1), (15, None, 0.0, 15.0, 0)]


def test_incidents_read_one_cluster_at_a_time_are_the_same(spark: Any, tmp_path: Path) -> None:
    """`per_cluster` (the what-if's clusters are its variants): the reads keep one
    cluster's rows, and the incidents are those of one read of every cluster."""
    out = tmp_path / "out"
    _file(out, "partition_windows", "r1", [
        _window("a", "offline", 10, 20), _window("b", "offline", 12, None, cluster="west")])
    _file(out, "findings", "r1", [
        {"cluster": "west", "seq": 12, "topic": "b", "partition": 0,
         "kind": "unclean_leader_election"}])
    west = read_windows(str(out), ["r1"], "west")
    assert [(c, w.topic) for c, _, w in west] == [("west", "b")]
    assert read_elections(str(out), ["r1"], "east") == []
    ends = {"east": 30 * S, "west": 30 * S}
    assert write_incidents(str(out), "r1", (), ends, per_cluster=True) == 2
    one_by_one = incidents(spark, out, "r1")
    assert write_incidents(str(out), "r1", (), ends) == 2
    assert incidents(spark, out, "r1") == one_by_one
    assert {i["cluster"]: i["incident_id"] for i in one_by_one.values()} == {
        "east": 10, "west": 12}
