"""The KRaft replay by topic bucket (`jobs.engine.kraft.executors`) writes the tables of
the whole cluster folded on the driver (`pipeline.replay_kraft`), row for row, whatever
the bucket count. Pure: the bucket tasks run in this process (on Spark they are the same
function), on a simulated history (`jobs.sim.kraft_history`, decoded by the ingest's
decoder) written with pyarrow, in two clusters; the second ends with records that cross
the cut: a topic's `min.insync.replicas` (its windows), a `ClearElrRecord` of every
topic, a `PartitionChangeRecord` and a topic config of topics no `TopicRecord` names, a
fence, and an offset that never arrived; the third starts from a snapshot."""

from __future__ import annotations

import argparse
import dataclasses
import pickle
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from jobs.engine.kraft.bucket_fold import BucketResult, BucketTask, fold_bucket
from jobs.engine.kraft.executors import replay_kraft_on_executors
from jobs.engine.kraft.metadata_source import KraftInput, find_kraft_input
from jobs.engine.kraft.pipeline import profile_of, replay_kraft, state_buckets
from jobs.ingest.kraft.inputs import SEGMENT, Input, decode_all
from jobs.ingest.kraft.job import summary_rows
from jobs.sim.kraft_history import simulate, write_log
from jobs.store.kraft_checkpoint import Checkpoint, KraftState
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
    # Cluster c starts from a snapshot of its first half (Kafka's `Snapshots` file name).
    half = sorted(r["offset"] for r in rows)[len(rows) // 2]
    snapshot = [{**r, "source": f"{half:020d}-{1:010d}.checkpoint"} for r in rows
                if r["offset"] < half and not r["is_control"]]
    for cluster, cluster_rows in (("a", rows), ("b", rows + extras), ("c", snapshot + rows)):
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
    assert runs["c"].skipped["skipped:before_snapshot"] > 0
    return out


@pytest.mark.parametrize("buckets", [1, 4])
def test_every_table_equals_the_driver_fold(ingested: Path, driver: Path, tmp_path: Path,
                                            buckets: int) -> None:
    kraft = find_kraft_input(str(ingested))
    assert kraft is not None
    tasks: list[BucketTask] = []
    for _ in range(2 if buckets > 1 else 1):  # a second attempt leaves no file behind
        tasks.clear()
        replay_kraft_on_executors(None, kraft, str(tmp_path), "r1",  # type: ignore[arg-type]
                                  profile_of("3.7"), 1, buckets, run=_in_process(tasks))
    assert len({(t.cluster, t.bucket) for t in tasks}) == len(tasks)
    assert len(tasks) == (3 if buckets == 1 else 3 * len({t.bucket for t in tasks}))
    if buckets > 1:
        assert len({t.bucket for t in tasks}) > 1
    for table in TABLES:
        assert run_rows(tmp_path, table, "r1") == run_rows(driver, table, "r1"), table


def _night(ingested: Path, folder: Path, cut: int) -> KraftInput:
    """The records up to `cut` alone (no summary: their offsets are not checked)."""
    rows = pq.read_table(ingested / "metadata_records")
    rows = rows.filter(pc.field("offset") <= cut)
    (folder / "metadata_records").mkdir(parents=True)
    pq.write_table(rows, folder / "metadata_records" / "part-0.parquet")
    found = find_kraft_input(str(folder))
    assert found is not None
    return found


def test_two_nights_on_a_checkpoint_equal_the_driver_folds_nights(
        ingested: Path, tmp_path: Path) -> None:
    """The first night ends inside an outage: its window and incident go on in the
    second, which folds only what is new, from the bucket folds the first saved."""
    profile = profile_of("3.7")
    whole = find_kraft_input(str(ingested))
    assert whole is not None
    once = replay_kraft(None, whole, str(tmp_path / "once"), "r", profile, 1)  # type: ignore[arg-type]
    outage = next(w for w in once["b"].outputs.partition_windows
                  if w.kind == "offline" and w.end_seq is not None)
    first = _night(ingested, tmp_path / "night1", outage.incident_id)  # its batch whole
    driver, executors, checkpoint = tmp_path / "d", tmp_path / "e", tmp_path / "ck"
    runs = replay_kraft(None, first, str(driver), "n1", profile, 1)  # type: ignore[arg-type]
    kept = {c: r.state for c, r in runs.items() if r.state is not None}
    replay_kraft(None, whole, str(driver), "n2", profile, 1, kept)  # type: ignore[arg-type]
    store = Checkpoint(str(checkpoint))
    for run_id, kraft in (("n1", first), ("n2", whole)):
        state = store.load()
        tasks: list[BucketTask] = []
        runs = replay_kraft_on_executors(
            None, kraft, str(executors), run_id, profile, 1, 4,  # type: ignore[arg-type]
            run=_in_process(tasks), checkpoint=str(checkpoint),
            resume=None if state is None else state.clusters)
        assert len(tasks) == 3 * 4  # every bucket, each keeping its fold
        assert all((t.resume is None) == (run_id == "n1") for t in tasks)
        store.save(KraftState(profile.name, {c: r.state for c, r in runs.items()
                                             if r.state is not None},
                              [] if state is None else state.runs, buckets=4), run_id)
    assert sorted(p.name for p in (checkpoint / "kraft" / "folds").iterdir()) == ["n2"]
    for run_id in ("n1", "n2"):
        for table in TABLES:
            assert (run_rows(executors, table, run_id)
                    == run_rows(driver, table, run_id)), (run_id, table)
    summary = run_rows(executors, "run_summary", "n2")
    assert summary and "skipped:before_checkpoint" in repr(summary)
    # The outage the first night ended in: its incident, rolled up over both nights.
    assert outage.incident_id in {i.incident_id for i in runs["b"].incidents}


def test_a_checkpoint_of_one_fold_per_cluster_keeps_its_format(tmp_path: Path) -> None:
    """A state saved before buckets (no `buckets`) reads as 0: its nights fold on the
    driver, whatever --kraft-fold says."""
    old = KraftState("3.6-3.9", {}, ["n1"])
    del old.__dict__["buckets"]  # as pickled by the build before it
    (tmp_path / "kraft").mkdir()
    (tmp_path / "kraft" / "state.pickle").write_bytes(pickle.dumps(old))
    state = Checkpoint(str(tmp_path)).load()
    assert state is not None and state.buckets == 0
    args = argparse.Namespace(kraft_fold="executors", buckets=4, checkpoint=str(tmp_path))
    assert state_buckets(None, state, args) == 0  # type: ignore[arg-type]
    assert state_buckets(None, None, args) == 4  # type: ignore[arg-type]
    assert state_buckets(None, None, argparse.Namespace(  # type: ignore[arg-type]
        kraft_fold="driver", buckets=4)) == 0
