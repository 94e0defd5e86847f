"""What `jobs.replay` refuses on a KRaft log, with exit 2 and one line, before Spark
starts (the input is a `metadata_records` table written with pyarrow)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.replay.job import main as replay
from schemas.arrow import arrow_schema
from schemas.ingest import METADATA_RECORDS_SCHEMA


@pytest.fixture
def events(tmp_path: Path) -> Path:
    folder = tmp_path / "metadata_records"
    folder.mkdir()
    row = {"cluster": "k1", "offset": 0, "record_type": "TopicRecord", "api_key": 2}
    pq.write_table(pa.Table.from_pylist([row], schema=arrow_schema(METADATA_RECORDS_SCHEMA)),
                   folder / "part-0.parquet")
    return folder


@pytest.mark.parametrize("extra, says", [
    (["--rebuild"], "--rebuild rebuilds a --checkpoint: give the checkpoint"),
    (["--kafka-version", "3.2"], "3.2 is a ZooKeeper-only release line"),
    (["--kafka-version", "2.8.1"], "2.8.1 is a ZooKeeper-only release line"),
    (["--kafka-version", "three"], "malformed Kafka version"),
    (["--initial-state", "x.txt"], "starts from the log's snapshot"),
    (["--fail-on", "warning"], "add --audit"),
])
def test_refused_with_exit_2(events: Path, tmp_path: Path, extra: list[str], says: str,
                             capsys: pytest.CaptureFixture[str]) -> None:
    args = [a.replace("CK", str(tmp_path / "ck")) for a in extra]
    rc = replay(["--events", str(events), "--out", str(tmp_path / "out"), *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and says in err[0]
    assert not (tmp_path / "out").exists() and not (tmp_path / "ck").exists()


def _refused(events: Path, out: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert replay(["--events", str(events), "--out", str(out), *extra]) == 2
    assert not out.exists()
    return capsys.readouterr().err.strip()


def test_a_checkpoint_or_a_zookeeper_release_on_a_kraft_log(
        events: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    said = _refused(events, out, capsys, "--rebuild")
    assert "rebuilds a --checkpoint: give the checkpoint" in said
    said = _refused(events, out, capsys, "--kafka-version", "3.2")
    assert "is a ZooKeeper-only release line" in said
