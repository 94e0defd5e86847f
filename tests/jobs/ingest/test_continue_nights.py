"""The nightly ingest -> replay schedule of docs/audit.md over three nights of real-format
controller.log files (the 2.2 sample's lines, one night a day, named as log4j's daily
rotation names them): each night ingested with `--continue-from` the replay's events folder,
delivered there and replayed on one checkpoint, gives the events and the state of the three
nights ingested and replayed at once; a night read again with the next one is not written
twice; a night older than the log is refused (the plan, without Spark).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from chispa import assert_df_equality

from jobs.common.exitcodes import BadInput
from jobs.ingest import job as ingest_logs
from jobs.ingest.continuation import Before, NewSeq, plan
from jobs.replay.job import main as replay
from jobs.store.latest_state import read_state
from schemas.events import EVENT_SCHEMA
from tests.helpers import INGEST_FIXTURES

SAMPLE = INGEST_FIXTURES / "versions" / "ak2.2" / "controller.log"
# Lines of the sample per night (1-based, inclusive): failover and a creation; a controlled
# shutdown, a failure and a restart; a reassignment, an election and a deletion.
NIGHTS = {"2019-03-01": (1, 30), "2019-03-02": (31, 40), "2019-03-03": (41, 52)}


def write_nights(folder: Path) -> dict[str, Path]:
    lines = SAMPLE.read_text().splitlines(keepends=True)
    folder.mkdir()
    files = {}
    for day, (a, b) in NIGHTS.items():
        path = folder / f"controller.log.{day}"
        path.write_text("".join(x.replace("2019-03-01", day) for x in lines[a - 1:b]))
        files[day] = path
    return files


def ingest(logs: Path, out: Path, *extra: str) -> int:
    return ingest_logs.main(["--logs", str(logs), "--out", str(out), "--cluster", "c1",
                             *extra])


def deliver(night_out: Path, events: Path, day: str) -> None:
    """What the cron's copy does: the night's event files into the replay's folder."""
    shutil.copytree(night_out / "events", events / day)


def event_rows(spark: Any, path: Path) -> list[tuple[Any, ...]]:
    frame = spark.read.schema(EVENT_SCHEMA).option("recursiveFileLookup", "true").parquet(
        str(path))
    return sorted((tuple(r) for r in frame.collect()), key=repr)


def test_three_nights_continue_one_log_and_replay_as_one(spark: Any, tmp_path: Path) -> None:
    files = write_nights(tmp_path / "logs")
    assert ingest(tmp_path / "logs", tmp_path / "all") == 0
    events, chk, out = tmp_path / "events", tmp_path / "chk", tmp_path / "out"
    for day, path in files.items():
        night = tmp_path / f"ingest-{day}"
        # The last night's run reads the night before again (the rotated files of two days):
        # its events are recognised, not written twice, and the new ones follow them.
        logs = [str(files["2019-03-02"]), str(path)] if day == "2019-03-03" else [str(path)]
        assert ingest_logs.main(["--logs", *logs, "--out", str(night), "--cluster", "c1",
                                 "--continue-from", str(events)]) == 0
        deliver(night, events, day)
        assert replay(["--events", str(events), "--out", str(out), "--checkpoint", str(chk),
                       "--run-id", day.replace("-", ""), "--buckets", "4", "--audit",
                       "--fail-on", "critical"]) == 0
    # Seq for seq, the nights numbered one by one are the nights ingested at once.
    together = event_rows(spark, tmp_path / "all" / "events")
    assert event_rows(spark, events) == together
    assert max(r[1] for r in together) == 11

    assert replay(["--events", str(tmp_path / "all" / "events"), "--out",
                   str(tmp_path / "full"), "--run-id", "full", "--buckets", "4"]) == 0
    for table in ("partition_states", "replica_states"):
        assert_df_equality(read_state(spark, str(out), table, "20190303").drop("run_id"),
                           read_state(spark, str(tmp_path / "full"), table, "full")
                           .drop("run_id"), ignore_row_order=True)


def test_seqs_follow_the_log_and_recognised_ones_keep_theirs() -> None:
    """The plan alone: a recognised seq keeps its seq in EVENTS, the new ones follow the
    last one in order, a new one older than the last event is refused."""
    before = Before(last_seq=7, last_ts=1_000)
    got = plan([NewSeq(1, 900, known_as=6), NewSeq(2, 1_000, known_as=7),
                NewSeq(3, 1_200), NewSeq(4, 1_500)], before, "ev")
    assert got.seqs == {1: 6, 2: 7, 3: 8, 4: 9}
    assert got.known == {1, 2} and got.new_count == 2 and got.first_new_ts == 1_200
    assert plan([NewSeq(1, 5), NewSeq(2, 9)], Before(), "ev").seqs == {1: 1, 2: 2}
    with pytest.raises(BadInput, match="older than the last event already there .seq 7"):
        plan([NewSeq(1, 999), NewSeq(2, 1_200)], before, "ev")
