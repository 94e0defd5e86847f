"""`--verdict-json` and `--prometheus`: the writers on hand-made results (pure), the flags
refused before Spark starts, and one replay whose audit publishes both files."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from pyspark.sql import SparkSession

from jobs.audit import publish as P
from jobs.audit.checks import CHECKS
from jobs.audit.job import main as audit_main
from jobs.audit.run import AuditResult, CheckCount
from jobs.replay.job import main as replay_main
from tests.helpers.event_log import write_log
from tests.jobs.audit.test_audit import outage_log

T1 = datetime(2026, 11, 22, 2, 30, tzinfo=UTC)
T2 = datetime(2026, 11, 23, 2, 30, tzinfo=UTC)
FIGURES = {"east": P.ClusterFigures(rows_read=10, rows_applied=7, rows_duplicate=1,
                                    rows_quarantined=1, rows_late=1, offline_partitions=2,
                                    offline_partition_seconds=30.5, seq_min=1, seq_max=12,
                                    seq_gaps=((4, 5),), missing_seqs=2, late_seq_min=3,
                                    late_seq_max=3),
           "west": P.ClusterFigures()}


def failing() -> AuditResult:
    return AuditResult("r1", P.FAIL, 1, "critical",
                       [CheckCount("critical", "unavailable_partition", 2),
                        CheckCount("warning", "broker_flapping", 1)])


def samples(path: Path) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """metric name -> labels -> value, parsed back with prometheus_client's own parser."""
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(path.read_text(encoding="utf-8")):
        for s in family.samples:
            found.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return found


def publish_both(tmp: Path, result: AuditResult, at: datetime,
                 clusters: dict[str, P.ClusterFigures] | None = None) -> None:
    P.publish(result, FIGURES if clusters is None else clusters,
              verdict_json=str(tmp / "verdict.json"), prometheus=str(tmp / "audit.prom"),
              finished_at=at)


# -- the writers -------------------------------------------------------------------------------

def test_the_verdict_json_holds_the_verdict_every_check_and_each_clusters_figures(
        tmp_path: Path) -> None:
    publish_both(tmp_path, failing(), T1)
    doc = json.loads((tmp_path / "verdict.json").read_text())
    assert {k: doc[k] for k in ("run_id", "verdict", "exit_code", "fail_on", "finished_at",
                                "error")} == {
        "run_id": "r1", "verdict": "FAIL", "exit_code": 1, "fail_on": "critical",
        "finished_at": "2026-11-22T02:30:00Z", "error": None}
    rows = {c["check"]: (c["severity"], c["rows"]) for c in doc["checks"]}
    assert list(rows) == list(CHECKS)  # every known check, silent ones at 0
    assert rows["unavailable_partition"] == ("critical", 2)
    assert rows["broker_flapping"] == ("warning", 1)
    assert rows["unclean_election"] == ("critical", 0)
    east = doc["clusters"]["east"]
    assert (east["rows_read"], east["offline_partitions"], east["offline_partition_seconds"],
            east["missing_seqs"], east["late_seq_max"]) == (10, 2, 30.5, 2, 3)
    assert east["seq_gaps"] == [{"seq_from": 4, "seq_to": 5}]
    assert doc["clusters"]["west"]["seq_min"] is None
    assert sorted(os.listdir(tmp_path)) == ["audit.prom", "verdict.json"]  # no temp file left


