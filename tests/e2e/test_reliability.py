"""The replay job as a nightly job on shared storage: nothing outside `--out` and
`--checkpoint` touched, one run per checkpoint, lateness that does not depend on the
grouping, empty runs that still say so, and bad runs refused in one line."""

from __future__ import annotations

import json
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from jobs.replay.job import main
from jobs.store.latest_state import read_state
from jobs.store.tables import read_table
from schemas import event_types as ET
from schemas.tables import TABLES
from tests.helpers.event_log import created, ev, failover, write_log

pytestmark = pytest.mark.slow

LOG = [
    failover(1, 1, [1, 2, 3]),
    created(2, "orders", 0, [1, 2]),
    created(2, "orders", 1, [2, 3]),
    created(3, "solo", 0, [3]),
    ev(10, ET.BROKER_FAILURE, broker_id=3),
]


def run(events: Path, out: Path, run_id: str, *extra: str) -> int:
    return main(["--events", str(events), "--out", str(out), "--run-id", run_id,
                 "--buckets", "4", *extra])


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def temporary_checkpoints() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("replay-checkpoint-*")}


@pytest.mark.parametrize("run_id", ["../../victim", "../victim", "a/b", "..", ".hidden",
                                    "_hidden", "x y", "id;rm"])
def test_a_run_id_that_is_a_path_is_refused_before_anything_is_written(
    tmp_path: Path, run_id: str, capsys: Any
) -> None:
    events, out, chk = tmp_path / "logs" / "events", tmp_path / "logs" / "out", tmp_path / "chk"
    write_log(events, LOG)
    victim = tmp_path / "victim"
    (victim / "keep").mkdir(parents=True)
    before, checkpoints = tree(tmp_path), temporary_checkpoints()
    assert run(events, out, run_id, "--checkpoint", str(chk)) == 2
    assert run(events, out, run_id) == 2
    err = capsys.readouterr().err
    assert "--run-id" in err and "letters, digits" in err
    assert tree(tmp_path) == before
    assert temporary_checkpoints() == checkpoints


def test_paths_with_dot_dot_stay_inside_out_and_checkpoint(spark: Any, tmp_path: Path) -> None:
    events = tmp_path / "events"
    write_log(events, LOG)
    (tmp_path / "victim").mkdir()
    out = tmp_path / "x" / ".." / "out"
    chk = tmp_path / "y" / ".." / "chk"
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    assert run(events, out, "r1", "--checkpoint", str(chk)) == 0
    top = {p.name for p in tmp_path.iterdir()}
    assert top == {"events", "out", "chk", "x", "y", "victim"}
    assert not any(any((tmp_path / d).iterdir()) for d in ("x", "y", "victim"))
    assert tree(events) == {"part-0.parquet"}


def test_out_or_checkpoint_inside_events_is_refused(tmp_path: Path, capsys: Any) -> None:
    events = tmp_path / "events"
    write_log(events, LOG)
    assert run(events, events / "out", "r1") == 2
    assert run(events, tmp_path / "out", "r1", "--checkpoint", str(events / "chk")) == 2
    assert capsys.readouterr().err.count("is inside --events") == 2
    assert tree(events) == {"part-0.parquet"}


def test_an_out_pyarrow_cannot_open_is_refused_before_spark_starts(
        tmp_path: Path, capsys: Any) -> None:
    """The jobs write every file of theirs with pyarrow: an --out (or --checkpoint) of a
    scheme no pyarrow file system opens is one line and exit 2, before a JVM starts."""
    events = tmp_path / "events"
    write_log(events, LOG)
    for flags in (["--out", "nosuch://bucket/out"],
                  ["--out", str(tmp_path / "out"), "--checkpoint", "nosuch://bucket/ck"]):
        assert main(["--events", str(events), *flags, "--run-id", "r1"]) == 2
        [line] = [x for x in capsys.readouterr().err.splitlines() if "ERROR" in x]
        assert "no pyarrow file system opens nosuch:// paths" in line
    assert not (tmp_path / "out").exists()


def test_out_that_is_a_file_fails_before_the_replay(tmp_path: Path, capsys: Any) -> None:
    events, out = tmp_path / "events", tmp_path / "out"
    write_log(events, LOG)
    out.write_text("not a directory")
    checkpoints = temporary_checkpoints()
    assert run(events, out, "r1") == 2
    captured = capsys.readouterr()
    [line] = [x for x in captured.err.splitlines() if "ERROR" in x]
    assert "is a file, not a directory" in line
    assert "timeline:" not in captured.out  # refused before the replay started
    assert temporary_checkpoints() == checkpoints


