"""End to end: `jobs.replay.main([...])` on small logs, asserting the tables it writes.

One scenario log (cluster `default`, brokers 1-4) exercises every controller flow on its
own topic; the expected values are Kafka 3.7.1's (docs/core.md):

* seq 1  ControllerFailover -> broker 1, epoch 1, live [1,2,3,4]
* seq 2  topic `orders` created: 0 -> [1,2,3], 1 -> [2,3,1]; seq 3 `solo` [3]; seq 4
  `moving` [1,2]; seq 5 `doomed` 0 -> [1,4], 1 -> [4,1]
* seq 10 broker 3 fails (solo-0 goes offline), seq 11 it restarts, seq 12 orders-0 ISR back
* seq 20 controlled shutdown of broker 2, seq 21 broker 2 fails
* seq 30 reassignment of moving-0 to [3,4], completed by the IsrChanged at seq 31
* seq 40 broker 4 fails; seq 41 deletion of `doomed` requested (broker 4's replicas are
  ineligible), seq 42 broker 1 answers; seq 50 broker 4 is back, seq 51 it answers,
  seq 52 the controller's own completion line
* seq 60 ControllerFailover -> broker 4, epoch 2, live [1,3,4]

plus six contract-breaking rows and two exact duplicates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from jobs.replay.job import main
from jobs.store.latest_state import read_state
from schemas import event_types as ET
from schemas.tables import STATE_TABLES
from tests.helpers.event_log import created, ev, failover, write_log

pytestmark = pytest.mark.slow

GOOD_DAY1 = [
    failover(1, 1, [1, 2, 3, 4]),
    created(2, "orders", 0, [1, 2, 3]),
    created(2, "orders", 1, [2, 3, 1]),
    created(3, "solo", 0, [3]),
    created(4, "moving", 0, [1, 2]),
    created(5, "doomed", 0, [1, 4]),
    created(5, "doomed", 1, [4, 1]),
    ev(10, ET.BROKER_FAILURE, broker_id=3),
    ev(11, ET.BROKER_STARTUP, broker_id=3),
    ev(12, ET.ISR_CHANGED, topic="orders", partition=0, isr=[1, 2, 3], leader_epoch=1),
    ev(20, ET.CONTROLLED_SHUTDOWN, broker_id=2),
    ev(21, ET.BROKER_FAILURE, broker_id=2),
    ev(30, ET.REASSIGNMENT_REQUESTED, topic="moving", partition=0, replicas=[3, 4]),
    ev(31, ET.ISR_CHANGED, topic="moving", partition=0, isr=[1, 3, 4], leader_epoch=2),
    ev(40, ET.BROKER_FAILURE, broker_id=4),
    ev(41, ET.TOPIC_DELETION_REQUESTED, topic="doomed"),
    ev(42, ET.STOP_REPLICA_RESPONSE, topic="doomed", partition=0, broker_id=1),
    ev(42, ET.STOP_REPLICA_RESPONSE, topic="doomed", partition=1, broker_id=1),
]
GOOD_DAY2 = [
    ev(50, ET.BROKER_STARTUP, broker_id=4),
    ev(51, ET.STOP_REPLICA_RESPONSE, topic="doomed", partition=0, broker_id=4),
    ev(51, ET.STOP_REPLICA_RESPONSE, topic="doomed", partition=1, broker_id=4),
    ev(52, ET.TOPIC_DELETION_COMPLETED, topic="doomed"),
    failover(60, 4, [1, 3, 4]),
]
BAD = [
    created(None, "orders", 9, [1]),  # type: ignore[arg-type]
    ev(13, "LeaderMoved", topic="orders"),
    ev(14, ET.PARTITION_CREATED, topic="bad", partition=0),
    created(15, "bad", 1, [1, 1]),
    ev(16, ET.BROKER_FAILURE, broker_id=-1),
    ev(17, "", topic="orders", partition=0),
]
DUPLICATES = [created(2, "orders", 0, [1, 2, 3]), ev(10, ET.BROKER_FAILURE, broker_id=3)]
DAY1 = GOOD_DAY1 + BAD + DUPLICATES
DAY2 = GOOD_DAY2


def run(events: Path, out: Path, run_id: str, *extra: str) -> int:
    return main(["--events", str(events), "--out", str(out), "--run-id", run_id,
                 "--buckets", "8", *extra])


def table(spark: Any, out: Path, name: str, run_id: str) -> Any:
    """The run's rows; of a state table, the whole state after the run."""
    if name in STATE_TABLES:
        return read_state(spark, str(out), name, run_id).drop("run_id")
    df = spark.read.parquet(str(out / name))
    return df.where(F.col("run_id") == run_id).drop("run_id")


