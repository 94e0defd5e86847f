"""`no_new_events` and `offline_during_run` on a nightly schedule: night 1 replays a log
with `--checkpoint`, night 2 finds no new file (a stopped exporter) and must neither pass
in silence nor refresh the last success the staleness alert watches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from jobs.audit.freshness import NO_NEW_EVENTS
from jobs.audit.options import options_from_config
from jobs.replay.job import main as replay_main
from tests.helpers.event_log import write_log
from tests.jobs.audit.test_audit import healthy_log
from tests.jobs.audit.test_publish import samples

pytestmark = pytest.mark.slow


def night(tmp: Path, run_id: str, spark: SparkSession, *flags: str) -> int:
    return replay_main(["--events", str(tmp / "events"), "--out", str(tmp / "out"),
                        "--checkpoint", str(tmp / "chk"), "--run-id", run_id,
                        "--buckets", "2", "--audit", "--fail-on", "warning",
                        "--verdict-json", str(tmp / "verdict.json"),
                        "--prometheus", str(tmp / "replay.prom"), *flags], spark=spark)


def test_a_night_that_read_nothing_warns_and_keeps_the_last_success(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_log(tmp_path / "events", healthy_log(), "night1")
    assert night(tmp_path, "n1", spark) == 0
    first = samples(tmp_path / "replay.prom")
    label = (("cluster", "default"),)
    success = first["kafka_replay_last_success_timestamp_seconds"][label]
    assert first["kafka_replay_rows_read"] == {label: len(healthy_log())}
    capsys.readouterr()

    # Night 2: the exporter stopped, no file arrived.
    assert night(tmp_path, "n2", spark) == 1  # --fail-on warning: the warning fails it
    out = capsys.readouterr().out
    [verdict] = [line for line in out.splitlines() if line.startswith("audit verdict:")]
    assert verdict == "audit verdict: FAIL (warning: no_new_events 1)"
    assert "the last run that read any was n1" in out
    doc = json.loads((tmp_path / "verdict.json").read_text())
    rows = {c["check"]: (c["severity"], c["rows"]) for c in doc["checks"]}
    assert rows[NO_NEW_EVENTS] == ("warning", 1)
    assert doc["clusters"]["default"]["rows_read"] == 0
    second = samples(tmp_path / "replay.prom")
    assert second["kafka_replay_rows_read"] == {label: 0.0}
    assert second["kafka_replay_run_info"] == {(("cluster", "default"), ("run_id", "n2")): 1.0}
    # Not refreshed: the staleness alert (time() - last success > 26 h) can fire.
    assert second["kafka_replay_last_success_timestamp_seconds"] == {label: success}


def test_the_severity_and_age_come_from_the_config(tmp_path: Path) -> None:
    conf = tmp_path / "audit.toml"
    conf.write_text('[audit]\nno_new_events_severity = "critical"\nno_new_events_age = "2d"\n'
                    "max_offline_partition_seconds = 30\n")
    options = options_from_config(str(conf))
    assert (options.no_new_events_severity, options.no_new_events_age,
            options.max_offline_partition_seconds) == ("critical", 172800.0, 30.0)
    assert options_from_config(None).no_new_events_severity == "warning"
    conf.write_text('[audit]\nno_new_events_severity = "critcal"\n')
    with pytest.raises(ValueError, match="no_new_events_severity"):
        options_from_config(str(conf))