def test_the_textfile_parses_back_with_a_gauge_per_check_and_per_cluster(
        tmp_path: Path) -> None:
    publish_both(tmp_path, failing(), T1)
    found = samples(tmp_path / "audit.prom")
    both = (("cluster", "east,west"),)  # the run's series: every cluster it audited
    assert found["kafka_replay_verdict"] == {both: 1.0}
    assert found["kafka_replay_last_success_timestamp_seconds"] == {both: T1.timestamp()}
    assert found["kafka_replay_run_info"] == {(("cluster", "east,west"), ("run_id", "r1")): 1.0}
    checks = found["kafka_replay_check_rows"]
    assert len(checks) == len(CHECKS)
    assert checks[(("check", "unavailable_partition"), ("cluster", "east,west"),
                   ("severity", "critical"))] == 2.0
    assert checks[(("check", "stuck_deletion"), ("cluster", "east,west"),
                   ("severity", "warning"))] == 0.0
    assert found["kafka_replay_offline_partitions"] == {(("cluster", "east"),): 2.0,
                                                        (("cluster", "west"),): 0.0}
    assert found["kafka_replay_offline_partition_seconds"][(("cluster", "east"),)] == 30.5
    assert found["kafka_replay_late_rows"][(("cluster", "east"),)] == 1.0
    assert found["kafka_replay_seq_gaps"][(("cluster", "east"),)] == 2.0
    assert [found[f"kafka_replay_rows_{n}"][(("cluster", "east"),)]
            for n in ("read", "applied", "quarantined", "late")] == [10.0, 7.0, 1.0, 1.0]
    assert found["kafka_replay_rows_read"][(("cluster", "west"),)] == 0.0
    assert all(dict(labels).get("cluster") for series in found.values() for labels in series)
    assert all(name.startswith("kafka_replay_") for name in found)


def test_an_error_run_keeps_the_last_success_and_says_why(tmp_path: Path) -> None:
    publish_both(tmp_path, AuditResult("r1", P.PASS, 0, "critical"), T1)
    error = P.failed("r2", "critical", 2, "run id r2 not found under out")
    publish_both(tmp_path, error, T2, clusters={})
    found = samples(tmp_path / "audit.prom")
    # No figures: the cluster label is carried over from the file it replaces.
    assert found["kafka_replay_verdict"] == {(("cluster", "east,west"),): 2.0}
    assert found["kafka_replay_last_success_timestamp_seconds"] == \
        {(("cluster", "east,west"),): T1.timestamp()}
    assert "kafka_replay_check_rows" not in found  # nothing was checked: no false 0
    doc = json.loads((tmp_path / "verdict.json").read_text())
    assert (doc["verdict"], doc["exit_code"], doc["checks"], doc["clusters"]) == \
        ("ERROR", 2, [], {})
    assert doc["error"] == "run id r2 not found under out"
    assert doc["finished_at"] == "2026-11-23T02:30:00Z"
    # A FAIL is a success of the audit: the tool worked, it found something.
    publish_both(tmp_path, failing(), T2)
    assert samples(tmp_path / "audit.prom")["kafka_replay_last_success_timestamp_seconds"] \
        == {(("cluster", "east,west"),): T2.timestamp()}


@pytest.mark.parametrize("previous", [None, "not a metric {{{\n", "other_metric 5\n"])
def test_an_error_with_no_success_before_says_0(tmp_path: Path, previous: str | None) -> None:
    if previous is not None:
        (tmp_path / "audit.prom").write_text(previous)
    publish_both(tmp_path, P.failed("r1", "critical", 75, "checkpoint busy"), T2, {})
    assert samples(tmp_path / "audit.prom")["kafka_replay_last_success_timestamp_seconds"] \
        == {(("cluster", "unknown"),): 0.0}  # the staleness alert fires: never a success


def test_a_run_that_read_nothing_new_keeps_the_last_success(tmp_path: Path) -> None:
    """A stopped exporter delivers nothing: the audit passes over a stale state. The last
    success stays the last night that read rows, so the staleness alert can fire."""
    publish_both(tmp_path, AuditResult("n1", P.PASS, 0, "critical"), T1)
    quiet = {"east": P.ClusterFigures(), "west": P.ClusterFigures()}
    nothing = AuditResult("n2", P.PASS, 0, "critical",
                          [CheckCount("warning", "no_new_events", 2)])
    publish_both(tmp_path, nothing, T2, clusters=quiet)
    found = samples(tmp_path / "audit.prom")
    assert found["kafka_replay_last_success_timestamp_seconds"] == \
        {(("cluster", "east,west"),): T1.timestamp()}
    assert found["kafka_replay_rows_read"] == {(("cluster", "east"),): 0.0,
                                               (("cluster", "west"),): 0.0}
    assert found["kafka_replay_check_rows"][(("check", "no_new_events"),
                                             ("cluster", "east,west"),
                                             ("severity", "warning"))] == 2.0
    # With no success ever, 0: the alert fires at once.
    other = tmp_path / "other"
    other.mkdir()
    publish_both(other, nothing, T2, clusters=quiet)
    assert samples(other / "audit.prom")["kafka_replay_last_success_timestamp_seconds"] == \
        {(("cluster", "east,west"),): 0.0}


