"""Incremental KRaft replays (`--checkpoint`, `jobs/store/kraft_checkpoint.py`): the log of
tests/helpers/kraft_segments.py cut into two nights after broker 1's fence (offsets 0-15,
up to 90 s: `orders` p1 offline from 60 s, open at the first night's end), the second
night its unfence (180 s), p0's ISR growing back, `tmp` created and removed. Two nightly
runs on one checkpoint give the tables of one run of the whole log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobs.ingest import job as ingest
from jobs.replay.job import main as replay
from tests.helpers.kraft_segments import write_segment

pytestmark = pytest.mark.slow


def write_log(folder: Path, nights: int) -> Path:
    """The log's first night (one segment: up to 90 s), or both (a second segment)."""
    for night in (lambda s: s <= 90, lambda s: s > 90)[:nights]:
        write_segment(folder, night)
    return folder


@pytest.fixture(scope="module")
def runs(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("kraft-incremental")
    for nights in (1, 2):
        logs = write_log(tmp / f"logs{nights}", nights)
        assert ingest.main(["--logs", str(logs), "--out", str(tmp / f"ingest{nights}"),
                            "--cluster", "k1"], spark=spark) == 0
    assert replay(["--events", str(tmp / "ingest2"), "--out", str(tmp / "full"),
                   "--run-id", "full"], spark=spark) == 0
    for night in (1, 2):
        assert replay(["--events", str(tmp / f"ingest{night}"), "--out", str(tmp / "inc"),
                       "--run-id", f"n{night}", "--checkpoint", str(tmp / "ck")],
                      spark=spark) == 0
    return tmp


def rows(spark: Any, out: Path, table: str, run_id: str) -> list[dict[str, Any]]:
    found = spark.read.parquet(str(out / table)).where(f"run_id = '{run_id}'").collect()
    return sorted(({k: v for k, v in r.asDict().items() if k != "run_id"} for r in found),
                  key=repr)


def test_the_second_night_s_state_is_one_run_s(spark: Any, runs: Path) -> None:
    for table in ("partition_states", "broker_timeline", "controller_timeline"):
        assert rows(spark, runs / "inc", table, "n2") == rows(spark, runs / "full", table,
                                                              "full"), table


def test_the_windows_of_both_nights_are_one_run_s(spark: Any, runs: Path) -> None:
    latest: dict[tuple[Any, ...], dict[str, Any]] = {}
    for night in ("n1", "n2"):
        for w in rows(spark, runs / "inc", "partition_windows", night):
            latest[(w["topic"], w["partition"], w["kind"], w["start_seq"])] = w
    full = rows(spark, runs / "full", "partition_windows", "full")
    assert sorted(latest.values(), key=repr) == full
    # p1's offline window: open at the first night's end, closed in the second.
    first = [(w["start_seq"], w["end_seq"]) for w in
             rows(spark, runs / "inc", "partition_windows", "n1") if w["kind"] == "offline"]
    # At p1's own records: leader -1 in the fence's batch, its election in the unfence's.
    assert first == [(13, None)]
    assert [(w["start_seq"], w["end_seq"]) for w in full if w["kind"] == "offline"] == \
        [(13, 17)]


def test_the_incident_and_the_offline_seconds(spark: Any, runs: Path) -> None:
    assert rows(spark, runs / "inc", "incidents", "n2") == \
        rows(spark, runs / "full", "incidents", "full")
    [n1] = rows(spark, runs / "inc", "run_summary", "n1")
    [n2] = rows(spark, runs / "inc", "run_summary", "n2")
    [full] = rows(spark, runs / "full", "run_summary", "full")
    # The first night ends at its last record (the fence, 60 s: NoOps are not written):
    # 0 s of p1's window; the second night counts 60-180 s.
    assert (n1["offline_partition_seconds"], n2["offline_partition_seconds"],
            full["offline_partition_seconds"]) == (0.0, 120.0, 120.0)
    skipped = {k: v for k, v in n2["findings_by_kind"].items() if k.startswith("skipped:")}
    # The first night's 14 records (offsets 0-14 but its NoOp, 11) were folded by n1.
    assert skipped["skipped:before_checkpoint"] == 14
    assert n2["rows_read"] == n2["rows_applied"] + sum(skipped.values())


def test_a_run_id_the_checkpoint_holds_and_another_profile(
        spark: Any, runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = rows(spark, runs / "inc", "partition_states", "n2")
    assert replay(["--events", str(runs / "ingest2"), "--out", str(runs / "inc"),
                   "--run-id", "n2", "--checkpoint", str(runs / "ck")], spark=spark) == 0
    assert rows(spark, runs / "inc", "partition_states", "n2") == before
    capsys.readouterr()
    assert replay(["--events", str(runs / "ingest2"), "--out", str(runs / "inc"),
                   "--run-id", "n3", "--checkpoint", str(runs / "ck"),
                   "--kafka-version", "4.0"], spark=spark) == 2
    assert "was built under KRaft profile 3.6" in capsys.readouterr().err


def test_the_checkpoint_with_another_out_is_refused_before_any_write(
        spark: Any, runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert replay(["--events", str(runs / "ingest2"), "--out", str(runs / "elsewhere"),
                   "--run-id", "n3", "--checkpoint", str(runs / "ck")], spark=spark) == 2
    [line] = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert f"give --out {runs / 'inc'}" in line
    assert not (runs / "elsewhere").exists()
