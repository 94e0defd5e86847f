"""The audit end to end on two small replayed logs with hand-derived answers: one that ends
healthy (every check silent, exit 0) and one built so that each check of the end state and
of the run's events fires (exit 1 with --fail-on critical); plus the snapshot comparison.

Times: `ts_of(seq)` is T0 + seq seconds, so ages and window lengths are read off the seqs.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jobs.audit.job import main as audit_main
from jobs.audit.load import read_checks
from jobs.replay.job import main as replay_main
from schemas import event_types as ET
from tests.helpers.event_log import created, ev, failover, ts_of, write_log

# Two replays and a dozen audits: about two minutes on two cores.
pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "audit"


def healthy_log() -> list[dict[str, Any]]:
    """t0: three partitions on brokers 1-3, preferred leaders 1, 2, 3, full ISRs; the ISR of
    t0-1 shrinks at seq 5 and grows back at seq 6."""
    return [
        failover(1, 1, [1, 2, 3]),
        created(2, "t0", 0, [1, 2, 3]),
        created(3, "t0", 1, [2, 3, 1]),
        created(4, "t0", 2, [3, 1, 2]),
        ev(5, ET.ISR_CHANGED, topic="t0", partition=1, isr=[2, 3]),
        ev(6, ET.ISR_CHANGED, topic="t0", partition=1, isr=[2, 3, 1]),
    ]


def outage_log() -> list[dict[str, Any]]:
    """Brokers 1-4 live, then broker 3 fails at seq 60 (hand-derived results in the tests):

    solo-0 [3]        sole replica on broker 3: offline from seq 60
    pair-0 [1,2]      ISR shrinks to [1]: under-replicated, at min ISR
    dirty-0 [3,1]     unclean election allowed, ISR [3]: broker 1 elected unclean at seq 60
    moving-0 [1,2]    reassigned to [1,2,5] at seq 20, broker 5 never comes: stuck; each
                      new controller resumes it and tries NewReplica on replica 5, which is
                      OfflineReplica (dead broker): an invalid transition, as Kafka logs it
    doomed-0 [1,2]    deleted at seq 70 (each failover restarts the deletion), broker 2
                      answers StopReplica with an error at seq 85: the deletion is stuck,
                      replica 2 ReplicaDeletionIneligible
    controller        failovers at seq 80, 81, 82 (3 > 2)
    broker 4          restarts at 92, 94, 96, 98 (4 > 3)
    last event        seq 200
    """
    rows = [
        failover(1, 1, [1, 2, 3, 4]),
        created(2, "solo", 0, [3]),
        created(3, "pair", 0, [1, 2]),
        created(4, "dirty", 0, [3, 1], unclean_leader_election=True),
        created(5, "moving", 0, [1, 2]),
        created(6, "doomed", 0, [1, 2]),
        ev(10, ET.ISR_CHANGED, topic="pair", partition=0, isr=[1]),
        ev(11, ET.ISR_CHANGED, topic="dirty", partition=0, isr=[3]),
        ev(20, ET.REASSIGNMENT_REQUESTED, topic="moving", partition=0, replicas=[1, 2, 5]),
        ev(60, ET.BROKER_FAILURE, broker_id=3),
        ev(70, ET.TOPIC_DELETION_REQUESTED, topic="doomed"),
        failover(80, 2, [1, 2, 4]),
        failover(81, 1, [1, 2, 4]),
        failover(82, 2, [1, 2, 4]),
        ev(85, ET.STOP_REPLICA_RESPONSE, topic="doomed", partition=0, broker_id=2,
           error="KAFKA_STORAGE_ERROR"),
    ]
    for seq in (91, 93, 95, 97):
        rows += [ev(seq, ET.BROKER_FAILURE, broker_id=4), ev(seq + 1, ET.BROKER_STARTUP,
                                                            broker_id=4)]
    rows.append(ev(200, ET.ISR_CHANGED, topic="pair", partition=0, isr=[1]))
    return rows


def replay(tmp: Path, name: str, rows: list[dict[str, Any]], spark: SparkSession) -> Path:
    write_log(tmp / name / "events", rows)
    out = tmp / name / "tables"
    assert replay_main(["--events", str(tmp / name / "events"), "--out", str(out),
                        "--run-id", "r1", "--buckets", "2"], spark=spark) == 0
    return out


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory, spark: SparkSession) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("audit")
    return {"healthy": replay(tmp, "healthy", healthy_log(), spark),
            "outage": replay(tmp, "outage", outage_log(), spark)}


def audit(spark: SparkSession, tables: Path, *args: str) -> tuple[int, list[Any]]:
    rc = audit_main(["--tables", str(tables), "--run-id", "r1", *args], spark=spark)
    rows = read_checks(spark, str(tables)).where("run_id = 'r1'").collect() if rc < 2 else []
    return rc, rows


def by_check(rows: list[Any]) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for r in rows:
        found.setdefault(r["check"], []).append(r)
    return found


def test_a_healthy_log_passes_with_no_rows(spark: SparkSession, tables: dict[str, Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    rc, rows = audit(spark, tables["healthy"], "--fail-on", "warning")
    assert (rc, rows) == (0, [])
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == "audit verdict: PASS (nothing found)"
    assert "cluster default: 0 partition(s) went offline in 0 window(s)" in "\n".join(out)


def test_each_check_fires_on_the_outage_log(spark: SparkSession, tables: dict[str, Path],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    rc, rows = audit(spark, tables["outage"], "--fail-on", "critical",
                     "--max-reassignment-age", "60s", "--max-deletion-age", "60s")
    assert rc == 1
    found = by_check(rows)
    where = {check: sorted(((r["topic"], r["partition"], r["broker_id"]) for r in rs), key=repr)
             for check, rs in found.items()}
    assert where["unavailable_partition"] == [("solo", 0, 3)]
    assert found["unavailable_partition"][0]["since_ts"] == ts_of(60).replace(tzinfo=None)
    assert where["under_min_isr_partition"] == [("solo", 0, None)]
    # ISR [1] of [3,1] and of [1,2]; moving is not under-replicated: its ISR [1,2] is its
    # replication factor during the reassignment (the assignment less the adding replica 5).
    assert where["under_replicated_partition"] == [("dirty", 0, None), ("pair", 0, None)]
    # ISR of size 1 = min.insync.replicas 1: pair, dirty (elected 1 alone), solo (its last ISR).
    assert where["at_min_isr_partition"] == [("dirty", 0, None), ("pair", 0, None),
                                             ("solo", 0, None)]
    assert where["unclean_election"] == [("dirty", 0, 1)]
    # No broker log was given to the replay: the figure is unknown, and says why.
    assert found["unclean_election"][0]["detail"].endswith(
        "; data loss: unknown for dirty-0: no broker offset evidence was given "
        "(offset_evidence beside the events, or --offset-evidence) (broker 1 elected at "
        "leader epoch 1; old leader broker 3); proof: no line")
    assert where["stuck_reassignment"] == [("moving", 0, None)]
    assert where["stuck_deletion"] == [("doomed", 0, 2), ("doomed", 0, None)]
    # Broker 3 is the preferred replica of solo (no leader) and dirty (led by 1): 100%.
    assert where["leader_imbalance"] == [(None, None, 3)]
    assert where["controller_churn"] == [(None, None, None)]
    assert where["broker_flapping"] == [(None, None, 4)]
    assert where["invalid_transition"] == [("moving", 0, 5)]
    assert "invariant_violation" not in found
    # solo-0 offline from seq 60 to the last event, seq 200: 140 partition-seconds.
    [offline] = found["offline_during_run"]
    assert offline["severity"] == "warning"
    assert offline["detail"].startswith("140.0 partition-second(s) offline during the run")
    assert "between the start of the log and " in offline["detail"]  # a first run's period
    out = capsys.readouterr().out
    assert "solo-0" in out and "still offline" in out and "BrokerFailure of broker 3" in out
    # The incident comes first, in one line with its seq and time: broker 3's failure took
    # solo-0 (its only replica) offline, and nothing brought it back.
    lines = out.splitlines()
    lost = lines.index("  data loss of the unclean elections (from the brokers' logs):")
    # Broker 1 was elected in the failure's own event: no offline window, no incident.
    assert lines[lost + 1].startswith("    seq 60: unknown for dirty-0: ")
    incident = next(i for i, line in enumerate(lines) if "incident at seq 60:" in line)
    assert incident < next(i for i, line in enumerate(lines) if "longest offline" in line)
    assert ("incident at seq 60: BrokerFailure of broker 3 at 2026-11-20 00:01:00 took 1 "
            "partition(s) of 1 topic(s) offline or under min ISR (peak 1 offline)"
            in lines[incident]) and "still open at the run's end" in lines[incident]
    # The hand-written log numbers its events with gaps (1-6, 10, 11, 20, 60, ...): the audit
    # names them as seqs that never arrived, first, since the rest describes a replay of an
    # incomplete log.
    assert out.strip().splitlines()[-1].startswith(
        "audit verdict: FAIL (critical: missing_events 1, unavailable_partition 1, "
        "under_min_isr_partition 1, unclean_election 1; warning: ")


def test_fail_on_never(spark: SparkSession, tables: dict[str, Path]) -> None:
    assert audit(spark, tables["outage"], "--fail-on", "never")[0] == 0


def test_thresholds_silence_the_age_and_churn_checks(spark: SparkSession,
                                                      tables: dict[str, Path]) -> None:
    _, rows = audit(spark, tables["outage"], "--max-reassignment-age", "1h",
                    "--max-deletion-age", "1h", "--max-failovers", "3", "--max-restarts", "4",
                    "--leader-imbalance-percentage", "100")
    found = by_check(rows)
    assert [r["broker_id"] for r in found["stuck_deletion"]] == [2]  # ineligible: always
    for check in ("stuck_reassignment", "controller_churn", "broker_flapping",
                  "leader_imbalance"):
        assert check not in found


@pytest.mark.parametrize("fixture", ["describe-3.7-two-mistakes.txt",
                                     "describe-1.1-two-mistakes-ghost.txt"])
def test_a_snapshot_with_a_wrong_leader_and_a_wrong_isr(
        spark: SparkSession, tables: dict[str, Path], fixture: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    rc, rows = audit(spark, tables["healthy"], "--observed", str(FIXTURES / fixture))
    assert rc == 1
    found = by_check(rows)
    details = sorted((r["topic"], r["partition"], r["detail"].split(" (")[0])
                     for r in found["observed_divergence"])
    assert details == [("t0", 0, "leader: observed 2, replayed 1"),
                       ("t0", 1, "isr: observed [2,3], replayed [2,3,1]")]
    unknown = [(r["topic"], r["partition"]) for r in found.get("observed_unknown_partition", [])]
    out = capsys.readouterr().out
    if "ghost" in fixture:
        assert unknown == [("ghost", 0)]
        assert "unreadable line" in out and ":11:" in out
        assert "1 unreadable line(s)" in out
    else:
        assert unknown == [] and "0 unreadable line(s)" in out


def test_observed_at_compares_with_the_state_then(spark: SparkSession,
                                                  tables: dict[str, Path]) -> None:
    snapshot = str(FIXTURES / "describe-2.4-isr-shrunk.txt")
    at = (ts_of(5) + timedelta(milliseconds=500)).isoformat()
    rc, rows = audit(spark, tables["healthy"], "--observed", snapshot, "--observed-at", at)
    assert (rc, rows) == (0, [])
    rc, rows = audit(spark, tables["healthy"], "--observed", snapshot)
    assert rc == 1
    assert [(r["partition"], r["detail"].split(" (")[0]) for r in rows] == [
        (1, "isr: observed [2,3], replayed [2,3,1]")]


def test_unreadable_input_exits_2(spark: SparkSession, tables: dict[str, Path], tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert audit_main(["--tables", str(tmp_path / "none"), "--run-id", "r1"], spark=spark) == 2
    assert audit_main(["--tables", str(tables["healthy"]), "--run-id", "r9"], spark=spark) == 2
    missing = str(tmp_path / "missing.txt")
    assert audit_main(["--tables", str(tables["healthy"]), "--run-id", "r1",
                       "--observed", missing], spark=spark) == 2
    assert audit_main(["--tables", str(tables["healthy"]), "--run-id", "../../r1"],
                      spark=spark) == 2  # a run id names a directory: never a path
    errors = [line for line in capsys.readouterr().err.splitlines() if "[audit]" in line]
    assert len(errors) == 4 and "missing.txt" in errors[2] and "r9" in errors[1]
    assert "letters, digits" in errors[3]


@pytest.mark.parametrize("log,fail_on,expected", [
    ("outage", "critical", 1), ("healthy", "critical", 0), ("outage", "never", 0)])
def test_replay_with_audit_is_one_nightly_job_whose_exit_code_is_the_verdict(
    spark: SparkSession, tmp_path: Path, log: str, fail_on: str, expected: int
) -> None:
    rows = outage_log() if log == "outage" else healthy_log()
    write_log(tmp_path / "events", rows)
    rc = replay_main(["--events", str(tmp_path / "events"), "--out", str(tmp_path / "out"),
                      "--checkpoint", str(tmp_path / "chk"), "--run-id", "n1",
                      "--buckets", "2", "--audit", "--fail-on", fail_on], spark=spark)
    assert rc == expected
    checks = read_checks(spark, str(tmp_path / "out")).where("run_id = 'n1'")
    unavailable = checks.where("check = 'unavailable_partition'").collect()
    assert [(r["topic"], r["partition"]) for r in unavailable] == \
        ([("solo", 0)] if log == "outage" else [])
