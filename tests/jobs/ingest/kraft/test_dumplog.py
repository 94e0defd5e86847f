"""`kafka-dump-log --cluster-metadata-decoder` text read back into records: the real output
quoted in apache/kafka's `config/kraft/README.md` (3.0.0 to 3.3.x, the same excerpt), whose
every row is checked by hand against the lines, and a dump written in the 3.8 format
(`DumpLogSegments.dumpLog` at 3.8.0: record metadata, control records, a metadata
transaction, a NoOp, a record the tool failed on, the truncated file's last line)."""

from __future__ import annotations

import json
from pathlib import Path

from jobs.ingest.kraft.framing import metadata_record
from jobs.ingest.kraft.inputs import DUMP_LOG, Input, decode_all, detect
from jobs.ingest.kraft.rows import MetadataRow, Summary
from jobs.sim.kraft_encoder import metadata_value
from tests.helpers import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "kraft"
README = FIXTURES / "dump-log-ak3.0.0-config-kraft-README.txt"
AK38 = FIXTURES / "dump-log-ak3.8-format.txt"
TOPIC_ID = "5zoAlv-xEh9xRANKXt1Lbg"


def _decode(path: Path) -> tuple[list[MetadataRow], Summary]:
    rows, (summary,) = decode_all([Input(path.name, DUMP_LOG, path.read_bytes())])
    return rows, summary


def test_dump_text_is_detected_by_content() -> None:
    assert detect("notes/any-name.txt", README.read_bytes()[:4096]) == DUMP_LOG
    assert detect("controller.log", b"[2024-01-01 00:00:00,000] INFO x (kafka.x)\n") is None


def test_readme_dump_every_record_by_hand() -> None:
    rows, summary = _decode(README)
    got = [(r.offset, r.batch_base_offset, r.batch_leader_epoch, r.ts, r.record_type,
            r.record_version, r.is_control, r.broker_id, r.broker_epoch, r.fenced)
           for r in rows]
    assert got == [
        # baseOffset 0: a control batch printed without its kind (--skip-record-metadata).
        (0, 0, 1, 1614382631640000, "ControlRecord", None, True, None, None, None),
        # A new registration is fenced (RegisterBrokerRecord's Fenced defaults to true).
        (1, 1, 1, 1614382632329000, "RegisterBrokerRecord", 0, False, 1, 0, True),
        (2, 2, 1, 1614382632453000, "UnfenceBrokerRecord", 0, False, 1, 0, False),
        (3, 3, 1, 1614382634484000, "FenceBrokerRecord", 0, False, 1, 0, True),
        # partitionLeaderEpoch 2: a new quorum leader, whose LeaderChange opens its epoch.
        (4, 4, 2, 1614382671857000, "ControlRecord", None, True, None, None, None),
        (5, 5, 2, 1614382672440000, "RegisterBrokerRecord", 0, False, 1, 4, True),
        (6, 6, 2, 1614382672544000, "UnfenceBrokerRecord", 0, False, 1, 4, False),
        # baseOffset 7, count 2: both records take the batch's offsets and CreateTime.
        (7, 7, 2, 1614382712158000, "TopicRecord", 0, False, None, None, None),
        (8, 7, 2, 1614382712158000, "PartitionRecord", 0, False, None, None, None),
    ]
    topic, partition = rows[7], rows[8]
    assert (topic.topic, topic.topic_id) == ("foo", TOPIC_ID)
    assert (partition.topic_id, partition.partition, partition.replicas, partition.isr,
            partition.leader, partition.leader_epoch, partition.partition_epoch,
            partition.adding_replicas, partition.removing_replicas) == (
        TOPIC_ID, 0, [1], [1], 1, 0, 0, None, None)
    assert json.loads(rows[1].fields or "")["endPoints"][0]["port"] == 9092
    assert all(r.source.startswith(README.name + ":") for r in rows)
    assert rows[8].source == f"{README.name}:19"
    assert (summary.batches, summary.records, summary.rows, summary.unknown,
            summary.error) == (8, 9, 9, 0, None)


def test_readme_payloads_are_what_the_binary_decoder_reads() -> None:
    """The JSON kafka-dump-log printed, written as binary records by the test encoder and
    decoded: the same fields, so the text and the segments give the same rows."""
    names = {"REGISTER_BROKER_RECORD": "RegisterBrokerRecord",
             "UNFENCE_BROKER_RECORD": "UnfenceBrokerRecord",
             "FENCE_BROKER_RECORD": "FenceBrokerRecord", "TOPIC_RECORD": "TopicRecord",
             "PARTITION_RECORD": "PartitionRecord"}
    payloads = [json.loads(line.split("payload: ", 1)[1])
                for line in README.read_text().splitlines() if "payload: " in line]
    assert len(payloads) == 7
    for p in payloads:
        d = metadata_record(metadata_value(names[p["type"]], p["version"], p["data"]))
        shown = {k: v for k, v in (d.fields or {}).items() if k in p["data"]}
        assert shown == p["data"]