def test_a_file_without_ts_under_a_path_with_a_space_fails_the_check(
    tmp_path: Path, capsys: Any
) -> None:
    import pyarrow as pa

    events = tmp_path / "sp ace %41"
    events.mkdir()
    pq.write_table(pa.table({"seq": [1], "event_type": ["BrokerStartup"]}),
                   events / "part-0.parquet")
    assert run(events, tmp_path / "out", "r1", "--checkpoint", str(tmp_path / "chk")) == 2
    assert "required column 'ts' is missing" in capsys.readouterr().err
    assert not (tmp_path / "chk").exists()  # the file is not consumed


def test_corrupt_data_pages_give_one_line_and_exit_2(tmp_path: Path, capsys: Any) -> None:
    events = tmp_path / "events"
    path = write_log(events, LOG * 50)
    data = bytearray(path.read_bytes())
    data[4:200] = b"\xff" * 196  # the first pages; the footer at the end stays intact
    path.write_bytes(bytes(data))
    checkpoints = temporary_checkpoints()
    assert run(events, tmp_path / "out", "r1") == 2
    err = [x for x in capsys.readouterr().err.splitlines() if "[replay]" in x]
    assert len(err) == 1 and "part-0.parquet" in err[0]
    assert "cannot be read: its data is corrupt" in err[0]
    assert temporary_checkpoints() == checkpoints


def test_a_second_run_on_a_held_checkpoint_is_refused(tmp_path: Path, capsys: Any) -> None:
    events, out, chk = tmp_path / "events", tmp_path / "out", tmp_path / "chk"
    write_log(events, LOG)
    chk.mkdir()
    now = time.time()
    (chk / "lease.json").write_text(json.dumps({
        "host": socket.gethostname(), "pid": os.getpid(), "run_id": "nightly",
        "acquired_at": now, "renewed_at": now, "ttl_seconds": 600}))
    assert run(events, out, "r2", "--checkpoint", str(chk)) == 75  # EX_TEMPFAIL: retry
    err = capsys.readouterr().err
    assert "in use by run 'nightly'" in err and "retry later" in err
    assert f"process {os.getpid()}" in err
    assert not out.exists() or not any(out.rglob("*.parquet"))
    assert not (chk / "query").exists()


def test_an_empty_input_says_so_and_every_table_reads_back(spark: Any, tmp_path: Path) -> None:
    events, out = tmp_path / "events", tmp_path / "out"
    events.mkdir()
    assert run(events, out, "20261122") == 0
    [summary] = read_table(spark, str(out), "run_summary").collect()
    assert summary["run_id"] == "20261122"  # a string, though it looks like a number
    assert (summary["cluster"], summary["rows_read"], summary["batches"]) == ("default", 0, 0)
    for table in TABLES:
        # Without a schema: the empty partition's file carries it.
        df = spark.read.parquet(str(out / table))
        assert [f.name for f in df.schema.fields if f.name != "run_id"] == \
            [f.name for f in TABLES[table].fields if f.name != "run_id"]
        assert read_table(spark, str(out), table).schema["run_id"].dataType.simpleString() \
            == "string"


def test_files_with_no_rows_are_an_empty_run(spark: Any, tmp_path: Path) -> None:
    events, out = tmp_path / "events", tmp_path / "out"
    write_log(events, [])
    assert run(events, out, "empty") == 0
    [summary] = read_table(spark, str(out), "run_summary").collect()
    assert summary["rows_read"] == 0


def _late_rows(spark: Any, buckets: int, tmp_path: Path) -> dict[str, list[Any]]:
    events, out, chk = tmp_path / "events", tmp_path / "out", tmp_path / "chk"
    write_log(events, LOG + [created(20, "kept", 0, [1, 2])], "day1")
    flags = ["--checkpoint", str(chk), "--buckets", str(buckets)]
    assert main(["--events", str(events), "--out", str(out), "--run-id", "d1", *flags]) == 0
    # Day 2 brings two new topics whose creations carry an old seq, and a broker failure
    # at an old seq: all behind what day 1 applied (seq 20).
    write_log(events, [created(15, f"late{i}", 0, [1]) for i in range(6)]
              + [ev(12, ET.BROKER_FAILURE, broker_id=2), created(30, "fresh", 0, [1, 2])],
              "day2")
    assert main(["--events", str(events), "--out", str(out), "--run-id", "d2", *flags]) == 0
    findings = read_table(spark, str(out), "findings").where(F.col("run_id") == "d2")
    late = sorted((r["seq"], r["topic"] or "", r["broker_id"] or -1)
                  for r in findings.where(F.col("kind") == "late_event").collect())
    states = read_state(spark, str(out), "partition_states", "d2")
    brokers = read_table(spark, str(out), "broker_timeline")
    return {
        "late": late,
        "topics": sorted(r["topic"] for r in states.select("topic").distinct().collect()),
        "timeline": sorted(tuple(r) for r in brokers.where(F.col("run_id") == "d2")
                           .select("broker_id", "status", "seq_from").collect()),
        "timeline_d1": sorted(tuple(r) for r in brokers.where(F.col("run_id") == "d1")
                              .select("broker_id", "status", "seq_from").collect()),
    }