def test_a_configured_severity_is_the_one_published(tmp_path: Path) -> None:
    critical = AuditResult("n2", P.FAIL, 1, "critical",
                           [CheckCount("critical", "no_new_events", 1)])
    rows = {c["check"]: c["severity"] for c in P.check_rows(critical)}
    assert (rows["no_new_events"], rows["offline_during_run"]) == ("critical", "warning")


def test_a_replay_that_stopped_is_an_error_with_its_exit_code(tmp_path: Path) -> None:
    publish_both(tmp_path, P.replay_stopped("n1", None, 75), T2, {})
    doc = json.loads((tmp_path / "verdict.json").read_text())
    assert (doc["verdict"], doc["exit_code"], doc["fail_on"]) == ("ERROR", 75, "critical")
    assert "in use by another run" in doc["error"]


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "verdict.json"
    target.write_text("old")

    def broken(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(P.os, "replace", broken)
    with pytest.raises(OSError):
        P.replace_atomically(target, "new")
    assert os.listdir(tmp_path) == ["verdict.json"] and target.read_text() == "old"


def test_a_failed_write_is_one_line_and_keeps_the_verdicts_exit_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gone = tmp_path / "gone" / "verdict.json"
    rc = P.publish(failing(), {}, verdict_json=str(gone), prometheus=None, finished_at=T1)
    assert rc == 1
    err = capsys.readouterr().err.strip()
    assert "not written" in err and err.count("\n") == 0


def test_figures_before_and_after_run_summary_has_the_seq_columns() -> None:
    before: dict[str, Any] = {"rows_read": 4, "rows_late": 1, "offline_partition_seconds": 2.0,
                              "partitions_by_state": {"OfflinePartition": 3,
                                                      "OnlinePartition": 5}}
    assert P.figures_of(before) == P.ClusterFigures(rows_read=4, rows_late=1,
                                                    offline_partitions=3,
                                                    offline_partition_seconds=2.0)
    after = {**before, "seq_min": 1, "seq_max": 9, "missing_seqs": 3,
             "seq_gaps": [{"seq_from": 2, "seq_to": 3}, {"seq_from": 7, "seq_to": 7}],
             "late_seq_min": None, "late_seq_max": None}
    figures = P.figures_of(after)
    assert (figures.seq_min, figures.seq_max, figures.missing_seqs, figures.seq_gaps) == \
        (1, 9, 3, ((2, 3), (7, 7)))


# -- the flags, refused before Spark starts ------------------------------------------------------

@pytest.mark.parametrize("flag,name", [("--prometheus", "audit.txt"),
                                       ("--prometheus", "gone/audit.prom"),
                                       ("--verdict-json", "gone/verdict.json")])
def test_a_file_to_publish_that_cannot_be_written_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, name: str) -> None:
    said = "must end in .prom" if name.endswith(".txt") else "does not exist"
    rc = audit_main(["--tables", str(tmp_path), "--run-id", "r1", flag, str(tmp_path / name)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert said in err[0]
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("flags", [
    ["--verdict-json", "verdict.json"],
    ["--prometheus", "audit.prom"],
    # A scheduler asking for --fail-on without --audit would read exit 0 as a pass.
    ["--fail-on", "critical"],
    ["--observed", "describe.txt"],
])
def test_an_audit_flag_without_audit_is_refused_by_the_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str]) -> None:
    rc = replay_main(["--events", str(tmp_path / "events"), "--out", str(tmp_path / "out"),
                      flags[0], str(tmp_path / flags[1]) if flags[0] != "--fail-on"
                      else flags[1]])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert rc == 2 and len(err) == 1
    assert f"{flags[0]} configure the audit of the run: add --audit" in err[0]
    assert os.listdir(tmp_path) == []


