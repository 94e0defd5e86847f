"""`jobs.replay --initial-state`: partitions that existed before the log, seeded from a
`kafka-topics --describe` output (read by `jobs.ingest.snapshot`) before the first event."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from jobs.engine.initial_state import InitialStateError, read_initial_state, seed_rows
from jobs.replay.job import main
from jobs.store.latest_state import read_state
from schemas import event_types as ET
from schemas.events import EVENT_COLUMNS
from tests.helpers.event_log import ev, failover, ts_of, write_log

DESCRIBE = ("Topic: old\tPartitionCount: 2\tReplicationFactor: 3\t"
            "Configs: unclean.leader.election.enable=true\n"
            "\tTopic: old\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n"
            "\tTopic: old\tPartition: 1\tLeader: 3\tReplicas: 3,1,2\tIsr: 3\n")
LOG = [failover(1, 1, [1, 2, 3]), ev(2, ET.BROKER_FAILURE, broker_id=1)]


def _describe(tmp_path: Path, text: str = DESCRIBE) -> Path:
    path = tmp_path / "describe.txt"
    path.write_text(text)
    return path


def test_describe_output_becomes_snapshot_rows(tmp_path: Path) -> None:
    seed = read_initial_state([str(_describe(tmp_path))])
    rows = [dict(zip(EVENT_COLUMNS, r, strict=True))
            for r in seed_rows(seed, "c", 0, ts_of(1))]
    assert [(r["event_type"], r["topic"], r["partition"], r["replicas"], r["leader"], r["isr"],
             r["leader_epoch"], r["unclean_leader_election"], r["seq"]) for r in rows] == [
        (ET.PARTITION_SNAPSHOT, "old", 0, [1, 2, 3], 1, [1, 2, 3], None, True, 0),
        (ET.PARTITION_SNAPSHOT, "old", 1, [3, 1, 2], 3, [3], None, True, 0)]
    assert all(r["source"].startswith("initial-state:") for r in rows)


@pytest.mark.parametrize(("text", "words"), [
    ("Topic: old\tPartition: zero\tLeader: 1\n", "partition line without Replicas"),
    ("hello world\n", "neither kafka-topics --describe"),
    ("# only a comment\n", "no partition with an assignment"),
])
def test_a_bad_initial_state_file_is_one_line_and_exit_2(tmp_path: Path, capsys: Any,
                                                         text: str, words: str) -> None:
    events = tmp_path / "events"
    write_log(events, LOG)
    with pytest.raises(InitialStateError):
        read_initial_state([str(_describe(tmp_path, text))])
    rc = main(["--events", str(events), "--out", str(tmp_path / "out"),
               "--initial-state", str(tmp_path / "describe.txt")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "--initial-state" in err[0] and words in err[0]
    # The reasons of the table in docs/bad-inputs.md, word for word.
    assert words in ("partition line without Replicas", "neither kafka-topics --describe",
                     "no partition with an assignment")
    assert not (tmp_path / "out").exists()


def test_a_missing_initial_state_file_is_one_line_and_exit_2(tmp_path: Path,
                                                              capsys: Any) -> None:
    rc = main(["--events", str(tmp_path / "events"), "--out", str(tmp_path / "out"),
               "--initial-state", str(tmp_path / "nope.txt")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "cannot read" in err[0]


def _states(spark: Any, out: Path, run_id: str) -> dict[int, tuple[Any, ...]]:
    df = read_state(spark, str(out), "partition_states", run_id)  # the state after the run
    return {r.partition: (r.state, r.leader, list(r.isr or []), r.leader_epoch)
            for r in df.where(F.col("topic") == "old").collect()}


@pytest.mark.spark
def test_initial_state_seeds_the_partitions_a_failure_then_moves(spark: Any,
                                                                 tmp_path: Path) -> None:
    # Broker 1 fails at seq 2. old-0 (ISR 1,2,3) elects the first live ISR replica of its
    # assignment, 2, with the live ISR [2, 3] (PartitionStateMachine
    # offlinePartitionLeaderElection, Election.leaderForOffline, 3.7.1); the describe has
    # no leader epoch, so the seeded epoch is 0 and the election's is 1. old-1 is led by
    # 3, which lives: untouched.
    events = tmp_path / "events"
    write_log(events, LOG)
    out, bare = tmp_path / "out", tmp_path / "bare"
    assert main(["--events", str(events), "--out", str(bare), "--run-id", "r0"]) == 0
    assert _states(spark, bare, "r0") == {}
    assert main(["--events", str(events), "--out", str(out), "--run-id", "r1",
                 "--initial-state", str(_describe(tmp_path))]) == 0
    assert _states(spark, out, "r1") == {0: ("OnlinePartition", 2, [2, 3], 1),
                                         1: ("OnlinePartition", 3, [3], 0)}
    findings = spark.read.parquet(str(out / "findings")).where(F.col("topic") == "old")
    assert findings.count() == 0
    quarantine = spark.read.parquet(str(out / "quarantine"))
    assert quarantine.count() == 0


@pytest.mark.spark
def test_a_later_run_seeds_only_what_is_still_unknown(spark: Any, tmp_path: Path) -> None:
    # Run 1 seeds old-0 and old-1 and replays broker 1's failure (old-0 -> leader 2).
    # Run 2's file says old-0 is still led by 1 (it moved: a finding, nothing changed),
    # repeats old-1 as the replay has it (a no-op) and adds old-2 (seeded at run 2's first
    # seq, 3, before broker 1's return at that seq).
    events, out, ck = tmp_path / "events", tmp_path / "out", tmp_path / "ck"
    write_log(events, LOG, name="day1")
    first = ["--events", str(events), "--out", str(out), "--checkpoint", str(ck)]
    assert main([*first, "--run-id", "r1", "--initial-state", str(_describe(tmp_path))]) == 0
    write_log(events, [ev(3, ET.BROKER_STARTUP, broker_id=1)], name="day2")
    later = tmp_path / "later.txt"
    later.write_text(DESCRIBE + "\tTopic: old\tPartition: 2\tLeader: 3\tReplicas: 3,2\tIsr: 3,2\n")
    assert main([*first, "--run-id", "r2", "--initial-state", str(later)]) == 0
    # Broker 1's return changes no ISR: only the leader grows it (AlterPartition).
    assert _states(spark, out, "r2") == {0: ("OnlinePartition", 2, [2, 3], 1),
                                         1: ("OnlinePartition", 3, [3], 0),
                                         2: ("OnlinePartition", 3, [3, 2], 0)}
    findings = spark.read.parquet(str(out / "findings")).where(
        (F.col("run_id") == "r2") & (F.col("topic") == "old")).collect()
    assert [(f.partition, f.kind, f.seq) for f in findings] == [(0, "snapshot_contradicts", 3)]
    assert "leader 1 vs 2" in findings[0].detail
    seeded = spark.read.parquet(str(out / "state_changes")).where(
        (F.col("run_id") == "r2") & (F.col("reason") == "initialized from PartitionSnapshot"))
    assert {r.partition for r in seeded.collect()} == {2}


@pytest.mark.spark
def test_initial_state_on_a_log_of_two_clusters_is_refused(spark: Any, tmp_path: Path,
                                                           capsys: Any) -> None:
    events, out = tmp_path / "events", tmp_path / "out"
    write_log(events, [*LOG, failover(3, 1, [1], cluster="other")])
    rc = main(["--events", str(events), "--out", str(out), "--run-id", "r1",
               "--initial-state", str(_describe(tmp_path))])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "needs an event log of one cluster" in err[0]
    assert not (out / "broker_timeline").exists()


@pytest.mark.spark
def test_initial_state_on_a_checkpoint_older_than_it_is_refused(spark: Any, tmp_path: Path,
                                                                capsys: Any) -> None:
    # A checkpoint whose query ran without the seed source (made before --initial-state
    # existed) keeps one source less; removing the seed folder stands for one here (the
    # refusal comes before the query starts).
    events, ck = tmp_path / "events", tmp_path / "ck"
    write_log(events, LOG)
    common = ["--events", str(events), "--out", str(tmp_path / "out"), "--checkpoint", str(ck)]
    assert main([*common, "--run-id", "r1"]) == 0
    shutil.rmtree(ck / "seed")
    capsys.readouterr()
    rc = main([*common, "--run-id", "r2", "--initial-state", str(_describe(tmp_path))])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "was made before --initial-state" in err[0]
    assert not (ck / "seed").exists()