def test_lateness_is_decided_per_cluster_whatever_the_bucket_count(
    spark: Any, tmp_path: Path
) -> None:
    two = _late_rows(spark, 2, tmp_path / "two")
    eight = _late_rows(spark, 8, tmp_path / "eight")
    assert two == eight
    # Every late row became a `late_event` finding (the helper collects those).
    assert two["late"] == [(12, "", 2)] + [(15, f"late{i}", -1) for i in range(6)]
    assert "fresh" in two["topics"] and not any(t.startswith("late") for t in two["topics"])
    # The late broker failure changed no interval of the broker timeline.
    assert two["timeline"] == two["timeline_d1"]


def test_a_finding_after_the_timelines_last_step_is_written_once(
    spark: Any, tmp_path: Path
) -> None:
    events, out, chk = tmp_path / "events", tmp_path / "out", tmp_path / "chk"
    write_log(events, LOG + [ev(11, ET.CONTROLLED_SHUTDOWN, broker_id=9)], "day1")
    flags = ["--checkpoint", str(chk)]
    assert run(events, out, "d1", *flags) == 0
    write_log(events, [created(20, "later", 0, [1])], "day2")
    assert run(events, out, "d2", *flags) == 0
    found = read_table(spark, str(out), "findings").where(F.col("kind") == "broker_not_available")
    assert [(r["run_id"], r["seq"], r["broker_id"]) for r in found.collect()] == [("d1", 11, 9)]


def test_an_out_that_cannot_be_written_fails_before_the_replay(
    tmp_path: Path, capsys: Any
) -> None:
    events = tmp_path / "events"
    write_log(events, LOG)
    (tmp_path / "plain").write_text("a file where a directory should be")
    assert run(events, tmp_path / "plain" / "out", "r1") == 2
    captured = capsys.readouterr()
    assert "cannot be written" in captured.err and "timeline:" not in captured.out


def test_a_misspelt_topic_setting_stops_the_job(tmp_path: Path, capsys: Any) -> None:
    events, conf = tmp_path / "events", tmp_path / "replay.toml"
    write_log(events, LOG)
    conf.write_text('[topics."orders"]\nmin_insync_replica = 2\n')
    assert run(events, tmp_path / "out", "r1", "--config", str(conf)) == 2
    assert "has unknown setting(s) ['min_insync_replica']" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def _rollup(spark: Any, out: Path, run_id: str) -> tuple[float, dict[str, float], dict[str, float]]:
    [r] = read_table(spark, str(out), "run_summary").where(F.col("run_id") == run_id).collect()
    return (r["offline_partition_seconds"], dict(r["offline_seconds_by_topic"]),
            dict(r["offline_seconds_by_cause_broker"]))


def test_the_run_summary_counts_offline_partition_seconds_by_topic_and_cause(
    spark: Any, tmp_path: Path
) -> None:
    """`solo-0` (replica on broker 3 only) is offline from broker 3's failure at seq 10
    (ts T0 + 10 s) to its restart at seq 40: 30 s, caused by broker 3. Cut into two nights
    at seq 20, the window is open at the first night's end (10 s of it counted then, up to
    the night's last event at seq 20) and closed in the second (20 s): 30 s in all, as in
    one replay of both nights."""
    night1 = LOG + [ev(20, ET.ISR_CHANGED, topic="orders", partition=0, isr=[1, 2])]
    night2 = [ev(40, ET.BROKER_STARTUP, broker_id=3)]
    write_log(tmp_path / "all", night1 + night2)
    assert run(tmp_path / "all", tmp_path / "full", "full") == 0
    assert _rollup(spark, tmp_path / "full", "full") == (30.0, {"solo": 30.0}, {"3": 30.0})

    events, out, chk = tmp_path / "events", tmp_path / "out", tmp_path / "chk"
    write_log(events, night1, "n1")
    assert run(events, out, "n1", "--checkpoint", str(chk)) == 0
    write_log(events, night2, "n2")
    assert run(events, out, "n2", "--checkpoint", str(chk)) == 0
    assert _rollup(spark, out, "n1") == (10.0, {"solo": 10.0}, {"3": 10.0})
    assert _rollup(spark, out, "n2") == (20.0, {"solo": 20.0}, {"3": 20.0})
