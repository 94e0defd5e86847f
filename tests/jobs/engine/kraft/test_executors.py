"""The KRaft replay by topic bucket (`jobs.engine.kraft.executors`) writes the tables of
the whole cluster folded on the driver (`pipeline.replay_kraft`), row for row, whatever
the bucket count. Pure: the bucket tasks run in this process (on Spark they are the same
function), on a simulated history (`jobs.sim.kraft_history`, decoded by the ingest's
decoder) written with pyarrow, in two clusters; the second ends with records that cross
the cut: a topic's `min.insync.replicas` (its windows), a `ClearElrRecord` of every
topic, a `PartitionChangeRecord` and a topic config of topics no `TopicRecord` names, a
fence, and an offset that never arrived."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.engine.kraft.bucket_fold import BucketResult, BucketTask, fold_bucket
from jobs.engine.kraft.executors import replay_kraft_on_executors
from jobs.engine.kraft.metadata_source import find_kraft_input
from jobs.engine.kraft.pipeline import profile_of, replay_kraft
from jobs.ingest.kraft.inputs import SEGMENT, Input, decode_all
from jobs.ingest.kraft.job import summary_rows
from jobs.sim.kraft_history import simulate, write_log
from schemas.arrow import arrow_schema
from schemas.ingest import METADATA_RECORDS_SCHEMA, METADATA_SUMMARY_SCHEMA
from schemas.tables import TABLES
from tests.helpers.same_tables import run_rows

MINUTES = 30


def _extras(rows: list[dict[str, Any]], last: int) -> list[dict[str, Any]]:
    ts = max(r["ts"] for r in rows)
    topic = next(r for r in rows if r["record_type"] == "TopicRecord")["topic"]
    records: list[dict[str, Any]] = [
        {"record_type": "ConfigRecord", "config_resource_type": "TOPIC",
         "config_resource": topic, "config_name": "min.insync.replicas", "config_value": "3"},
        {"record_type": "ClearElrRecord"},
        {"record_type": "PartitionChangeRecord", "topic_id": "ghost-id", "partition": 0,
         "leader": 1},
        {"record_type": "ConfigRecord", "config_resource_type": "TOPIC",
         "config_resource": "nowhere", "config_name": "unclean.leader.election.enable",
         "config_value": "true"},
        {"record_type": "FenceBrokerRecord", "broker_id": 1, "broker_epoch": 1}]
    out = []
    for i, extra in enumerate(records):
        offset = last + 2 + i  # last + 1 (after the segments' NoOps) never arrives
        out.append({"source": "extra.log", "offset": offset, "batch_base_offset": offset,
                    "batch_leader_epoch": 1, "ts": ts + (i + 1) * 1_000_000, **extra})
    return out


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("kraft-exec")
    write_log(tmp / "logs", simulate(MINUTES, seed=3), MINUTES)
    folder = tmp / "logs" / "__cluster_metadata-0"
    decoded, summaries = decode_all(Input(p.name, SEGMENT, p.read_bytes())
                                    for p in sorted(folder.iterdir()))
    rows = [r._asdict() for r in decoded]
    extras = _extras(rows, max(s.last_offset for s in summaries))
    records, summary = [], []
    for cluster, cluster_rows in (("a", rows), ("b", rows + extras)):
        records += [{"cluster": cluster, **r} for r in cluster_rows]
        summary += summary_rows(cluster, [{f.name: getattr(s, f.name)
                                           for f in dataclasses.fields(s)} for s in summaries])
    for table, data in (
            ("metadata_records", pa.Table.from_pylist(
                records, arrow_schema(METADATA_RECORDS_SCHEMA))),
            ("metadata_summary", pa.Table.from_pylist(
                [dict(zip(METADATA_SUMMARY_SCHEMA.fieldNames(), r, strict=True))
                 for r in summary], arrow_schema(METADATA_SUMMARY_SCHEMA)))):
        (tmp / "ingest" / table).mkdir(parents=True)
        pq.write_table(data, tmp / "ingest" / table / "part-0.parquet")
    return tmp / "ingest"


def _in_process(seen: list[BucketTask]) -> Any:
    def run(tasks: list[BucketTask]) -> list[BucketResult]:
        seen.extend(tasks)
        return [fold_bucket(t) for t in tasks]
    return run


@pytest.fixture(scope="module")
def driver(ingested: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("driver")
    kraft = find_kraft_input(str(ingested))
    assert kraft is not None
    runs = replay_kraft(None, kraft, str(out), "r1", profile_of("3.7"), 1)  # type: ignore[arg-type]
    # What the comparison covers: windows of several topics, an incident, the findings of
    # the records across the cut (the unnamed topic's change refused, the hole).
    kinds = {f.kind for f in runs["b"].outputs.findings}
    assert {"metadata_record_rejected", "offset_gap"} <= kinds
    assert runs["b"].incidents and len({w.topic for w in runs["b"].outputs.partition_windows}) > 1
    return out


@pytest.mark.parametrize("buckets", [1, 4])
def test_every_table_equals_the_driver_fold(ingested: Path, driver: Path, tmp_path: Path,
                                            buckets: int) -> None:
    kraft = find_kraft_input(str(ingested))
    assert kraft is not None
    tasks: list[BucketTask] = []
    replay_kraft_on_executors(None, kraft, str(tmp_path), "r1",  # type: ignore[arg-type]
                              profile_of("3.7"), 1, buckets, run=_in_process(tasks))
    assert len({(t.cluster, t.bucket) for t in tasks}) == len(tasks)
    assert len(tasks) == (2 if buckets == 1 else 2 * len({t.bucket for t in tasks}))
    if buckets > 1:
        assert len({t.bucket for t in tasks}) > 1
    for table in TABLES:
        assert run_rows(tmp_path, table, "r1") == run_rows(driver, table, "r1"), table
