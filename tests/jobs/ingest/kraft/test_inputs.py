"""Log segments and snapshots written by the test encoder, decoded into rows: detection by
content, every codec, control records, metadata transactions within and across segments,
NoOps counted and not written, unknown records written as `unknown`, corrupt and truncated
inputs reported in the summary; and a day of a cluster's log with its NoOps."""

from __future__ import annotations

import gzip
import time
from collections import Counter

import pytest

from jobs.ingest.kraft.inputs import (
    DUMP_LOG,
    SEGMENT,
    SNAPSHOT,
    Input,
    classify,
    decode_all,
    detect,
    names_metadata_topic,
)
from jobs.sim.kraft_encoder import (
    CODECS,
    Rec,
    batch_bytes,
    control_rec,
    day_log,
    meta,
    metadata_value,
    snapshot_bytes,
    topic_id,
)

T0 = 1_700_000_000_000


def _segment(*batches: bytes) -> Input:
    return Input("00000000000000000000.log", SEGMENT, b"".join(batches))


def test_detection_by_content_and_name() -> None:
    seg = batch_bytes(0, [meta("NoOpRecord", {})])
    # magic 2 at byte 16, CRC good, in the metadata log's folder
    assert detect("k/__cluster_metadata-0/at-all.bin", seg) == SEGMENT
    assert detect("anything/at-all.bin", seg, metadata_folder=True) == SEGMENT
    assert detect("x/00000000000000000000-0000000001.checkpoint", b"") == SNAPSHOT
    assert detect("k/__cluster_metadata-0/00000000000000000000.log", b"") == SEGMENT
    assert detect("k/other/00000000000000000000.log", b"") is None
    assert detect("controller.log.gz", gzip.compress(b"x" * 100)) is None
    assert detect("controller.log", b"[2024-01-01 00:00:00,000] INFO [Controller id=1] "
                                    b"x (kafka.controller.KafkaController)\n" * 3) is None
    assert detect("dump.out", b"Dumping /x/00.log\nLog starting offset: 0\n") == DUMP_LOG
    bad = bytearray(seg)
    bad[-1] ^= 1
    assert detect("a.bin", bytes(bad)) is None  # a whole first batch must check out


