"""`invariant_violation` and `invalid_transition` on hand-made tables: the replay never
writes a broken invariant, so the rows that break one are written here directly."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from jobs.audit.activity import invalid_transition
from jobs.audit.extract import AUDITED_TABLES, read_inputs
from jobs.audit.invariants import invariant_violation
from schemas.tables import TABLES


def row(table: str, **values: Any) -> tuple[Any, ...]:
    values = {"cluster": "default", "run_id": "r1", **values}
    return tuple(values.get(f.name) for f in TABLES[table].fields)


def ts(seq: int) -> datetime:
    return datetime(2026, 11, 20, 0, 0, seq)


def um(topic: str, seq: int, leader: int, epoch: int, isr: list[int], replicas: list[int],
       batch: int = 0) -> tuple[Any, ...]:
    return row("update_metadata_requests", topic=topic, partition=0, seq=seq, ts=ts(seq),
               batch=batch, leader=leader, leader_epoch=epoch, isr=isr, replicas=replicas)


def state(topic: str, leader: int, isr: list[int], replicas: list[int]) -> tuple[Any, ...]:
    return row("partition_states", topic=topic, partition=0, state="OnlinePartition",
               leader=leader, leader_epoch=0, isr=isr, replicas=replicas, adding_replicas=[],
               removing_replicas=[], queued_for_deletion=False, last_seq=9)


ROWS: dict[str, list[tuple[Any, ...]]] = {
    "partition_states": [
        state("leaderless-isr", 1, [2, 3], [1, 2, 3]),  # leader 1 not in its ISR
        state("wide-isr", 1, [1, 4], [1, 2]),  # 4 is not a replica
        state("fine", 1, [1, 2], [1, 2]),
    ],
    "update_metadata_requests": [
        um("epoch-down", 1, 1, 0, [1], [1]), um("epoch-down", 2, 1, 3, [1], [1]),
        um("epoch-down", 3, 1, 2, [1], [1]),  # 3 -> 2
        # deleted (LeaderDuringDelete, epoch 0) and created again at seq 4: from 0 again
        um("recreated", 1, 1, 5, [1], [1]), um("recreated", 2, -2, 0, [1], [1]),
        um("recreated", 4, 1, 0, [1], [1]),
        # one event of a reassignment: the new assignment with the old ISR, then the ISR
        um("reassigned", 5, 1, 1, [1, 2, 3], [1, 2], batch=0),
        um("reassigned", 5, 1, 2, [1, 2], [1, 2], batch=1),
    ],
    "state_changes": [
        row("state_changes", seq=4, ts=ts(4), step=0, topic="recreated", partition=0,
            machine="partition", from_state="NonExistentPartition", to_state="NewPartition",
            outcome="applied"),
        *[row("state_changes", seq=s, ts=ts(s), step=0, topic="skipped", partition=0,
              broker_id=2, machine="replica", from_state="OnlineReplica",
              to_state="NewReplica", outcome="rejected", reason="Replica 2 ... should be in")
          for s in (6, 7)],
        # a failed election is no invalid transition: the matrix allows it
        row("state_changes", seq=8, ts=ts(8), step=1, topic="unelected", partition=0,
            machine="partition", from_state="OfflinePartition", to_state="OnlinePartition",
            outcome="failed", reason="Failed to elect leader for partition unelected-0"),
    ],
    "controller_timeline": [row("controller_timeline", controller_id=1, controller_epoch=1,
                                seq=1, ts=ts(1), live_brokers=[1, 2, 3])],
}


def write_tables(spark: SparkSession, out: Path) -> None:
    for table in AUDITED_TABLES:
        df = spark.createDataFrame(ROWS.get(table, []), TABLES[table])
        df.write.mode("overwrite").partitionBy("run_id").parquet(str(out / table))
        if not ROWS.get(table):  # an empty frame writes no run_id= directory
            body = [f for f in TABLES[table].fields if f.name != "run_id"]
            spark.createDataFrame([], TABLES[table].__class__(body)).write.mode("overwrite") \
                .parquet(str(out / table / "run_id=r1"))


def test_invariants_and_invalid_transitions(spark: SparkSession, tmp_path: Path) -> None:
    write_tables(spark, tmp_path)
    inputs = read_inputs(spark, str(tmp_path), "r1")
    found = sorted((r["topic"], r["detail"].split(":")[0]) for r in
                   invariant_violation(inputs).collect())
    assert found == [("epoch-down", "leader_epoch_decreased"),
                     ("leaderless-isr", "leader_not_in_isr"),
                     ("wide-isr", "isr_outside_assignment")]
    invalid = invalid_transition(inputs).collect()
    assert [(r["topic"], r["broker_id"], r["severity"]) for r in invalid] == [
        ("skipped", 2, "warning")]
    assert invalid[0]["detail"].startswith(
        "2 invalid replica transition(s) OnlineReplica -> NewReplica, first at seq 6")
