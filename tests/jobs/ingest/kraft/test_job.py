"""`jobs.ingest` over KRaft inputs (one Spark test file: a session costs seconds): a day of
a cluster's metadata log in a `__cluster_metadata-0` folder (timed, printed), then segments,
a snapshot, kafka-dump-log text and a controller log in one run."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from jobs.ingest import job as ingest
from jobs.sim.kraft_encoder import batch_bytes, day_log, meta, snapshot_bytes, topic_id
from schemas.ingest import METADATA_RECORDS_SCHEMA, METADATA_SUMMARY_SCHEMA
from tests.helpers import INGEST_FIXTURES, ROOT

README_DUMP = ROOT / "tests" / "fixtures" / "kraft" / "dump-log-ak3.0.0-config-kraft-README.txt"


def _write_log(folder: Path, segments: list[tuple[str, bytes]]) -> None:
    folder.mkdir(parents=True)
    for name, data in segments:
        (folder / name).write_bytes(data)
        (folder / name.replace(".log", ".index")).write_bytes(b"\0" * 8)  # skipped


def test_a_day_of_metadata_log(spark: Any, tmp_path: Path) -> None:
    log = day_log()
    _write_log(tmp_path / "kafka-logs" / "__cluster_metadata-0", log.segments)
    out = tmp_path / "out"
    t = time.perf_counter()
    result = ingest.run(spark, ingest.parse_args(
        ["--logs", str(tmp_path / "kafka-logs"), "--out", str(out), "--cluster", "k1"]))
    print(f"\njobs.ingest, 1-day KRaft log ({log.records} records, {log.noops} NoOps, "
          f"{len(log.segments)} segments): {time.perf_counter() - t:.1f} s")
    records = spark.read.parquet(str(out / "metadata_records"))
    summary = spark.read.parquet(str(out / "metadata_summary"))
    assert records.schema == METADATA_RECORDS_SCHEMA
    assert summary.schema == METADATA_SUMMARY_SCHEMA
    assert records.count() == log.records - log.noops == result["kraft_rows"]
    total = summary.filter("source = '*'").first()
    assert (total.records, total.noops, total.unknown, total.corrupt_batches) == (
        log.records, 172_800, 0, 0)
    # Inputs are named below their common folder, as the controller logs are.
    assert sorted(r.source for r in summary.collect()) == ["*", *(n for n, _ in log.segments)]
    assert not (out / "events").exists()  # no controller log among the inputs
    offsets = [r.offset for r in records.select("offset").orderBy("offset").collect()]
    assert offsets == sorted(set(offsets)) and records.filter("cluster = 'k1'").count() > 0


def test_kraft_inputs_and_a_controller_log_in_one_run(spark: Any, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    body = batch_bytes(5, [meta("TopicRecord", {"name": "t", "topicId": topic_id(1)})],
                       codec=2)
    corrupt = bytearray(batch_bytes(6, [meta("NoOpRecord", {})]))
    corrupt[30] ^= 1
    _write_log(logs / "__cluster_metadata-0", [("00000000000000000005.log",
                                                body + bytes(corrupt))])
    (logs / "00000000000000000004-0000000002.checkpoint").write_bytes(
        snapshot_bytes([batch_bytes(1, [meta("UnfenceBrokerRecord", {"id": 3, "epoch": 8})])],
                       end_offset=2, timestamp=1_600_000_000_000))
    shutil.copy(README_DUMP, logs / "dump.txt")
    shutil.copy(INGEST_FIXTURES / "hard-wrap.log", logs / "controller.log")
    out = tmp_path / "out"
    assert ingest.main(["--logs", str(logs), "--out", str(out)], spark=spark) == 0
    rows = spark.read.parquet(str(out / "metadata_records"))
    by_source = {r.source: r for r in spark.read.parquet(str(out / "metadata_summary"))
                 .collect()}
    assert by_source["dump.txt"].rows == 9 and by_source["dump.txt"].input_kind == "dump_log"
    segment = by_source["__cluster_metadata-0/00000000000000000005.log"]
    assert (segment.rows, segment.corrupt_batches) == (1, 1)
    assert "CRC-32C mismatch" in segment.corrupt_reasons[0]
    snap = by_source["00000000000000000004-0000000002.checkpoint"]
    assert (snap.input_kind, snap.rows, snap.error) == ("snapshot", 3, None)
    assert rows.filter("record_type = 'UnfenceBrokerRecord' and broker_id = 3 "
                       "and fenced = false").count() == 1
    assert by_source["*"].rows == rows.count() == 13
    # The controller log went the controller-log way, alone.
    summary = {r.file: r for r in spark.read.parquet(str(out / "ingest_summary")).collect()}
    assert set(summary) == {"controller.log", "*"}


def test_a_brokers_whole_data_directory_reads_only_the_metadata_log(
    spark: Any, tmp_path: Path, capsys: Any
) -> None:
    """`log.dirs` as a broker leaves it: a user topic's segment whose bytes are a valid
    record batch (here even a metadata record: the content cannot tell them apart),
    `bootstrap.checkpoint`, the metadata log and a snapshot, and a copy of the metadata log
    under another folder name that its `partition.metadata` identifies. Only the metadata
    log's files are read; one line names what was skipped and why."""
    data = tmp_path / "data"
    topic = batch_bytes(0, [meta("TopicRecord", {"name": "t", "topicId": topic_id(1)})])
    _write_log(data / "__cluster_metadata-0", [("00000000000000000000.log", topic)])
    (data / "__cluster_metadata-0" / "00000000000000000001-0000000001.checkpoint").write_bytes(
        snapshot_bytes([batch_bytes(0, [meta("UnfenceBrokerRecord", {"id": 3, "epoch": 8})])],
                       end_offset=1, timestamp=1_600_000_000_000))
    (data / "__cluster_metadata-0" / "partition.metadata").write_text(
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ")
    user = batch_bytes(0, [meta("FenceBrokerRecord", {"id": 1, "epoch": 5})])
    _write_log(data / "orders-0", [("00000000000000000000.log", user)])
    (data / "orders-0" / "partition.metadata").write_text(
        "version: 0\ntopic_id: Qm9vX3FTU6WN0nJ1qk2bxw")
    (data / "bootstrap.checkpoint").write_bytes(snapshot_bytes(
        [batch_bytes(0, [meta("FeatureLevelRecord", {"name": "metadata.version",
                                                      "featureLevel": 19})])],
        end_offset=0, timestamp=1_600_000_000_000))
    (data / "meta.properties").write_text("node.id=1\n")
    _write_log(data / "copied", [("00000000000000000000.log", batch_bytes(
        0, [meta("UnfenceBrokerRecord", {"id": 4, "epoch": 9})]))])
    (data / "copied" / "partition.metadata").write_text(
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ")
    out = tmp_path / "out"
    assert ingest.main(["--logs", str(data), "--out", str(out)], spark=spark) == 0
    said = [x for x in capsys.readouterr().out.splitlines() if "not of the metadata log" in x]
    assert said == [
        "[ingest] KRaft: skipped 2 file(s) not of the metadata log: bootstrap.checkpoint (not a "
        "snapshot name (<20-digit offset>-<10-digit epoch>.checkpoint)); "
        "orders-0/00000000000000000000.log (a log segment outside the metadata log's folder "
        "(__cluster_metadata-N, or partition.metadata naming its topic id))"]
    sources = {r.source for r in spark.read.parquet(str(out / "metadata_summary")).collect()}
    assert sources == {"*", "__cluster_metadata-0/00000000000000000000.log",
                       "__cluster_metadata-0/00000000000000000001-0000000001.checkpoint",
                       "copied/00000000000000000000.log"}
    records = spark.read.parquet(str(out / "metadata_records"))
    assert records.filter("record_type = 'FenceBrokerRecord'").count() == 0
    assert records.filter("record_type = 'FeatureLevelRecord'").count() == 0
    assert not (out / "events").exists()  # nothing went the controller-log way


def test_a_pasted_dump_of_record_lines_is_read_and_one_of_nothing_is_exit_2(
    spark: Any, tmp_path: Path, capsys: Any
) -> None:
    pasted = tmp_path / "pasted"
    pasted.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "kraft" / "dump-log-ak3.7-records-only.txt",
                pasted / "issue.txt")
    assert ingest.main(["--logs", str(pasted), "--out", str(tmp_path / "a")], spark=spark) == 0
    assert spark.read.parquet(str(tmp_path / "a" / "metadata_records")).count() == 7
    capsys.readouterr()
    bad = tmp_path / "bad.txt"
    bad.write_text("Dumping /var/lib/kafka/__cluster_metadata-0/00000000000000000000.log\n"
                   "| offset CreateTime 1714050000100\n")
    assert ingest.main(["--logs", str(bad), "--out", str(tmp_path / "b")], spark=spark) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["[ingest] ERROR: nothing could be read from 1 input(s): bad.txt (line 2: "
                   "not a kafka-dump-log line)"]
