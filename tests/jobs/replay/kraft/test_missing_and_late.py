"""KRaft segments delivered night by night, one missing (`jobs.engine.kraft.continuity`):
the log of tests/helpers/kraft_segments.py cut into three nightly segments: offsets 0-15
(broker 1 fenced at 60 s, `orders` p1 offline), 16-18 (its unfence at 180 s, p1's
election, p0's ISR), 19-22 (`tmp` created and removed, a NoOp). The second night's
segment is delivered after the third: the third night raises `missing_events` naming
offsets 16-18, and when the second arrives its records are `late_events` with the
`--rebuild` remedy, as a ZooKeeper-mode log's seqs do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from jobs.ingest import job as ingest
from jobs.replay.job import main as replay
from tests.helpers.kraft_segments import write_segment

pytestmark = pytest.mark.slow
NIGHTS = ((0, 91), (91, 191), (191, 10**6))  # seconds of each night's batches


def write_night(folder: Path, night: int) -> Path:
    """One night's segment, named by its base offset as Kafka names it."""
    low, high = NIGHTS[night]
    return write_segment(folder, lambda seconds: low <= seconds < high)


@pytest.fixture(scope="module")
def nights(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("kraft-nights")
    found: dict[str, Any] = {"tmp": tmp}
    for night in (0, 2, 1):  # the second night's segment comes last
        ingested = tmp / f"ingest{night}"
        assert ingest.main(["--logs", str(write_night(tmp / f"logs{night}", night)),
                            "--out", str(ingested), "--cluster", "k1"], spark=spark) == 0
        verdict = tmp / f"n{night}.json"
        found[f"rc{night}"] = replay([
            "--events", str(ingested), "--out", str(tmp / "out"), "--run-id", f"n{night}",
            "--checkpoint", str(tmp / "ck"), "--audit", "--verdict-json", str(verdict)],
            spark=spark)
        found[f"n{night}"] = json.loads(verdict.read_text())
    return found


def _checks(nights: dict[str, Any], run: str) -> dict[str, str]:
    """The critical checks of a run's `audit_checks`, with their detail."""
    found = pq.read_table(nights["tmp"] / "out" / "audit_checks" / f"run_id={run}")
    return {r["check"]: r["detail"] for r in found.to_pylist() if r["severity"] == "critical"}


def test_the_first_night_has_no_hole(nights: dict[str, Any]) -> None:
    # It fails on the cluster's health (orders-1 offline at its end), not on its log.
    checks = _checks(nights, "n0")
    assert "unavailable_partition" in checks and "missing_events" not in checks


def test_a_night_after_a_missing_one_names_the_offsets(nights: dict[str, Any]) -> None:
    assert nights["rc2"] == 1 and nights["n2"]["verdict"] == "FAIL"
    detail = _checks(nights, "n2")["missing_events"]
    assert detail.startswith("3 metadata-log offset(s) not replayed (earlier runs folded "
                             "through 15): offsets 16-18 never arrived")
    figures = nights["n2"]["clusters"]["k1"]
    assert figures["seq_gaps"] == [{"seq_from": 16, "seq_to": 18}]
    assert figures["missing_seqs"] == 3


def test_the_missing_night_delivered_later_is_late(nights: dict[str, Any]) -> None:
    assert nights["rc1"] == 1
    checks = _checks(nights, "n1")
    assert checks["late_events"].startswith("3 row(s) at metadata-log offsets 16-18 arrived "
                                            "after the checkpoint had applied past them")
    assert "--rebuild" in checks["late_events"]
    assert "missing_events" not in checks  # nothing beyond what was folded is new
    figures = nights["n1"]["clusters"]["k1"]
    assert (figures["rows_late"], figures["late_seq_min"], figures["late_seq_max"]) == \
        (3, 16, 18)
