"""`jobs.replay --kafka-version`: the release profile reaches the core through the job's
settings, and a malformed or unsupported version stops the job in one line (exit 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from jobs.replay.job import main
from jobs.store.tables import read_table
from schemas import event_types as ET
from tests.helpers.event_log import created, ev, failover, write_log

A, B, C = 1, 2, 3
# A 3-broker cluster, controller B, a topic on A and B; A stops, then B (the controller):
# C takes over (KAFKA-3143).
LOG = [
    failover(1, B, [A, B, C]),
    created(2, "t", 0, [A, B]),
    ev(3, ET.BROKER_FAILURE, broker_id=A),
    failover(4, C, [C]),
]


def _run(events: Path, out: Path, *extra: str) -> int:
    return main(["--events", str(events), "--out", str(out), "--run-id", "r1",
                 "--buckets", "2", *extra])


@pytest.mark.slow
def test_replay_2_0_keeps_the_dead_leader_after_failover_and_3_7_drops_it(
    spark: Any, tmp_path: Path
) -> None:
    """ReplicaStateMachine.scala at 2.0.0, line 66: no OfflineReplica at failover, so ZK
    keeps leader B, ISR [B]; from 2.3.0 (line 42) the new controller writes leader -1."""
    events = tmp_path / "events"
    write_log(events, LOG)
    assert _run(events, tmp_path / "old", "--kafka-version", "2.0") == 0
    assert _run(events, tmp_path / "new") == 0
    for out, leader in (("old", B), ("new", -1)):
        [row] = (read_table(spark, str(tmp_path / out), "partition_states")
                 .where(F.col("topic") == "t").collect())
        assert (row["leader"], list(row["isr"])) == (leader, [B]), out


@pytest.mark.slow
def test_replay_2_1_sees_no_bounce_and_3_7_does(spark: Any, tmp_path: Path) -> None:
    """The profile reaches the timeline too: KafkaController.scala at 2.1.0, lines
    1246-1247, finds only new and dead brokers, so A registering again changes nothing;
    from 2.2.0 (lines 1299-1300, 1320-1325) A's bounce moves the leadership to B."""
    events = tmp_path / "events"
    write_log(events, [*LOG[:2], ev(3, ET.BROKER_STARTUP, broker_id=A)])
    assert _run(events, tmp_path / "old", "--kafka-version", "2.1") == 0
    assert _run(events, tmp_path / "new") == 0
    for out, leader, intervals in (("old", A, 1), ("new", B, 2)):
        [row] = (read_table(spark, str(tmp_path / out), "partition_states")
                 .where(F.col("topic") == "t").collect())
        assert row["leader"] == leader, out
        broker_a = (read_table(spark, str(tmp_path / out), "broker_timeline")
                    .where(F.col("broker_id") == A).count())
        assert broker_a == intervals, out


def _refused(tmp_path: Path, capsys: Any, version: str) -> str:
    """Runs the replay with `--kafka-version version`: exit 2, nothing written, one line."""
    events = tmp_path / "events"
    write_log(events, LOG)
    assert _run(events, tmp_path / "out", "--kafka-version", version) == 2
    assert not (tmp_path / "out").exists()
    err: str = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    return err


def test_a_bad_kafka_version_stops_the_replay_in_one_line(tmp_path: Path, capsys: Any) -> None:
    assert "unsupported Kafka version '4.0'" in _refused(tmp_path / "a", capsys, "4.0")
    assert "malformed Kafka version '2.x'" in _refused(tmp_path / "b", capsys, "2.x")


def test_a_bad_kafka_version_in_the_config_file_stops_the_replay(
    tmp_path: Path, capsys: Any
) -> None:
    events, conf = tmp_path / "events", tmp_path / "replay.toml"
    write_log(events, LOG)
    conf.write_text('[kafka]\nkafka_version = "0.7"\n')
    assert _run(events, tmp_path / "out", "--config", str(conf)) == 2
    assert "unsupported Kafka version '0.7'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_checkpoint_keeps_the_profile_it_was_built_with(
    spark: Any, tmp_path: Path, capsys: Any
) -> None:
    """The saved state was built under one release's rules: a run under another profile is
    refused before it writes anything; a version of the same profile (1.1 is replayed with
    2.0's rules) resumes."""
    events, checkpoint = tmp_path / "events", str(tmp_path / "ckpt")
    write_log(events, LOG)
    assert _run(events, tmp_path / "out", "--checkpoint", checkpoint,
                "--kafka-version", "2.0") == 0
    before = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert main(["--events", str(events), "--out", str(tmp_path / "out"), "--run-id", "r2",
                 "--buckets", "2", "--checkpoint", checkpoint]) == 2
    assert "built with the Kafka 2.0 profile, this run asks for 3.7" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == before
    assert not (tmp_path / "out" / "partition_states" / "run_id=r2").exists()
    assert main(["--events", str(events), "--out", str(tmp_path / "out"), "--run-id", "r2",
                 "--buckets", "2", "--checkpoint", checkpoint, "--kafka-version", "1.1"]) == 0


@pytest.mark.slow
def test_the_release_the_ingest_detected_is_the_default(
    spark: Any, tmp_path: Path, capsys: Any
) -> None:
    """`release-default/ak2.4` (a 2.4.1 excerpt, see tests/jobs/ingest/test_release.py):
    the ingest records 2.4-2.5 beside its events, the replay takes 2.5 without being told
    and says so; `--kafka-version` overrides it."""
    from jobs.ingest import job as ingest
    from jobs.ingest.release import RELEASE_FILE
    from tests.helpers import INGEST_FIXTURES

    out = tmp_path / "ingest"
    assert ingest.main(["--logs", str(INGEST_FIXTURES / "release-default" / "ak2.4"),
                        "--out", str(out)], spark=spark) == 0
    assert '"kafka_version": "2.4-2.5"' in (out / "events" / RELEASE_FILE).read_text()
    capsys.readouterr()
    for name, extra, isr in (("detected", (), [1, 2]), ("flag", ("--kafka-version", "3.7"), [1])):
        assert main(["--events", str(out / "events"), "--out", str(tmp_path / name),
                     "--run-id", "r1", "--buckets", "2", *extra], spark=spark) == 0
        printed = capsys.readouterr().out
        [row] = read_table(spark, str(tmp_path / name), "partition_states").collect()
        assert list(row["isr"]) == isr, name
        said = [x for x in printed.splitlines() if x.startswith("release replayed:")]
        assert len(said) == 1, printed
        if name == "detected":
            assert said == ["release replayed: Kafka 2.5 (profile 2.5): detected by "
                            "jobs.ingest from the log's formats: 2.4-2.5"]
        else:
            assert said == ["release replayed: Kafka 3.7 (profile 3.7): --kafka-version 3.7"]
