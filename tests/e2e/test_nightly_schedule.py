"""The nightly audit as cron runs it: a simulated log cut into three nights, one night
delivered late and one missing for a while, then `--rebuild`. The verdict must never be
PASS over a night the replay did not see, and the rebuild must give the full replay's
tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from jobs.replay.job import main
from jobs.sim.cli import main as simulate
from schemas.arrow import arrow_schema
from schemas.events import EVENT_SCHEMA

pytestmark = pytest.mark.slow
CONTINUITY = {"late_events", "missing_events", "conflicting_events", "rejected_isr_changes"}


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> tuple[pa.Table, pa.Table, pa.Table]:
    """The `tiny` simulated log cut into three nights by seq."""
    base = tmp_path_factory.mktemp("sim")
    assert simulate(["--out", str(base), "--preset", "tiny"]) == 0
    log = ds.dataset(str(base), format="parquet").to_table().cast(arrow_schema(EVENT_SCHEMA))
    seq = log.column("seq")
    top = pc.max(seq).as_py()
    a, b = top // 3, 2 * top // 3
    return (log.filter(pc.less_equal(seq, a)),
            log.filter(pc.and_(pc.greater(seq, a), pc.less_equal(seq, b))),
            log.filter(pc.greater(seq, b)))


def deliver(events: Path, name: str, night: pa.Table) -> None:
    events.mkdir(parents=True, exist_ok=True)
    pq.write_table(night, events / f"{name}.parquet")


def replay(events: Path, out: Path, run_id: str, *extra: str) -> int:
    return main(["--events", str(events), "--out", str(out), "--run-id", run_id,
                 "--buckets", "4", *extra])


def checks(spark: Any, out: Path, run_id: str) -> dict[str, str]:
    rows = spark.read.parquet(str(out / "audit_checks")).where(F.col("run_id") == run_id)
    return {r["check"]: r["detail"] for r in rows.collect()}


def summary(spark: Any, out: Path, run_id: str) -> dict[str, Any]:
    [row] = spark.read.parquet(str(out / "run_summary")).where(
        F.col("run_id") == run_id).collect()
    return row.asDict()


def state(spark: Any, out: Path, table: str, run_id: str) -> Any:
    return spark.read.parquet(str(out / table)).where(F.col("run_id") == run_id).drop("run_id")


def test_a_late_and_a_missing_night_fail_the_audit_and_rebuild_absorbs_them(
    spark: Any, nights: tuple[pa.Table, ...], tmp_path: Path
) -> None:
    n1, n2, n3 = nights
    full_events, full_out = tmp_path / "full-events", tmp_path / "full"
    for name, night in zip(("n1", "n2", "n3"), nights, strict=True):
        deliver(full_events, name, night)
    assert replay(full_events, full_out, "full") == 0

    events, out, chk = tmp_path / "events", tmp_path / "out", tmp_path / "chk"
    audit = ("--checkpoint", str(chk), "--audit", "--fail-on", "critical")
    deliver(events, "n1", n1)
    replay(events, out, "night1", *audit)
    assert not CONTINUITY & set(checks(spark, out, "night1"))

    # Night 2 is missing when night 3 arrives: the gap is named with its seqs.
    deliver(events, "n3", n3)
    assert replay(events, out, "night3", *audit) == 1
    first, last = pc.min(n2.column("seq")).as_py(), pc.max(n2.column("seq")).as_py()
    found = checks(spark, out, "night3")
    assert f"{first}-{last}" in found["missing_events"]
    s3 = summary(spark, out, "night3")
    assert [(g["seq_from"], g["seq_to"]) for g in s3["seq_gaps"]] == [(first, last)]
    assert s3["missing_seqs"] == last - first + 1

    # Night 2 arrives late: counted, not applied, and the audit says so.
    deliver(events, "n2", n2)
    assert replay(events, out, "night2", *audit) == 1
    found = checks(spark, out, "night2")
    assert "--rebuild" in found["late_events"]
    s2 = summary(spark, out, "night2")
    assert s2["rows_late"] == n2.num_rows and s2["rows_applied"] == 0
    assert (s2["late_seq_min"], s2["late_seq_max"]) == (first, last)

    # The rebuild replays the whole log into a new generation and supersedes the nights.
    assert replay(events, out, "rebuild", "--checkpoint", str(chk), "--rebuild") == 0
    for table in ("partition_states", "replica_states", "partition_windows", "state_changes"):
        assert_df_equality(state(spark, out, table, "rebuild"),
                           state(spark, full_out, table, "full"), ignore_row_order=True)
    s = summary(spark, out, "rebuild")
    assert sorted(s["superseded_runs"]) == ["night1", "night2", "night3"]
    assert (s["rows_late"], s["missing_seqs"]) == (0, 0)
    assert sorted(p.name for p in chk.iterdir() if not p.name.startswith(".")) == [
        "active.json", "generation-rebuild"]

    # The schedule goes on from the rebuilt generation: nothing new, nothing late.
    assert replay(events, out, "night4", "--checkpoint", str(chk)) == 0
    s4 = summary(spark, out, "night4")
    assert (s4["rows_read"], s4["rows_late"], s4["missing_seqs"]) == (0, 0, 0)
    assert not (out / "_scratch").exists()


def test_any_file_layout_gives_the_same_tables(spark: Any, tmp_path: Path) -> None:
    """One file, one row per file and nested directories: the timeline scan and the
    replay must read every row whatever the layout."""
    sim = tmp_path / "sim"
    assert simulate(["--out", str(sim), "--preset", "tiny"]) == 0
    log = ds.dataset(str(sim), format="parquet").to_table().cast(arrow_schema(EVENT_SCHEMA))
    one, many = tmp_path / "one", tmp_path / "many"
    deliver(one, "all", log)
    for i in range(log.num_rows):
        deliver(many / f"d{i % 7}" / f"h{i % 3}", f"row-{i:05d}", log.slice(i, 1))
    assert replay(one, tmp_path / "out-one", "r") == 0
    assert replay(many, tmp_path / "out-many", "r") == 0
    for table in ("partition_states", "replica_states", "state_changes", "findings",
                  "broker_timeline", "partition_windows"):
        assert_df_equality(state(spark, tmp_path / "out-many", table, "r"),
                           state(spark, tmp_path / "out-one", table, "r"),
                           ignore_row_order=True)
    steps = state(spark, tmp_path / "out-one", "broker_timeline", "r").count()
    assert steps > 0
