"""The simulator's output format: schema, seq order, bounded files, determinism, bad rows."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from jobs.sim.cli import main, simulate, write_log
from jobs.sim.presets import PRESETS
from jobs.sim.writer import ARROW_SCHEMA
from schemas import event_types as ET
from schemas.events import EVENT_COLUMNS


def files_of(d: Path) -> list[Path]:
    return sorted(d.glob("part-*.parquet"))


def rows_of(d: Path) -> list[dict[str, object]]:
    return [r for f in files_of(d) for r in pq.read_table(f).to_pylist()]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    d = tmp_path_factory.mktemp("tiny")
    return d, write_log(str(d), preset="tiny", seed=7)


def test_write_log_counts(tiny: tuple[Path, dict[str, object]]) -> None:
    d, counts = tiny
    assert counts["events"] == len(rows_of(d)) >= PRESETS["tiny"].events
    assert counts["files"] == len(files_of(d)) > 1
    assert counts["partitions"] == PRESETS["tiny"].partitions
    assert counts["bad_rows"] == 0


def test_schema_is_the_input_contract(tiny: tuple[Path, dict[str, object]]) -> None:
    d, _ = tiny
    for f in files_of(d):
        schema = pq.read_schema(f)
        assert tuple(schema.names) == EVENT_COLUMNS
        assert schema.equals(ARROW_SCHEMA)
    assert str(ARROW_SCHEMA.field("ts").type) == "timestamp[us, tz=UTC]"
    assert str(ARROW_SCHEMA.field("seq").type) == "int64"
    assert str(ARROW_SCHEMA.field("replicas").type).startswith("list<")


def test_seq_order_and_files(tiny: tuple[Path, dict[str, object]]) -> None:
    d, _ = tiny
    limit = PRESETS["tiny"].rows_per_file
    last = 0
    for f in files_of(d):
        seqs = pq.read_table(f, columns=["seq"]).column("seq").to_pylist()
        assert 0 < len(seqs) <= limit
        assert seqs == sorted(seqs)
        assert seqs[0] > last, "a controller event (one seq) never straddles two files"
        last = seqs[-1]


def test_only_known_events_with_their_fields(tiny: tuple[Path, dict[str, object]]) -> None:
    d, _ = tiny
    rows = rows_of(d)
    assert rows[0]["event_type"] == ET.CONTROLLER_FAILOVER
    kinds = {r["event_type"] for r in rows}
    assert kinds <= ET.ALL_EVENTS
    # the tiny preset still tells every story
    for needed in (
        ET.BROKER_FAILURE,
        ET.BROKER_STARTUP,
        ET.CONTROLLED_SHUTDOWN,
        ET.REASSIGNMENT_REQUESTED,
        ET.TOPIC_DELETION_COMPLETED,
        ET.ISR_CHANGED,
    ):
        assert needed in kinds
    assert sum(r["event_type"] == ET.CONTROLLER_FAILOVER for r in rows) >= 2
    for r in rows:
        assert r["cluster"] == ET.DEFAULT_CLUSTER and r["seq"] is not None and r["ts"]
        for field in ET.REQUIRED_FIELDS[r["event_type"]]:
            assert r[field] is not None, (field, r)
    partition_scope = sum(r["event_type"] in ET.PARTITION_EVENTS for r in rows)
    assert partition_scope > 0.8 * len(rows)


def test_deterministic(tmp_path: Path, tiny: tuple[Path, dict[str, object]]) -> None:
    d, _ = tiny
    write_log(str(tmp_path / "again"), preset="tiny", seed=7)
    assert rows_of(tmp_path / "again") == rows_of(d)
    write_log(str(tmp_path / "other"), preset="tiny", seed=8)
    assert rows_of(tmp_path / "other") != rows_of(d)


def test_bad_rows(tmp_path: Path, tiny: tuple[Path, dict[str, object]]) -> None:
    d, _ = tiny
    counts, sim = simulate(str(tmp_path), preset="tiny", seed=7, bad_rows=0.2)
    assert sim.bad is not None
    rows = rows_of(tmp_path)
    assert counts["bad_rows"] > 10 and counts["events"] == len(rows)
    marked = [r for r in rows if str(r["source"]).startswith("sim:bad:")]
    dupes = counts["bad_by_kind"]["duplicate"]
    assert len(marked) + dupes == counts["bad_rows"]
    kinds = {str(r["source"]).split(":")[2] for r in marked}
    assert {"null_seq", "unknown_type", "negative_replica"} <= kinds
    assert any(r["seq"] is None for r in rows)
    assert any(r["event_type"] not in ET.ALL_EVENTS for r in rows)
    assert any(
        r["replicas"] and (min(r["replicas"]) < 0 or len(set(r["replicas"])) < len(r["replicas"]))
        for r in rows
    )
    # the good rows are the clean log: bad rows come from their own random stream
    clean = rows_of(d)
    kept = [r for r in rows if not str(r["source"]).startswith("sim:bad:")]
    assert len(kept) == len(clean) + dupes
    assert sorted(map(repr, clean)) == sorted(set(map(repr, kept)))


def test_no_bad_rows_by_default(tiny: tuple[Path, dict[str, object]]) -> None:
    d, _ = tiny
    rows = rows_of(d)
    assert not [r for r in rows if str(r["source"]).startswith("sim:bad")]
    keys = [json.dumps(r, default=str, sort_keys=True) for r in rows]
    assert len(keys) == len(set(keys)), "no duplicate rows"


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--out", str(tmp_path), "--preset", "tiny", "--seed", "3", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["events"] == len(rows_of(tmp_path))
    assert out["preset"] == "tiny" and out["seed"] == 3


def test_rack_unaware_assignment_matches_kafka() -> None:
    """AdminUtilsTest.testReplicaAssignment: 5 brokers, 10 partitions, RF 3, start index 0."""
    import random

    from jobs.sim.assign import assign_replicas

    got = assign_replicas([0, 1, 2, 3, 4], 10, 3, random.Random(0), start_index=0)
    assert got == [
        (0, 1, 2), (1, 2, 3), (2, 3, 4), (3, 4, 0), (4, 0, 1),
        (0, 2, 3), (1, 3, 4), (2, 4, 0), (3, 0, 1), (4, 1, 2),
    ]  # fmt: skip
