# ruff: noqa: E501
"""Every real log in tests/fixtures/ingest/real-logs (excerpts from public issues, docs and
blogs, each names its source in its first line) through the pure parser: the exact events
and observed transitions each one yields, and no unparsed controller line.

Expectations were read line by line against the log formats (docs/ingest-compare.md).
Notable ones:

* apache-kafka-pr11506: a broker's server.log (`[Kafka Server 0], Starting controlled
  shutdown`). The ControlledShutdown event is the controller's `Shutting down broker N`
  line; the broker side is not a controller line and yields nothing (with both logs
  present it would otherwise be counted twice).
* cp-all-in-one-issue49: a 2.6 state-change.log alone. The INFO `NonExistentPartition ->
  NewPartition with assigned replicas 1` lines are the topic creation (one event for the
  consecutive partitions of one topic); eventbus-0's line is before the excerpt, so its
  replica transition is observed but there is no creation event for it.
* cruise-control-issue1871: the reporter anonymised the partition (`partitionA`): kept as
  the topic text with partition None; no event can be made of it.
* unattributed-2025-broker-startup: `New broker startup callback for 1` has no BrokerChange
  line before it (the excerpt starts there), so it is the event; the callback for 2
  belongs to the `Newly added brokers: 2, ...` line before it.
* unattributed-2025-controller-election-blog: the new controller's line does not list the
  live brokers (no `Currently active brokers` line), so the failover lists broker 3 alone.
* unattributed-chinese-blog: no timestamps at all; file order, ts = 1970-01-01.
* unattributed-2021-chinese-notes: `T-sss-SNP-2` is the author's inconsistent anonymisation,
  extracted as written; the preferred-election line without a timestamp takes the one
  before it, and the line from broker 1 (10:53) sorts before broker 0's lines.

Tuples: summary = (read, extracted, informational, ignored, unparsed); event = (seq, type,
broker_id, topic, partition, replicas, brokers, error, line); observation = (seq, kind,
topic, partition, broker_id, from, to, leader, leader_epoch, isr, brokers, outcome).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from jobs.ingest.logparse import pipeline
from tests.helpers import REAL_LOGS

EXPECTED = {
    'apache-kafka-pr11506__ak0.10.0__broker-controlled-shutdown.log': (
        (4, 0, 0, 4, 0),
        [
        ],
        [
        ],
    ),
    'apache-kafka-pr5831-KAFKA-7532__ak2.0__shutting-down-brokers.log': (
        (2, 0, 1, 1, 0),
        [
        ],
        [
        ],
    ),
    'apache-kafka-pr8320__ak2.6-dev__default-state-change-log.log': (
        (8, 5, 2, 1, 0),
        [
        ],
        [
            (0, 'leader_and_isr_summary', None, None, 1, None, None, None, None, None, None, None),
            (0, 'leader_and_isr_summary', None, None, 0, None, None, None, None, None, None, None),
            (0, 'update_metadata_summary', None, None, None, None, None, None, None, None, (0, 1), None),
            (0, 'broker_leader_start', 'test', 1, 0, None, None, 0, 1, (0,), None, None),
            (0, 'update_metadata_summary', None, None, None, None, None, None, None, None, (), None),
        ],
    ),
    'bitnami-charts-issue19522__ak3.5-3.6__offline-to-online-election-failed.log': (
        (3, 2, 0, 1, 0),
        [
        ],
        [
            (0, 'partition_transition', '__transaction_state', 35, None, 'OfflinePartition', 'OnlinePartition', None, None, None, None, 'failed'),
        ],
    ),
    'confluentinc-confluent-kafka-dotnet-issue1460__ak2.6__topic-create.log': (
        (7, 6, 0, 1, 0),
        [
        ],
        [
            (0, 'replica_transition', 'eventbus', 0, 1, 'NewReplica', 'OnlineReplica', None, None, None, None, 'applied'),
            (0, 'replica_transition', 'eventbus', 1, 1, 'NewReplica', 'OnlineReplica', None, None, None, None, 'applied'),
            (0, 'replica_transition', 'eventbus', 2, 1, 'NewReplica', 'OnlineReplica', None, None, None, None, 'applied'),
            (0, 'update_metadata_summary', None, None, None, None, None, None, None, None, (), None),
            (0, 'broker_transition', 'eventbus', 2, 1, None, None, 1, None, None, None, None),
            (0, 'broker_transition', 'eventbus', 1, 1, None, None, 1, None, None, None, None),
        ],
    ),
    'confluentinc-cp-all-in-one-issue49__ak2.6__topic-create.log': (
        (8, 7, 0, 1, 0),
        [
            (1, 'PartitionCreated', None, 'eventbus', 1, (1,), None, None, 2),
            (1, 'PartitionCreated', None, 'eventbus', 2, (1,), None, None, 3),
        ],
        [
            (1, 'partition_transition', 'eventbus', 1, None, 'NonExistentPartition', 'NewPartition', None, None, None, None, 'applied'),
            (1, 'partition_transition', 'eventbus', 2, None, 'NonExistentPartition', 'NewPartition', None, None, None, None, 'applied'),
            (1, 'update_metadata_summary', None, None, None, None, None, None, None, None, (), None),
            (1, 'replica_transition', 'eventbus', 0, 1, 'NonExistentReplica', 'NewReplica', None, None, None, None, 'applied'),
            (1, 'replica_transition', 'eventbus', 1, 1, 'NonExistentReplica', 'NewReplica', None, None, None, None, 'applied'),
            (1, 'replica_transition', 'eventbus', 2, 1, 'NonExistentReplica', 'NewReplica', None, None, None, None, 'applied'),
            (1, 'update_metadata_summary', None, None, None, None, None, None, None, None, (), None),
        ],
    ),
    'confluentinc-librdkafka-issue1575__ak0.10__offline-partition-election.log': (
        (2, 1, 0, 1, 0),
        [
        ],
        [
            (0, 'leader_elected', 'LIVETOPICOLD', 0, None, None, None, 1, 1, (1,), None, None),
        ],
    ),
    'cruise-control-issue1871__linkedin-kafka__reassignment-custom-layout.log': (
        (3, 2, 0, 1, 0),
        [
        ],
        [
            (0, 'reassignment_leader', 'partitionA', None, None, None, None, 44256, None, None, None, None),
            (0, 'leader_epoch_updated', 'partitionA', None, None, None, None, None, 2500, None, None, None),
        ],
    ),
    'getsentry-self-hosted-issue1321__ak2.x__offline-to-online-election-failed.log': (
        (3, 2, 0, 1, 0),
        [
        ],
        [
            (0, 'partition_transition', 'ingest-metrics', 0, None, 'OfflinePartition', 'OnlinePartition', None, None, None, None, 'failed'),
        ],
    ),
    'hazelcast-issue22858__ak3.x__topic-create-testcontainer.log': (
        (5, 3, 1, 1, 0),
        [
        ],
        [
            (0, 'replica_transition', '75b52d8f-86b7-4000-b5e5-f3439a939925', 2, 1, 'NewReplica', 'OnlineReplica', None, None, None, None, 'applied'),
            (0, 'replica_transition', '75b52d8f-86b7-4000-b5e5-f3439a939925', 3, 1, 'NewReplica', 'OnlineReplica', None, None, None, None, 'applied'),
            (0, 'update_metadata_summary', None, None, None, None, None, None, None, None, (), None),
        ],
    ),
    'kroxylicious-junit5-extension-issue293__ak3.7.0__invalid-replica-transition.log': (
        (3, 2, 0, 1, 0),
        [
        ],
        [
            (0, 'replica_transition', '__org_kroxylicious_testing_consistencyTest', 0, 2, 'ReplicaDeletionSuccessful', 'ReplicaDeletionIneligible', None, None, None, None, 'rejected'),
        ],
    ),
    'mingyuchoo-kafka-study-series__ak2.x__state-machine-startup.log': (
        (4, 0, 2, 2, 0),
        [
        ],
        [
        ],
    ),
    'rust-rdkafka-issue242__ak2.4-2.5__new-to-online-no-live-replica.log': (
        (3, 2, 0, 1, 0),
        [
        ],
        [
            (0, 'partition_transition', '__test_rROC3KJfcB', 2, None, 'NewPartition', 'OnlinePartition', None, None, None, None, 'failed'),
        ],
    ),
    'unattributed-2016-confluent-docs__ak0.10.0__broker-startup.log': (
        (5, 1, 3, 1, 0),
        [
            (1, 'BrokerStartup', 1, None, None, None, None, None, 2),
        ],
        [
        ],
    ),
    'unattributed-2018-confluent-docker__ak1.1-2.0__auto-leader-rebalance.log': (
        (5, 0, 4, 1, 0),
        [
        ],
        [
        ],
    ),
    'unattributed-2021-chinese-notes__ak2.0-2.3__topic-create-election.log': (
        (7, 3, 2, 2, 0),
        [
            (1, 'PartitionCreated', None, 'T-XXX', 2, (3, 0), None, None, 2),
            (1, 'PartitionCreated', None, 'T-XXX', 1, (0, 1), None, None, 2),
            (1, 'PartitionCreated', None, 'T-XXX', 0, (1, 3), None, None, 2),
            (2, 'PartitionCreated', None, 'T-sss-SNP', 2, (3,), None, None, 4),
            (2, 'PartitionCreated', None, 'T-XXX-SNP', 1, (1,), None, None, 4),
            (2, 'PartitionCreated', None, 'T-XXX-SNP', 0, (0,), None, None, 4),
        ],
        [
            (1, 'leader_elected', 'T-XXX', 2, None, None, None, 3, None, None, None, None),
        ],
    ),
    'unattributed-2023-gently-kafka__ak2.6-2.7__update-metadata.log': (
        (3, 0, 2, 1, 0),
        [
        ],
        [
        ],
    ),
    'unattributed-2023-korean-notes__ak3.x__auto-leader-rebalance.log': (
        (5, 1, 3, 1, 0),
        [
        ],
        [
            (0, 'broker_metadata', 'django_SERVER_LOGS_question_delete_q', 0, 1, None, None, 3, 12, (3,), None, None),
        ],
    ),
    'unattributed-2025-broker-startup__ak3.5plus__new-broker-startup.log': (
        (24, 3, 20, 1, 0),
        [
            (1, 'BrokerStartup', 1, None, None, None, None, None, 2),
            (2, 'BrokerStartup', 2, None, None, None, None, None, 14),
        ],
        [
            (2, 'live_brokers', None, None, None, None, None, None, None, None, (0, 1, 2), None),
        ],
    ),
    'unattributed-2025-controller-election-blog__ak3.x__controller-election.log': (
        (4, 1, 2, 1, 0),
        [
            (1, 'ControllerFailover', 3, None, None, None, (3,), None, 2),
        ],
        [
        ],
    ),
    'unattributed-2026-docker-log__ak3.x__auto-leader-rebalance.log': (
        (5, 0, 4, 1, 0),
        [
        ],
        [
        ],
    ),
    'unattributed-chinese-blog__ak0.8-0.10__broker-failure-no-timestamps.log': (
        (3, 2, 0, 1, 0),
        [
            (1, 'BrokerStartup', 3, None, None, None, None, None, 2),
            (1, 'BrokerFailure', 4, None, None, None, None, None, 2),
        ],
        [
            (1, 'live_brokers', None, None, None, None, None, None, None, None, (3, 2, 1), None),
        ],
    ),
    # Its three truncation lines (the fetcher's and two `has no effect`) are broker offset
    # lines (tests/jobs/ingest/logparse/offsets/test_real_logs.py), extracted as such.
    'unattributed-pt-roleplay__ak2.4-2.5__reassignment-follower-side.log': (
        (37, 14, 13, 10, 0),
        [
        ],
        [
            (0, 'broker_metadata', 'roleplay', 0, 1, None, None, 3, 1, (3, 2), None, None),
            (0, 'broker_leader_and_isr', 'roleplay', 0, 1, None, None, 3, 1, (3, 2), None, None),
            (0, 'broker_metadata', 'roleplay', 0, 1, None, None, 3, 1, (3, 2), None, None),
            (0, 'broker_leader_and_isr', 'roleplay', 0, 1, None, None, 2, 2, (3, 2, 1), None, None),
            (0, 'broker_transition', 'roleplay', 0, 1, None, None, 2, None, None, None, None),
            (0, 'broker_metadata', 'roleplay', 0, 1, None, None, 2, 2, (3, 2, 1), None, None),
            (0, 'broker_leader_and_isr', 'roleplay', 0, 1, None, None, 2, 3, (2, 1), None, None),
            (0, 'broker_transition', 'roleplay', 0, 1, None, None, 2, None, None, None, None),
            (0, 'broker_metadata', 'roleplay', 0, 1, None, None, 2, 3, (2, 1), None, None),
            (0, 'broker_metadata', 'roleplay', 0, 1, None, None, 2, 3, (2, 1), None, None),
            (0, 'broker_metadata', 'roleplay', 0, 1, None, None, 2, 3, (2, 1), None, None),
        ],
    ),
}


def test_every_real_log_has_expectations() -> None:
    assert sorted(p.name for p in REAL_LOGS.glob("*.log")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_log(name: str) -> None:
    summary, events, observations = EXPECTED[name]
    r = pipeline.ingest([str(REAL_LOGS / name)])
    s = r.summary[0]
    got_summary = (s.lines_read, s.lines_extracted, s.lines_informational, s.lines_ignored,
                   s.lines_unparsed)
    assert r.unparsed == []
    assert got_summary == summary
    assert s.lines_read == s.lines_extracted + s.lines_informational + s.lines_ignored
    got_events = [(e.seq, e.event_type, e.broker_id, e.topic, e.partition, e.replicas,
                   e.brokers, e.error, int(e.source.rsplit(":", 1)[1])) for e in r.events]
    assert got_events == events
    got_obs = [(o.seq, o.kind, o.topic, o.partition, o.broker_id, o.from_state, o.to_state,
                o.leader, o.leader_epoch, o.isr, o.brokers, o.outcome) for o in r.observations]
    assert got_obs == observations
    assert all(e.source and e.source.startswith(name + ":") for e in r.events)


def test_a_folder_of_logs_and_documents_reads_only_its_logs(tmp_path: Path) -> None:
    """Given a folder of collected logs with documents beside them (notes on the formats,
    the template catalogues), the documents are skipped (and reported), not parsed as logs."""
    for name in EXPECTED:
        shutil.copy(REAL_LOGS / name, tmp_path / name)
    for doc in ("LOG-NOTES.md", "formats-catalogue-broker-statechange.tsv",
                "formats-catalogue-controller-package.tsv"):
        (tmp_path / doc).write_text("# not a log: [2023-10-01 14:41:35,289] INFO x (y)\n")
    r = pipeline.ingest([str(tmp_path)])
    assert sorted(s.file for s in r.summary) == sorted(EXPECTED)
    assert sorted(Path(p).name for p in r.skipped) == [
        "LOG-NOTES.md", "formats-catalogue-broker-statechange.tsv",
        "formats-catalogue-controller-package.tsv"]
    assert r.unparsed == []