def own_rows(spark: Any, out: Path, name: str, run_id: str) -> int:
    """How many rows the run itself wrote to `name`."""
    return spark.read.parquet(str(out / name)).where(F.col("run_id") == run_id).count()


def rows(spark: Any, out: Path, name: str, run_id: str, where: Any = None) -> list[dict]:
    df = table(spark, out, name, run_id)
    if where is not None:
        df = df.where(where)
    return sorted((r.asDict() for r in df.collect()), key=repr)


@pytest.fixture(scope="module")
def full(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both days in one directory, replayed at once from a fresh checkpoint."""
    base = tmp_path_factory.mktemp("full")
    write_log(base / "events", DAY1, "day1")
    write_log(base / "events", DAY2, "day2")
    assert run(base / "events", base / "out", "full") == 0
    return base


def test_topic_creation(spark: Any, full: Path) -> None:
    lai = rows(spark, full / "out", "leader_and_isr_requests", "full",
               (F.col("seq") == 2) & (F.col("topic") == "orders") & (F.col("partition") == 0))
    # The leader is the first live replica, the ISR every live replica, epoch 0, sent to
    # each replica as a new partition by controller epoch 1.
    assert sorted(r["broker_id"] for r in lai) == [1, 2, 3]
    for r in lai:
        assert (r["leader"], r["leader_epoch"], r["isr"], r["is_new"], r["controller_epoch"]) \
            == (1, 0, [1, 2, 3], True, 1)
    changes = rows(spark, full / "out", "state_changes", "full",
                   (F.col("seq") == 2) & (F.col("machine") == "partition"))
    assert {(r["topic"], r["partition"], r["from_state"], r["to_state"]) for r in changes} == {
        (t, p, a, b) for t, p in (("orders", 0), ("orders", 1))
        for a, b in (("NonExistentPartition", "NewPartition"), ("NewPartition", "OnlinePartition"))
    }


def test_broker_failure_and_restart(spark: Any, full: Path) -> None:
    out = full / "out"
    um = rows(spark, out, "update_metadata_requests", "full",
              (F.col("seq") == 10) & (F.col("topic") == "solo"))
    # RF=1 on the failed broker: no leader (-1), leader epoch bumped, ISR kept.
    assert [(r["leader"], r["leader_epoch"], r["isr"], r["offline_replicas"]) for r in um] \
        == [(-1, 1, [3], [3])]
    offline = rows(spark, out, "state_changes", "full",
                   (F.col("seq") == 10) & (F.col("topic") == "solo") & F.col("broker_id").isNull())
    # Offline first, then the election attempt that fails (state unchanged, reason kept).
    assert [(r["step"], r["from_state"], r["to_state"], r["outcome"], (r["reason"] or "")[:6])
            for r in sorted(offline, key=lambda r: r["step"])] == [
        (1, "OnlinePartition", "OfflinePartition", "applied", ""),
        (2, "OfflinePartition", "OnlinePartition", "failed", "Failed")]
    kinds = rows(spark, out, "findings", "full", F.col("seq") == 10)
    assert [(r["kind"], r["topic"]) for r in kinds] == [("election_failed", "solo")]
    # The restart elects broker 3 again: online, epoch 2.
    solo = rows(spark, out, "partition_states", "full", F.col("topic") == "solo")
    assert [(r["state"], r["leader"], r["leader_epoch"], r["isr"]) for r in solo] == \
        [("OnlinePartition", 3, 2, [3])]
    b3 = rows(spark, out, "broker_timeline", "full", F.col("broker_id") == 3)
    assert sorted((r["status"], r["seq_from"], r["seq_to"]) for r in b3) == [
        ("dead", 10, 11), ("live", 1, 10), ("live", 11, None)]


def test_controlled_shutdown(spark: Any, full: Path) -> None:
    out = full / "out"
    lai = rows(spark, out, "leader_and_isr_requests", "full",
               (F.col("seq") == 20) & (F.col("topic") == "orders") & (F.col("partition") == 1))
    # Leadership moves off broker 2 to the remaining ISR member 1, epoch 2.
    assert {(r["leader"], r["leader_epoch"], tuple(r["isr"])) for r in lai} == {(1, 2, (1,))}
    b2 = rows(spark, out, "broker_timeline", "full", F.col("broker_id") == 2)
    assert sorted((r["status"], r["seq_from"], r["seq_to"]) for r in b2) == [
        ("dead", 21, None), ("live", 1, 20), ("shutting_down", 20, 21)]
    replicas = rows(spark, out, "replica_states", "full",
                    (F.col("topic") == "orders") & (F.col("broker_id") == 2))
    assert {r["state"] for r in replicas} == {"OfflineReplica"}


def test_reassignment(spark: Any, full: Path) -> None:
    out = full / "out"
    moving = rows(spark, out, "partition_states", "full", F.col("topic") == "moving")
    assert [(r["replicas"], r["adding_replicas"], r["removing_replicas"], r["leader"])
            for r in moving] == [([3, 4], [], [], 3)]
    replicas = rows(spark, out, "replica_states", "full", F.col("topic") == "moving")
    assert [(r["broker_id"], r["state"]) for r in replicas] == \
        [(3, "OnlineReplica"), (4, "OnlineReplica")]
    deletes = rows(spark, out, "stop_replica_requests", "full",
                   (F.col("seq") == 31) & F.col("delete_partition"))
    assert [(r["broker_id"], r["topic"]) for r in deletes] == [(1, "moving")]


def test_topic_deletion_with_a_dead_broker(spark: Any, full: Path) -> None:
    out = full / "out"
    ineligible = rows(spark, out, "state_changes", "full",
                      (F.col("seq") == 41) & (F.col("broker_id") == 4))
    assert {r["to_state"] for r in ineligible} == {"ReplicaDeletionIneligible"}
    # Broker 1 answers at 42, but the topic completes only once broker 4's replicas are
    # deleted too (seq 51), never earlier.
    done = rows(spark, out, "findings", "full", F.col("kind") == "topic_deleted")
    assert [(r["seq"], r["topic"]) for r in done] == [(51, "doomed")]
    doomed = rows(spark, out, "partition_states", "full", F.col("topic") == "doomed")
    assert {(r["state"], r["queued_for_deletion"]) for r in doomed} == \
        {("NonExistentPartition", False)}
    assert rows(spark, out, "replica_states", "full", F.col("topic") == "doomed") == []


def test_controller_failover(spark: Any, full: Path) -> None:
    out = full / "out"
    got = table(spark, out, "controller_timeline", "full")
    expected = spark.createDataFrame(
        [("default", 1, 1, 1, [1, 2, 3, 4]), ("default", 4, 2, 60, [1, 3, 4])],
        "cluster string, controller_id int, controller_epoch int, seq long, "
        "live_brokers array<int>",
    )
    assert_df_equality(got.drop("ts"), expected, ignore_row_order=True,
                       ignore_nullable=True)
    um = rows(spark, out, "update_metadata_requests", "full", F.col("seq") == 60)
    assert um and {r["controller_epoch"] for r in um} == {2}


def test_bad_rows_quarantined_and_duplicates_counted(spark: Any, full: Path) -> None:
    out = full / "out"
    reasons = {(r["seq"], r["reason"]) for r in rows(spark, out, "quarantine", "full")}
    assert reasons == {
        (None, "null seq"),
        (13, "unknown event_type LeaderMoved"),
        (14, "missing replicas for PartitionCreated"),
        (15, "replicas has duplicate broker ids"),
        (16, "negative broker_id"),
        (17, "empty event_type"),
    }
    # The good rows around them were applied: no partition `bad`, orders has 2 partitions.
    states = rows(spark, out, "partition_states", "full")
    assert sorted({(r["topic"], r["partition"]) for r in states}) == [
        ("doomed", 0), ("doomed", 1), ("moving", 0), ("orders", 0), ("orders", 1), ("solo", 0)]
    [summary] = rows(spark, out, "run_summary", "full")
    assert summary["rows_duplicate"] == len(DUPLICATES)
    assert summary["rows_quarantined"] == len(BAD)


def test_run_summary_reconciles(spark: Any, full: Path) -> None:
    out = full / "out"
    [s] = rows(spark, out, "run_summary", "full")
    assert s["rows_read"] == len(DAY1) + len(DAY2)
    assert s["rows_read"] == (s["rows_applied"] + s["rows_duplicate"] + s["rows_quarantined"]
                              + s["rows_late"])
    assert (s["rows_applied"], s["rows_late"]) == (len(GOOD_DAY1) + len(GOOD_DAY2), 0)
    written = dict(s["rows_written"])
    for name in ("partition_states", "state_changes", "findings", "quarantine",
                 "broker_timeline", "partition_state_writes"):
        assert written[name] == table(spark, out, name, "full").count(), name
    assert dict(s["findings_by_kind"]) == {"election_failed": 1, "topic_deleted": 1}
    assert dict(s["partitions_by_state"]) == {"OnlinePartition": 4, "NonExistentPartition": 2}
    assert {"check", "timeline", "replay", "write", "total"} <= set(dict(s["stage_seconds"]))


def test_incremental_equals_full_and_late_rows_are_recorded(
    spark: Any, full: Path, tmp_path: Path, capsys: Any
) -> None:
    events, out, chk = tmp_path / "events", tmp_path / "out", tmp_path / "chk"
    write_log(events, DAY1, "day1")
    assert run(events, out, "d1", "--checkpoint", str(chk)) == 0
    # Between the days `doomed` waits for broker 4: queued, not deleted.
    doomed = rows(spark, out, "partition_states", "d1", F.col("topic") == "doomed")
    assert {r["queued_for_deletion"] for r in doomed} == {True}

    write_log(events, DAY2, "day2")
    capsys.readouterr()
    assert run(events, out, "d2", "--checkpoint", str(chk)) == 0
    # The timeline reads day 1's cluster rows from the checkpoint, not from its file.
    assert "timeline: 1 file(s) scanned, 1 known from" in capsys.readouterr().out
    for name in ("partition_states", "replica_states"):
        assert_df_equality(table(spark, out, name, "d2"), table(spark, full / "out", name, "full"),
                           ignore_row_order=True)
    [s2] = rows(spark, out, "run_summary", "d2")
    assert s2["rows_read"] == len(DAY2)  # the second run reads only the new file

    # A row that arrives after the replay has passed its seq is recorded, not applied.
    write_log(events, [ev(33, ET.PREFERRED_LEADER_ELECTION, topic="orders", partition=0)],
              "day3")
    assert run(events, out, "d3", "--checkpoint", str(chk)) == 0
    [s3] = rows(spark, out, "run_summary", "d3")
    assert (s3["rows_read"], s3["rows_late"], s3["rows_applied"]) == (1, 1, 0)
    late = rows(spark, out, "findings", "d3")
    assert [(r["seq"], r["kind"], r["topic"]) for r in late] == [(33, "late_event", "orders")]
    assert_df_equality(table(spark, out, "partition_states", "d3"),
                       table(spark, full / "out", "partition_states", "full"),
                       ignore_row_order=True)
    # A night lists the partitions it changed: d3 (a late row only) changed none.
    assert own_rows(spark, out, "partition_states", "d3") == 0
    assert own_rows(spark, out, "replica_states", "d3") == 0
    [s3] = rows(spark, out, "run_summary", "d3")
    assert list(s3["state_runs"]) == ["d1", "d2", "d3"]

    # The same run id again with the same checkpoint is a no-op.
    before = table(spark, out, "state_changes", "d3").count()
    assert run(events, out, "d3", "--checkpoint", str(chk)) == 0
    assert table(spark, out, "state_changes", "d3").count() == before

    # The bucket count is part of the state key: another one is refused before any write.
    capsys.readouterr()
    assert run(events, out, "d4", "--checkpoint", str(chk), "--buckets", "16") == 2
    assert "built with buckets=8" in capsys.readouterr().err
    assert not (out / "run_summary" / "run_id=d4").exists()


PER_EVENT_TABLES = ("state_changes", "leader_and_isr_requests", "update_metadata_requests",
                    "stop_replica_requests", "findings", "quarantine", "partition_state_writes")


def assert_two_runs_equal_full(spark: Any, out: Path, full: Path, first: str, last: str,
                               whole_log_tables: tuple[str, ...] = ()) -> None:
    """`last` holds the full replay's state (and `whole_log_tables`); the per-event rows of
    `first` and `last` together are the full replay's."""
    for name in ("partition_states", "replica_states", *whole_log_tables):
        assert_df_equality(table(spark, out, name, last),
                           table(spark, full / "out", name, "full"), ignore_row_order=True)
    for name in PER_EVENT_TABLES:
        both = table(spark, out, name, first).unionByName(table(spark, out, name, last))
        assert_df_equality(both, table(spark, full / "out", name, "full"),
                           ignore_row_order=True)


def test_a_nightly_run_scans_only_new_files_and_outlives_retention(
    spark: Any, full: Path, tmp_path: Path, capsys: Any
) -> None:
    """The checkpoint keeps the cluster history: the second night scans only its own file,
    and still knows the brokers of the first night after retention removed its file."""
    events, out, chk = tmp_path / "events", tmp_path / "out", tmp_path / "chk"
    write_log(events, DAY1, "day1")
    assert run(events, out, "d1", "--checkpoint", str(chk)) == 0
    (events / "day1.parquet").unlink()
    write_log(events, DAY2, "day2")
    capsys.readouterr()
    assert run(events, out, "d2", "--checkpoint", str(chk)) == 0
    assert "timeline: 1 file(s) scanned, 0 known from" in capsys.readouterr().out
    assert_two_runs_equal_full(spark, out, full, "d1", "d2",
                               ("broker_timeline", "controller_timeline"))


def test_a_run_resuming_a_crashed_batch_equals_a_full_replay(
    spark: Any, full: Path, tmp_path: Path
) -> None:
    """A run that dies after Spark planned and ran its batch, before the commit: the next
    run re-executes that batch with its own files, then takes the new files in a second
    batch. Each partition is listed once, and the rows equal one replay of everything."""
    events, out, chk = tmp_path / "events", tmp_path / "out", tmp_path / "chk"
    write_log(events, DAY1, "day1")
    assert run(events, out, "d1", "--checkpoint", str(chk)) == 0
    history = {"history.json": (chk / "history.json").read_bytes()}
    write_log(events, GOOD_DAY2[:3], "day2a")  # broker 4 back, its StopReplica answers
    assert run(events, out, "crashed", "--checkpoint", str(chk)) == 0
    # Undo what the run did after its batch ran, as a crash before Spark's commit would
    # have left the checkpoint: no commit, no history of the run, no marker.
    # (Spark's checkpoint is Hadoop's: a .crc beside each file it writes.)
    for name in ("1", ".1.crc"):
        (chk / "query" / "commits" / name).unlink()
    for name, saved in history.items():
        (chk / name).write_bytes(saved)
    (chk / "runs" / "crashed.json").unlink()
    write_log(events, GOOD_DAY2[3:], "day2b")  # the completion line, a failover
    assert run(events, out, "resumed", "--checkpoint", str(chk)) == 0

    [s] = rows(spark, out, "run_summary", "resumed")
    assert s["batches"] == 2
    assert (s["rows_read"], s["rows_applied"]) == (len(GOOD_DAY2), len(GOOD_DAY2))
    assert dict(s["rows_written"])["partition_states"] == 6
    # The crashed run's rows are replaced by the resumed run's: day 1 plus it is everything.
    assert_two_runs_equal_full(spark, out, full, "d1", "resumed")


def test_same_run_id_twice_replaces_its_rows(spark: Any, full: Path) -> None:
    out = full / "out"
    before = {name: table(spark, out, name, "full").count()
              for name in ("partition_states", "state_changes", "findings", "quarantine",
                           "run_summary", "broker_timeline")}
    assert run(full / "events", out, "full") == 0
    after = {name: table(spark, out, name, "full").count() for name in before}
    assert after == before


def test_determinism_across_file_splits_and_shuffle_partitions(
    spark: Any, full: Path, tmp_path: Path
) -> None:
    events = tmp_path / "events"
    everything = DAY1 + DAY2
    # Another layout: three files in nested folders, rows in another order.
    write_log(events / "a", everything[::3], "x")
    write_log(events / "b" / "c", everything[1::3], "y")
    write_log(events, everything[2::3][::-1], "z")
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "5")
    try:
        assert run(events, tmp_path / "out", "full") == 0
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)
    for name in ("partition_states", "replica_states", "state_changes",
                 "leader_and_isr_requests", "update_metadata_requests",
                 "stop_replica_requests", "findings", "quarantine", "broker_timeline",
                 "controller_timeline", "partition_state_writes"):
        assert_df_equality(table(spark, tmp_path / "out", name, "full"),
                           table(spark, full / "out", name, "full"), ignore_row_order=True)


def test_unreadable_schema_fails_before_writing(tmp_path: Path, capsys: Any) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    events = tmp_path / "events"
    events.mkdir()
    pq.write_table(pa.table({"seq": ["1"], "ts": pa.array([0], pa.timestamp("us", tz="UTC")),
                             "event_type": ["BrokerStartup"]}), events / "bad.parquet")
    assert run(events, tmp_path / "out", "x") == 2
    assert "column 'seq'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()

    pq.write_table(pa.table({"seq": [1], "event_type": ["BrokerStartup"]}),
                   events / "bad.parquet")
    assert run(events, tmp_path / "out", "x") == 2
    assert "'ts' is missing" in capsys.readouterr().err