def test_bad_input_before_spark_is_still_published_as_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = audit_main(["--tables", str(tmp_path), "--run-id", "../r1",
                     "--verdict-json", str(tmp_path / "verdict.json")])
    doc = json.loads((tmp_path / "verdict.json").read_text())
    assert rc == 2 and (doc["verdict"], doc["exit_code"]) == ("ERROR", 2)
    assert "letters, digits" in doc["error"]
    assert "letters, digits" in capsys.readouterr().err


# -- one replay, its audit, and the audit run again ---------------------------------------------

@pytest.mark.slow
def test_the_nightly_job_publishes_its_verdict_and_the_runs_figures(
        spark: SparkSession, tmp_path: Path) -> None:
    rows = outage_log()
    write_log(tmp_path / "events", rows)
    out, verdict, prom = tmp_path / "out", tmp_path / "verdict.json", tmp_path / "audit.prom"
    flags = ["--verdict-json", str(verdict), "--prometheus", str(prom)]
    assert replay_main(["--events", str(tmp_path / "events"), "--out", str(out),
                        "--run-id", "r1", "--buckets", "2", "--audit", *flags],
                       spark=spark) == 1
    doc = json.loads(verdict.read_text())
    assert (doc["run_id"], doc["verdict"], doc["exit_code"]) == ("r1", "FAIL", 1)
    assert {c["check"]: c["rows"] for c in doc["checks"]}["unavailable_partition"] == 1
    default = doc["clusters"]["default"]
    # solo-0 (sole replica on broker 3) offline from seq 60 to the last event, seq 200.
    assert (default["rows_read"], default["rows_late"], default["offline_partitions"],
            default["offline_partition_seconds"]) == (len(rows), 0, 1, 140.0)
    assert default["missing_seqs"] == sum(g["seq_to"] - g["seq_from"] + 1
                                          for g in default["seq_gaps"])
    first = samples(prom)
    assert first["kafka_replay_offline_partitions"] == {(("cluster", "default"),): 1.0}
    default_label = (("cluster", "default"),)
    success = first["kafka_replay_last_success_timestamp_seconds"][default_label]
    assert success > T1.timestamp()

    # The same audit on a run that is not there: ERROR, the last success carried over.
    assert audit_main(["--tables", str(out), "--run-id", "r9", *flags], spark=spark) == 2
    doc = json.loads(verdict.read_text())
    assert (doc["verdict"], doc["clusters"]) == ("ERROR", {}) and "r9" in doc["error"]
    again = samples(prom)
    assert again["kafka_replay_verdict"] == {default_label: 2.0}
    assert again["kafka_replay_last_success_timestamp_seconds"] == {default_label: success}

    assert audit_main(["--tables", str(out), "--run-id", "r1", "--fail-on", "never",
                       *flags], spark=spark) == 0
    assert json.loads(verdict.read_text())["verdict"] == "PASS"
    assert samples(prom)["kafka_replay_verdict"] == {default_label: 0.0}
    assert sorted(os.listdir(tmp_path)) == ["audit.prom", "events", "out", "verdict.json"]


def test_an_audit_without_tables_publishes_its_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A scheduler's mistyped command line still reaches the verdict file and the textfile
    (the staleness alert and the ERROR verdict say it), with the cluster asked for."""
    rc = audit_main(["--cluster", "east", "--verdict-json", str(tmp_path / "verdict.json"),
                     "--prometheus", str(tmp_path / "audit.prom")])
    doc = json.loads((tmp_path / "verdict.json").read_text())
    assert rc == 2 and (doc["verdict"], doc["exit_code"]) == ("ERROR", 2)
    assert "required: --tables" in doc["error"]
    assert "required: --tables" in capsys.readouterr().err
    assert samples(tmp_path / "audit.prom")["kafka_replay_verdict"] == \
        {(("cluster", "east"),): 2.0}
