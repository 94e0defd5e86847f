"""Real broker logs quoted in public threads (tests/fixtures/ingest/broker-logs, each names
its source in its first line; tests/fixtures/ingest/README.md says what each shows) through
the pure ingest: every offset line they hold, who wrote it and what it says, and no line
left unparsed.

* yolean-kubernetes-kafka-issue98 (1.0.0): the follower (broker 2) of test-produce-consume-0
  had 2391 messages, its leader (broker 1, back from a VM restart) 2051: with unclean
  leader election disabled the follower refuses to truncate and exits. Its `has no effect`
  lines name no broker: the file's `[KafkaServer id=2]` and fetcher lines say it is broker 2.
* confluentinc-librdkafka-issue3396 (2.2-3.0): broker 2 truncates three empty partitions
  to their high watermark 0; the log's own line says nothing was removed (largest offset -1).
* see-quick-blog-2025 (4.1.0, KRaft): the leader's stored ISR after broker 3 returned;
  broker 1 truncating to the leader epoch's end offset, which removes nothing: its log
  held exactly offsets up to the end offset.
* unattributed-pt-roleplay (2.4-2.5): a new replica's truncations during a reassignment.

Tuples: (line, broker_id, broker_from, kind, topic, partition, leader_epoch, offset,
log_end_offset, high_watermark, format).
"""

from __future__ import annotations

from jobs.ingest.logparse import pipeline
from jobs.ingest.logparse.offsets.rows import EvidenceRow
from tests.helpers import INGEST_FIXTURES, REAL_LOGS

BROKER_LOGS = INGEST_FIXTURES / "broker-logs"


def _rows(rows: list[EvidenceRow]) -> list[tuple[object, ...]]:
    return [(r.line, r.broker_id, r.broker_from, r.kind, r.topic, r.partition, r.leader_epoch,
             r.offset, r.log_end_offset, r.high_watermark, r.format) for r in rows]


def _ingest(path: str) -> pipeline.IngestResult:
    r = pipeline.ingest([path])
    assert r.unparsed == []
    return r


def test_yolean_follower_refuses_to_truncate_340_messages() -> None:
    r = _ingest(str(BROKER_LOGS / "yolean-kubernetes-kafka-issue98__ak1.0__truncation-refused.log"))
    assert _rows(r.evidence) == [
        (2, 2, "file", "truncate_no_effect", "test-kafkacat", 0, None, 2334, 2334, None,
         "truncate_no_effect@1.0"),
        (3, 2, "file", "truncate_no_effect", "test-produce-consume", 0, None, 2391, 2391, None,
         "truncate_no_effect@1.0"),
        (4, 2, "line", "leader_start", "kafka-monitor-topic", 0, 4, 1, None, None,
         "leader_start@1.0"),
        (5, 2, "line", "truncation_refused", "test-produce-consume", 0, None, 2051, 2391, None,
         "truncation_refused@1.0"),
    ]
    refused = r.evidence[-1]
    assert refused.leader == 1  # the fetcher's leaderId
    assert refused.log_end_offset - refused.offset == 340  # what a truncation would remove
    assert refused.text.startswith("[2017-11-10 13:17:57,590] FATAL [ReplicaFetcher")
    assert refused.source.endswith("truncation-refused.log:5")
    s = r.summary[0]
    assert (s.lines_read, s.lines_extracted, s.lines_ignored) == (8, 4, 4)


def test_librdkafka_truncations_to_an_empty_high_watermark() -> None:
    r = _ingest(str(BROKER_LOGS / "confluentinc-librdkafka-issue3396__ak2.2-3.0__truncate-to-"
                                  "high-watermark.log"))
    topics = ("kale.entry_test.test.de", 3), (
        "kale.marketplace.order_processing.auto_cancel.fulfilment_cancel.cl.dlq", 10), (
        "kale.marketplace.order_processing.auto_cancel.fulfilment_cancel.co.dlq", 4)
    want = []
    for i, (t, p) in enumerate(topics):
        want += [(2 + 2 * i, 2, "line", "truncate", t, p, None, 0, None, None,
                  "truncate@fetcher-hw-2.2"),
                 (3 + 2 * i, 2, "file", "truncate_no_effect", t, p, None, 0, 0, None,
                  "truncate_no_effect@1.1")]
    assert _rows(r.evidence) == want
    assert r.owners == {r.summary[0].file: 2}


def test_see_quick_blog_4_1_truncation_to_the_epoch_end_offset_removes_nothing() -> None:
    r = _ingest(str(BROKER_LOGS / "see-quick-blog-2025__ak4.1__isr-update-and-truncation.log"))
    assert _rows(r.evidence) == [
        (2, 1, "line", "isr_updated", "__consumer_offsets", 1, None, None, None, None,
         "isr_updated@3.5"),
        (3, 1, "line", "truncate", "performance-test", 1, 5, 768982, None, None,
         "truncate@fetcher-epoch-3.1"),
        (4, 1, "file", "truncate_no_effect", "performance-test", 1, None, 768982, 768982,
         None, "truncate_no_effect@1.1"),
        (5, 1, "line", "truncate", "__consumer_offsets", 41, 0, 6, None, None,
         "truncate@fetcher-epoch-3.1"),
        (6, 1, "file", "truncate_no_effect", "__consumer_offsets", 41, None, 6, 6, None,
         "truncate_no_effect@1.1"),
    ]
    assert r.evidence[0].isr == (2, 1, 3) and r.evidence[0].partition_epoch == 18
    assert r.evidence[1].leader == 3


def test_roleplay_new_replica_truncations() -> None:
    r = _ingest(str(REAL_LOGS / "unattributed-pt-roleplay__ak2.4-2.5__reassignment-follower-"
                                "side.log"))
    assert _rows(r.evidence) == [
        (15, 1, "line", "truncate", "roleplay", 0, None, 0, None, None,
         "truncate@fetcher-hw-2.2"),
        (16, 1, "file", "truncate_no_effect", "roleplay", 0, None, 0, 0, None,
         "truncate_no_effect@1.1"),
        (36, 1, "file", "truncate_no_effect", "roleplay", 0, None, 102, 102, None,
         "truncate_no_effect@1.1"),
    ]


def test_a_folder_of_several_brokers_logs_keeps_each_files_broker() -> None:
    r = _ingest(str(BROKER_LOGS))
    assert sorted(set(r.owners.values())) == [1, 2]
    assert {(e.file.split("__")[0], e.broker_id) for e in r.evidence} == {
        ("yolean-kubernetes-kafka-issue98", 2), ("confluentinc-librdkafka-issue3396", 2),
        ("see-quick-blog-2025", 1)}
