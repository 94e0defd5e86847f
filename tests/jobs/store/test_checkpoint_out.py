"""A checkpoint records its `--out`: night 2 on the same `--checkpoint` with another `--out`
would write a state that holds only the partitions it changed. It is refused with exit 2
and the remedy, in one line, before anything is written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from jobs.replay.job import main as replay_main
from jobs.store.checkpoint_out import normalized_out, out_mismatch, record_out, recorded_out
from tests.helpers.event_log import write_log
from tests.jobs.audit.test_audit import healthy_log


def test_the_mismatch_names_the_recorded_out_and_the_remedy(tmp_path: Path) -> None:
    settings = tmp_path / "replay-settings.json"
    assert recorded_out(str(settings)) is None  # no file: nothing to hold to
    settings.write_text(json.dumps({"buckets": 8, "kafka_profile": "3.7"}) + "\n")
    assert recorded_out(str(settings)) is None  # a checkpoint from before it recorded one
    record_out(str(settings), "out/a/")
    pinned = json.loads(settings.read_text())
    assert pinned == {"buckets": 8, "kafka_profile": "3.7",
                      "out": os.path.abspath("out/a")}
    recorded = recorded_out(str(settings))
    assert out_mismatch("chk", recorded, "out/a") is None  # the same, however spelled
    assert out_mismatch("chk", recorded, os.path.abspath("out/a") + "/") is None
    problem = out_mismatch("chk", recorded, "out/b")
    assert problem is not None and "\n" not in problem
    assert f"give --out {os.path.abspath('out/a')}" in problem
    assert "with a new --checkpoint (or --rebuild)" in problem
    assert normalized_out("hdfs://nn/kafka/replay/") == "hdfs://nn/kafka/replay"


def _files(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime
            for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_a_checkpoint_reused_with_another_out_is_refused_before_any_write(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events, chk = tmp_path / "events", tmp_path / "chk"
    write_log(events, healthy_log(), "night1")

    def night(run_id: str, out: Path) -> int:
        return replay_main(["--events", str(events), "--out", str(out), "--checkpoint",
                            str(chk), "--run-id", run_id, "--buckets", "2"], spark=spark)

    assert night("n1", tmp_path / "a") == 0
    before = _files(chk)
    capsys.readouterr()
    assert night("n2", tmp_path / "b") == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1
    assert f"holds the state of runs written to --out {tmp_path / 'a'}" in err[0]
    assert f"give --out {tmp_path / 'a'}" in err[0]
    assert not (tmp_path / "b").exists()  # nothing written: not --out, not the checkpoint
    assert _files(chk) == before