def test_only_the_metadata_logs_own_files_are_read_from_a_data_directory() -> None:
    """A broker's data directory (`log.dirs`) holds every topic's segments in the same
    record-batch format, and `bootstrap.checkpoint` (BootstrapDirectory.java:46 at 3.7.0)
    beside the metadata log: only `__cluster_metadata-N/` (or a folder whose
    `partition.metadata` names `Uuid.METADATA_TOPIC_ID`, Uuid.java:44 at 3.7.0) is the
    metadata log, and only `<20 digits>-<10 digits>.checkpoint` a snapshot
    (Snapshots.java:44-60 at 3.7.0)."""
    seg = batch_bytes(0, [meta("NoOpRecord", {})])
    outside = ("a log segment outside the metadata log's folder (__cluster_metadata-N, or "
               "partition.metadata naming its topic id)")
    assert classify("d/orders-0/00000000000000000000.log", seg) == (None, outside)
    assert classify("d/orders-0/00000000000000000000.log", b"") == (None, outside)
    assert classify("d/__cluster_metadata-0/00000000000000000000.log", seg) == (SEGMENT, None)
    assert classify("d/bootstrap.checkpoint", seg) == (
        None, "not a snapshot name (<20-digit offset>-<10-digit epoch>.checkpoint)")
    assert classify("d/__cluster_metadata-0/00000000000000000004-0000000002.checkpoint",
                    seg) == (SNAPSHOT, None)
    assert classify("d/broker-1/controller.log", b"[2024-01-01] INFO x\n") == (None, None)
    assert names_metadata_topic(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ")
    assert not names_metadata_topic(b"version: 0\ntopic_id: Qm9vX3FTU6WN0nJ1qk2bxw")


@pytest.mark.parametrize("codec", CODECS)
def test_segment_rows_with_every_codec(codec: int) -> None:
    records = [meta("TopicRecord", {"name": "t", "topicId": topic_id(1)}),
               meta("PartitionRecord", {"partitionId": 0, "topicId": topic_id(1),
                                        "replicas": [1, 2], "isr": [1, 2], "leader": 1,
                                        "leaderEpoch": 0, "partitionEpoch": 0}),
               meta("NoOpRecord", {})]
    rows, (s,) = decode_all([_segment(
        batch_bytes(0, [control_rec("LeaderChangeMessage", {"leaderId": 2})],
                    control_batch=True, leader_epoch=7, timestamp=T0),
        batch_bytes(1, records, codec=codec, leader_epoch=7, timestamp=T0 + 5))])
    assert [(r.offset, r.batch_base_offset, r.record_type) for r in rows] == [
        (0, 0, "LeaderChangeMessage"), (1, 1, "TopicRecord"), (2, 1, "PartitionRecord")]
    assert rows[0].broker_id == 2 and rows[0].is_control and rows[0].batch_leader_epoch == 7
    assert rows[2].ts == (T0 + 5) * 1000 and rows[2].replicas == [1, 2]
    assert (s.batches, s.records, s.rows, s.noops, s.first_offset, s.last_offset) == (
        2, 4, 3, 1, 0, 3)


def _txn(base: int, end: str, name: str = "tx") -> list[bytes]:
    closing = (meta("EndTransactionRecord", {}) if end == "end"
               else meta("AbortTransactionRecord", {"reason": "failover"}))
    return [batch_bytes(base, [meta("BeginTransactionRecord", {"name": name})]),
            batch_bytes(base + 1, [meta("TopicRecord", {"name": name, "topicId": topic_id(2)})]),
            batch_bytes(base + 2, [closing])]


def test_aborted_transaction_records_are_kept_and_flagged() -> None:
    rows, (s,) = decode_all([_segment(*_txn(0, "abort"), *_txn(3, "end"))])
    assert [(r.offset, r.record_type, r.transaction) for r in rows] == [
        (0, "BeginTransactionRecord", "aborted"), (1, "TopicRecord", "aborted"),
        (2, "AbortTransactionRecord", "aborted"), (3, "BeginTransactionRecord", "committed"),
        (4, "TopicRecord", "committed"), (5, "EndTransactionRecord", "committed")]
    assert (s.aborted, s.open_transaction) == (3, 0)


def test_a_transaction_spans_segments_and_one_left_open_says_so() -> None:
    first, second, third = _txn(0, "abort")
    rows, summaries = decode_all([
        Input("00000000000000000000.log", SEGMENT, first + second),
        Input("00000000000000000002.log", SEGMENT, third + _txn(3, "end")[0]
              + batch_bytes(4, [meta("NoOpRecord", {})]))])
    assert [(r.source, r.offset, r.transaction) for r in rows] == [
        ("00000000000000000000.log", 0, "aborted"), ("00000000000000000000.log", 1, "aborted"),
        ("00000000000000000002.log", 2, "aborted"), ("00000000000000000002.log", 3, "open")]
    assert [(s.aborted, s.open_transaction, s.noops) for s in summaries] == [
        (2, 0, 0), (1, 1, 1)]


def test_unknown_records_are_written_as_unknown_and_counted() -> None:
    unknown_key = Rec(bytes([1, 99, 0, 0]))
    future = Rec(metadata_value("TopicRecord", 0, {"name": "t"})[:2] + b"\x07\x00")
    rows, (s,) = decode_all([_segment(batch_bytes(0, [unknown_key, future]))])
    assert [(r.record_type, r.api_key, r.record_version, r.detail) for r in rows] == [
        ("unknown", 99, 0, "api key 99"), ("unknown", 2, 7, "TopicRecord version 7")]
    assert s.unknown == 2
    assert s.unknown_types == Counter({"api key 99 v0": 1, "api key 2 v7": 1})


def test_a_corrupt_batch_is_counted_with_its_reason_and_the_rest_read() -> None:
    good = batch_bytes(0, [meta("FenceBrokerRecord", {"id": 1, "epoch": 3})])
    bad = bytearray(batch_bytes(1, [meta("UnfenceBrokerRecord", {"id": 1, "epoch": 3})]))
    bad[-2] ^= 0x40
    after = batch_bytes(2, [meta("UnfenceBrokerRecord", {"id": 2, "epoch": 4})])
    rows, (s,) = decode_all([_segment(good, bytes(bad), after)])
    assert [(r.offset, r.broker_id, r.fenced) for r in rows] == [(0, 1, True), (2, 2, False)]
    assert s.corrupt_batches == 1 and s.error is None
    assert s.corrupt_reasons[0].startswith(f"batch at position {len(good)} (base offset 1): "
                                           "CRC-32C mismatch")


def test_a_truncated_segment_keeps_what_it_holds_and_says_where_it_stops() -> None:
    # A NoOp batch is 72 bytes: the 61-byte header, a 1-byte length, a 10-byte record.
    data = batch_bytes(0, [meta("NoOpRecord", {})]) + batch_bytes(1, [meta("NoOpRecord", {})])
    rows, (s,) = decode_all([_segment(data[:-5])])
    assert (s.records, s.noops, s.corrupt_batches) == (1, 1, 1)
    assert s.error is not None and s.error.startswith("batch at position 72 (base offset 1): "
                                                      "truncated")


def test_snapshot_header_records_footer() -> None:
    body = batch_bytes(1, [meta("RegisterBrokerRecord", {"brokerId": 4, "brokerEpoch": 9,
                                                         "incarnationId": topic_id(3),
                                                         "rack": "r1", "fenced": False}, 1)],
                       codec=4)
    data = snapshot_bytes([body], end_offset=2, timestamp=T0)
    rows, (s,) = decode_all([Input("00000000000000000100-0000000003.checkpoint", SNAPSHOT,
                                   data)])
    assert [r.record_type for r in rows] == ["SnapshotHeaderRecord", "RegisterBrokerRecord",
                                             "SnapshotFooterRecord"]
    assert (rows[1].broker_id, rows[1].broker_epoch, rows[1].fenced) == (4, 9, False)
    assert s.error is None and s.input_kind == SNAPSHOT
    rows, (cut,) = decode_all([Input("x.checkpoint", SNAPSHOT, data[:-80])])
    assert cut.error is not None and cut.error.startswith("batch at position")
    _, (nofooter,) = decode_all([Input("y.checkpoint", SNAPSHOT, body)])
    assert nofooter.error == "no SnapshotFooter: the snapshot is incomplete"


def test_a_day_of_metadata_log_with_its_noops() -> None:
    log = day_log()
    t = time.perf_counter()
    rows, summaries = decode_all([Input(n, SEGMENT, b) for n, b in log.segments])
    seconds = time.perf_counter() - t
    print(f"\n1-day KRaft log: {log.records} records ({log.noops} NoOps) in "
          f"{len(log.segments)} segments decoded in {seconds:.2f} s (pure Python)")
    assert log.noops == 172_800
    assert sum(s.records for s in summaries) == log.records
    assert sum(s.noops for s in summaries) == log.noops
    assert len(rows) == log.records - log.noops == sum(s.rows for s in summaries)
    assert all(s.error is None and s.unknown == 0 for s in summaries)
    assert Counter(r.transaction for r in rows)["committed"] == 72