def test_38_format_controls_transactions_noops_and_errors() -> None:
    rows, summary = _decode(AK38)
    by_offset = {r.offset: r for r in rows}
    assert 104 not in by_offset  # the NoOp is counted, not written
    assert by_offset[100].record_type == "LeaderChangeMessage"
    assert by_offset[100].fields is None and by_offset[100].is_control
    assert [by_offset[o].transaction for o in (101, 102, 103)] == ["aborted"] * 3
    assert by_offset[102].topic == "orders"  # kept, flagged: never dropped silently
    change = by_offset[105]
    assert (change.record_version, change.isr, change.elr, change.last_known_elr,
            change.leader, change.transaction) == (2, [2], [1], [], -2, None)
    assert (by_offset[106].record_type, by_offset[106].detail) == (
        "unknown", "Error at 106, skipping. Unknown metadata id 99")
    brc = by_offset[107]
    assert (brc.broker_id, brc.broker_epoch, brc.in_controlled_shutdown, brc.fenced) == (
        3, 42, True, None)
    assert json.loads(by_offset[108].fields or "") == {"controlType": "COMMIT",
                                                      "coordinatorEpoch": 0}
    assert by_offset[101].ts == 1_700_000_000_500_000
    s = summary
    assert (s.batches, s.records, s.rows, s.noops, s.aborted, s.unknown,
            s.records_by_type["NoOpRecord"]) == (6, 9, 8, 1, 3, 1, 1)
    assert s.error == "line 18: Found 17 invalid bytes at the end of " \
        "00000000000000000100.log"


def test_a_dumped_snapshot_with_its_header_and_footer() -> None:
    batch = ("baseOffset: {o} lastOffset: {o} count: 1 baseSequence: -1 lastSequence: -1 "
             "producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 3 isTransactional: false "
             "isControl: {c} deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: "
             "1700000000000 size: 90 magic: 2 compresscodec: none crc: 1 isvalid: true")
    meta = "| offset: {o} CreateTime: 1700000000000 keySize: 4 valueSize: 9 sequence: -1 " \
           "headerKeys: []"
    text = "\n".join([
        "Dumping /k/__cluster_metadata-0/00000000000000000100-0000000003.checkpoint",
        "Snapshot end offset: 100, epoch: 3",
        batch.format(o=0, c="true"),
        meta.format(o=0) + ' SnapshotHeader {"version":0,"lastContainedLogTimestamp":17}',
        batch.format(o=1, c="false"),
        meta.format(o=1) + ' payload: {"type":"FENCE_BROKER_RECORD","version":0,'
                           '"data":{"id":2,"epoch":5}}',
        batch.format(o=2, c="true"),
        meta.format(o=2) + ' SnapshotFooter {"version":0}', ""])
    rows, (s,) = decode_all([Input("snap.txt", DUMP_LOG, text.encode())])
    assert [(r.offset, r.record_type, r.is_control, r.batch_leader_epoch) for r in rows] == [
        (0, "SnapshotHeaderRecord", True, 3), (1, "FenceBrokerRecord", False, 3),
        (2, "SnapshotFooterRecord", True, 3)]
    assert json.loads(rows[0].fields or "")["lastContainedLogTimestamp"] == 17
    assert (rows[1].broker_id, rows[1].broker_epoch, rows[1].fenced) == (2, 5, True)
    assert (s.batches, s.rows, s.unreadable_lines, s.error) == (3, 3, 0, None)


RECORDS_ONLY = FIXTURES / "dump-log-ak3.7-records-only.txt"


def test_record_lines_without_their_batch_lines_are_records() -> None:
    """A dump pasted with only its record lines (`DumpLogSegments.dumpLog` at 3.7.0,
    DumpLogSegments.scala:284-323: `| offset: N CreateTime: T ... payload: {..}`, a control
    record's `controlType: ..` instead of a payload). Each gives its offset and time; the
    batch is inferred from the offsets and the time (raft `BatchBuilder.java:283` at
    3.7.0: every record of a batch carries the batch's append time); the quorum epoch,
    printed only on the batch line, is unknown."""
    rows, summary = _decode(RECORDS_ONLY)
    got = [(r.offset, r.batch_base_offset, r.batch_leader_epoch, r.ts, r.record_type,
            r.is_control) for r in rows]
    assert got == [
        (200, 200, None, 1714050000100000, "LeaderChangeMessage", True),
        (210, 210, None, 1714050012345000, "TopicRecord", False),
        (211, 210, None, 1714050012345000, "PartitionRecord", False),
        (212, 210, None, 1714050012345000, "PartitionRecord", False),
        (240, 240, None, 1714050098765000, "PartitionChangeRecord", False),
        (241, 240, None, 1714050098765000, "PartitionChangeRecord", False),
        (242, 240, None, 1714050098765000, "FenceBrokerRecord", False),
    ]
    assert (rows[5].partition, rows[5].leader, rows[5].isr) == (1, 1, [1])
    assert (rows[6].broker_id, rows[6].broker_epoch, rows[6].fenced) == (2, 36, True)
    assert (summary.batches, summary.records, summary.unreadable_lines, summary.error,
            summary.nothing_read()) == (0, 7, 0, None, None)


def test_a_dump_of_which_nothing_could_be_read_says_why() -> None:
    text = ("Dumping /var/lib/kafka/__cluster_metadata-0/00000000000000000000.log\n"
            "Log starting offset: 0\n| offset CreateTime 1714050000100\nnot a dump line\n")
    assert detect("pasted.txt", text.encode()) == DUMP_LOG
    rows, (summary,) = decode_all([Input("pasted.txt", DUMP_LOG, text.encode())])
    assert rows == [] and summary.unreadable_lines == 2
    assert summary.nothing_read() == "line 3: not a kafka-dump-log line"
    empty = Summary("00000000000000000000.log", "segment")
    assert empty.nothing_read() is None  # an empty segment is no problem
