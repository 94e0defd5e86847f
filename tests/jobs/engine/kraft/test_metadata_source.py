"""Finding and ordering a KRaft input of `jobs.replay` (`jobs.engine.kraft.metadata_source`), pure:
tables written with pyarrow."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from jobs.engine.kraft.metadata_source import (
    BEFORE_SNAPSHOT,
    find_kraft_input,
    in_replay_order,
    read_clusters,
)
from schemas.arrow import arrow_schema
from schemas.events import EVENT_SCHEMA
from schemas.ingest import METADATA_RECORDS_SCHEMA, METADATA_SUMMARY_SCHEMA
from statemachine.kraft.records import MetadataRecord

SNAP = "00000000000000000004-0000000002.checkpoint"


def _rec(offset: int | None, kind: str = "TopicRecord") -> MetadataRecord:
    return MetadataRecord(offset, offset, 1, 0, kind)


def _write(folder: Path, schema: pa.Schema, rows: list[dict[str, object]]) -> None:
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "part-0.parquet")


def test_the_replay_starts_from_the_latest_snapshot() -> None:
    rows = [("seg/0.log", _rec(o)) for o in (0, 1, 2, 3, 4, 5)]
    rows += [("00000000000000000002-0000000001.checkpoint", _rec(0)),
             (SNAP, _rec(1, "RegisterBrokerRecord")), (SNAP, _rec(0, "TopicRecord"))]
    log = in_replay_order(rows)
    # The snapshot ending at offset 4 first (in its own order), then the log from 4 on;
    # the log below 4 and the older snapshot are already in it.
    assert [(r.offset, r.record_type) for r in log.records] == [
        (0, "TopicRecord"), (1, "RegisterBrokerRecord"), (4, "TopicRecord"),
        (5, "TopicRecord")]
    assert (log.snapshot, log.rows_read, log.skipped) == (SNAP, 9, {BEFORE_SNAPSHOT: 5})


def test_without_a_snapshot_the_log_is_folded_in_offset_order() -> None:
    log = in_replay_order([("b.log", _rec(7)), ("a.log", _rec(3)), ("a.log", _rec(5))])
    assert [r.offset for r in log.records] == [3, 5, 7] and not log.skipped


def test_an_ingest_folder_and_its_table_are_kraft_inputs(tmp_path: Path) -> None:
    row = {"cluster": "k1", "source": "a.log", "offset": 3, "batch_base_offset": 3,
           "ts": 1_700_000_000_000_000, "record_type": "FenceBrokerRecord", "api_key": 7,
           "broker_id": 2, "isr": None, "fenced": True}
    _write(tmp_path / "ing" / "metadata_records", arrow_schema(METADATA_RECORDS_SCHEMA), [row])
    _write(tmp_path / "ing" / "metadata_summary", arrow_schema(METADATA_SUMMARY_SCHEMA),
           [{"cluster": "k1", "source": "*", "noops": 40}])
    folder = find_kraft_input(str(tmp_path / "ing"))
    table = find_kraft_input(str(tmp_path / "ing" / "metadata_records"))
    assert folder is not None and folder.summary == str(tmp_path / "ing" / "metadata_summary")
    assert table is not None and table.summary is None and table.records == folder.records
    [record] = read_clusters(folder)["k1"].records
    assert (record.offset, record.ts, record.broker_id, record.fenced) == (
        3, 1_700_000_000_000_000, 2, True)


def test_a_zookeeper_event_log_is_not(tmp_path: Path) -> None:
    _write(tmp_path / "events", arrow_schema(EVENT_SCHEMA), [{"seq": 1}])
    assert find_kraft_input(str(tmp_path / "events")) is None
    assert find_kraft_input(str(tmp_path / "missing")) is None
