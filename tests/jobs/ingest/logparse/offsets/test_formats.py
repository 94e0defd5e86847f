"""Every line format of the broker-offset catalogue (`jobs.ingest.logparse.offsets.formats`), one
test per release line where the format changed: the line as that release prints it (the
call site is cited in the catalogue: file and line at the release tag) parses into exactly
the fact it states, a neighbour release's rendering is not taken for it, and a line of
those loggers that looks like an offset line but fits no format is reported, not guessed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.ingest.logparse import pipeline
from jobs.ingest.logparse.offsets import formats, idents, owners, parse
from jobs.ingest.logparse.offsets.facts import KINDS, OffsetFact
from tests.helpers import ROOT

PARTITION = "kafka.cluster.Partition"
STATE = "state.change.logger"
LOG = "kafka.log.Log"
ULOG = "kafka.log.UnifiedLog"
ULOG4 = "org.apache.kafka.storage.internals.log.UnifiedLog"  # 4.1 moved it to `storage`
FETCHER = "kafka.server.ReplicaFetcherThread"
CACHE = "kafka.server.epoch.LeaderEpochFileCache"
CACHE35 = "org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache"
LM = "kafka.log.LogManager"
RCM = "org.apache.kafka.controller.ReplicationControlManager"
PCB = "org.apache.kafka.controller.PartitionChangeBuilder"


def _f(kind: str, **kw: object) -> OffsetFact:
    return OffsetFact(kind, **kw)  # type: ignore[arg-type]


# (format, logger, message, the fact's fields besides `kind`, `format`)
CASES: list[tuple[str, str, str, dict[str, object]]] = [
    ("isr_shrink@1.0", PARTITION,
     "[Partition orders-0 broker=1] Shrinking ISR from 1,2,3 to 1",
     dict(topic="orders", partition=0, broker_id=1, previous_isr=(1, 2, 3), isr=(1,))),
    # KAFKA-7838's own example output (apache/kafka pull request 6168), with a logIdent.
    ("isr_shrink@2.2", PARTITION,
     "[Partition t-0 broker=0] Shrinking ISR from 1,2,0 to 0. Leader: (highWatermark: 0, "
     "endOffset: 20). Out of sync replicas: (brokerId: 1, endOffset: 19) (brokerId: 2, "
     "endOffset: 19).",
     dict(topic="t", partition=0, broker_id=0, previous_isr=(1, 2, 0), isr=(0,),
          high_watermark=0, log_end_offset=20, replica_offsets=((1, 19), (2, 19)))),
    # 3.0+: a replica the leader has no state for prints `unknown`.
    ("isr_shrink@2.2", PARTITION,
     "[Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: (highWatermark: "
     "1000, endOffset: 1100). Out of sync replicas: (brokerId: 2, endOffset: unknown).",
     dict(topic="orders", partition=0, broker_id=1, previous_isr=(1, 2), isr=(1,),
          high_watermark=1000, log_end_offset=1100, replica_offsets=((2, None),))),
    ("isr_shrink@3.6", PARTITION,
     "[Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: (highWatermark: "
     "1000, endOffset: 1000). Out of sync replicas: (brokerId: 2, endOffset: 998, "
     "lastCaughtUpTimeMs: 1700000000000).",
     dict(topic="orders", partition=0, broker_id=1, previous_isr=(1, 2), isr=(1,),
          high_watermark=1000, log_end_offset=1000, replica_offsets=((2, 998),))),
    ("isr_expand@1.0", PARTITION,
     "[Partition orders-0 broker=1] Expanding ISR from 1 to 1,2",
     dict(topic="orders", partition=0, broker_id=1, previous_isr=(1,), isr=(1, 2))),
    ("isr_updated@1.0", PARTITION,
     "[Partition orders-0 broker=1] ISR updated to [1,2] and zkVersion updated to [7]",
     dict(topic="orders", partition=0, broker_id=1, isr=(1, 2), partition_epoch=7)),
    ("isr_updated@2.7", PARTITION,
     "[Partition orders-0 broker=1] ISR updated from AlterIsr to 1,2 and version updated "
     "to [7]",
     dict(topic="orders", partition=0, broker_id=1, isr=(1, 2), partition_epoch=7)),
    ("isr_updated@2.8", PARTITION,
     "[Partition orders-0 broker=1] ISR updated to 1,2 and version updated to [7]",
     dict(topic="orders", partition=0, broker_id=1, isr=(1, 2), partition_epoch=7)),
    ("isr_updated@3.1", PARTITION,
     "[Partition orders-0 broker=1] ISR updated to 1 and version updated to 7",
     dict(topic="orders", partition=0, broker_id=1, isr=(1,), partition_epoch=7)),
    ("isr_updated@3.5", PARTITION,
     "[Partition orders-0 broker=1] ISR updated to 1 (under-min-isr) and version updated "
     "to 7",
     dict(topic="orders", partition=0, broker_id=1, isr=(1,), partition_epoch=7)),
    ("leader_start@1.0", PARTITION,
     "[Partition orders-0 broker=2] orders-0 starts at Leader Epoch 6 from offset 1000. "
     "Previous Leader Epoch was: 5",
     dict(topic="orders", partition=0, broker_id=2, leader_epoch=6, offset=1000)),
    ("leader_start@2.5", PARTITION,
     "[Partition orders-0 broker=2] orders-0 starts at leader epoch 6 from offset 1000 with "
     "high watermark 990. Previous leader epoch was 5.",
     dict(topic="orders", partition=0, broker_id=2, leader_epoch=6, offset=1000,
          high_watermark=990)),
    ("leader_start@2.6", STATE,
     "[Broker id=2] Leader orders-0 starts at leader epoch 6 from offset 1000 with high "
     "watermark 990 ISR [2] addingReplicas [] removingReplicas []. Previous leader epoch "
     "was 5.",
     dict(topic="orders", partition=0, broker_id=2, leader_epoch=6, offset=1000,
          high_watermark=990, isr=(2,))),
    ("leader_start@3.3", STATE,
     "[Broker id=2] Leader orders-0 with topic id None starts at leader epoch 6 from offset "
     "1000 with partition epoch 9, high watermark 990, ISR [2], adding replicas [] and "
     "removing replicas []. Previous leader epoch was 5.",
     dict(topic="orders", partition=0, broker_id=2, leader_epoch=6, offset=1000,
          high_watermark=990, isr=(2,), partition_epoch=9)),
    ("leader_start@3.5", STATE,
     "[Broker id=2] Leader orders-0 with topic id Some(Vd0y8RcXTzyyDC7A8R8RNg) starts at "
     "leader epoch 6 from offset 1000 with partition epoch 9, high watermark 990, ISR [2], "
     "adding replicas [] and removing replicas [] . Previous leader epoch was 5.",
     dict(topic="orders", partition=0, broker_id=2, leader_epoch=6, offset=1000,
          high_watermark=990, isr=(2,), partition_epoch=9,
          topic_id="Vd0y8RcXTzyyDC7A8R8RNg")),
    ("leader_start@3.6", STATE,
     "[Broker id=2] Leader orders-0 with topic id Some(Vd0y8RcXTzyyDC7A8R8RNg) starts at "
     "leader epoch 6 from offset 1000 with partition epoch 9, high watermark 990, ISR [2], "
     "adding replicas [] and removing replicas [] (under-min-isr). Previous leader Some(1) "
     "and previous leader epoch was 5.",
     dict(topic="orders", partition=0, broker_id=2, leader_epoch=6, offset=1000,
          high_watermark=990, isr=(2,), partition_epoch=9, previous_leader=1,
          topic_id="Vd0y8RcXTzyyDC7A8R8RNg")),
    ("follower_start@2.6", STATE,
     "[Broker id=1] Follower orders-0 starts at leader epoch 6 from offset 1100 with high "
     "watermark 1000. Previous leader epoch was 5.",
     dict(topic="orders", partition=0, broker_id=1, leader_epoch=6, offset=1100,
          log_end_offset=1100, high_watermark=1000)),
    ("follower_start@3.3", STATE,
     "[Broker id=1] Follower orders-0 starts at leader epoch 6 from offset 1100 with "
     "partition epoch 9 and high watermark 1000. Current leader is 2. Previous leader "
     "epoch was 5.",
     dict(topic="orders", partition=0, broker_id=1, leader_epoch=6, offset=1100,
          log_end_offset=1100, high_watermark=1000, leader=2, partition_epoch=9)),
    ("follower_start@3.6", STATE,
     "[Broker id=1] Follower orders-0 starts at leader epoch 6 from offset 1100 with "
     "partition epoch 9 and high watermark 1000. Current leader is 2. Previous leader None "
     "and previous leader epoch was 5.",
     dict(topic="orders", partition=0, broker_id=1, leader_epoch=6, offset=1100,
          log_end_offset=1100, high_watermark=1000, leader=2, partition_epoch=9)),
    ("log_loaded@1.0", LOG,
     "Completed load of log orders-0 with 2 log segments, log start offset 0 and log end "
     "offset 1100 in 12 ms",
     dict(topic="orders", partition=0, log_end_offset=1100)),
    ("log_loaded@1.1", LOG,
     "[Log partition=orders-0, dir=/var/lib/kafka] Completed load of log with 2 segments, "
     "log start offset 0 and log end offset 1100 in 12 ms",
     dict(topic="orders", partition=0, log_end_offset=1100)),
    ("log_loaded@2.6", LM,
     "Completed load of Log(dir=/var/lib/kafka/orders-0, topic=orders, partition=0, "
     "highWatermark=1000, lastStableOffset=1000, logStartOffset=0, logEndOffset=1100) with "
     "2 segments in 12ms (1/3 loaded in /var/lib/kafka)",
     dict(topic="orders", partition=0, log_end_offset=1100, high_watermark=1000)),
    ("log_loaded@3.6", LM,
     "Completed load of Log(dir=/k/orders-0, topicId=Vd0y8RcXTzyyDC7A8R8RNg, topic=orders, "
     "partition=0, highWatermark=1000, lastStableOffset=1000, logStartOffset=0, "
     "logEndOffset=1100) with 2 segments, local-log-start-offset 0 and log-end-offset 1100 "
     "in 12ms (1/3 completed in /k)",
     dict(topic="orders", partition=0, log_end_offset=1100, high_watermark=1000,
          topic_id="Vd0y8RcXTzyyDC7A8R8RNg")),
    ("truncate@1.0", LOG, "Truncating log orders-0 to offset 1000.",
     dict(topic="orders", partition=0, offset=1000)),
    ("truncate@1.1", LOG,
     "[Log partition=orders-0, dir=/var/lib/kafka] Truncating to offset 1000",
     dict(topic="orders", partition=0, offset=1000)),
    ("truncate@1.1", ULOG4,
     "[UnifiedLog partition=orders-0, dir=/var/lib/kafka] Truncating to offset 1000",
     dict(topic="orders", partition=0, offset=1000)),
    ("truncate_no_effect@1.0", LOG,
     "Truncating orders-0 to 1100 has no effect as the largest offset in the log is 1099.",
     dict(topic="orders", partition=0, offset=1100, log_end_offset=1100)),
    ("truncate_no_effect@1.1", ULOG,
     "[UnifiedLog partition=orders-0, dir=/k] Truncating to 1100 has no effect as the "
     "largest offset in the log is 1099",
     dict(topic="orders", partition=0, offset=1100, log_end_offset=1100)),
    ("truncate@fetcher-hw-2.2", FETCHER,
     "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition orders-0 to "
     "local high watermark 1000",
     dict(topic="orders", partition=0, broker_id=1, leader=2, offset=1000)),
    ("truncate@fetcher-hw-3.1", FETCHER,
     "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition orders-0 "
     "with TruncationState(offset=1000, completed=true) due to local high watermark 1000",
     dict(topic="orders", partition=0, broker_id=1, leader=2, offset=1000,
          high_watermark=1000)),
    ("truncate@fetcher-epoch-3.1", FETCHER,
     "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition orders-0 "
     "with TruncationState(offset=1000, completed=true) due to leader epoch and offset "
     "EpochEndOffset(errorCode=0, partition=0, leaderEpoch=5, endOffset=1000)",
     dict(topic="orders", partition=0, broker_id=1, leader=2, offset=1000, leader_epoch=5)),
    ("truncate@below-hw-2.0", FETCHER,
     "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating orders-0 to offset "
     "900 below high watermark 1000",
     dict(topic="orders", partition=0, broker_id=1, leader=2, offset=900,
          high_watermark=1000)),
    ("truncate@reset-1.0", FETCHER,
     "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Reset fetch offset for "
     "partition orders-0 from 1100 to current leader's latest offset 1000",
     dict(topic="orders", partition=0, broker_id=1, leader=2, offset=1000,
          log_end_offset=1100)),
    ("fetch_reset_start@1.0", FETCHER,
     "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Reset fetch offset for "
     "partition orders-0 from 10 to current leader's start offset 500",
     dict(topic="orders", partition=0, broker_id=1, leader=2, offset=500, log_end_offset=10)),
    ("truncate_no_effect@epoch-1.0", FETCHER,
     "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Based on follower's leader "
     "epoch, leader replied with an offset 1100 >= the follower's log end offset 1100 in "
     "orders-0. No truncation needed.",
     dict(topic="orders", partition=0, broker_id=1, leader=2, offset=1100,
          log_end_offset=1100)),
    ("truncation_refused@1.0", FETCHER,
     "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Exiting because log truncation "
     "is not allowed for partition orders-0, current leader's latest offset 1000 is less "
     "than replica's latest offset 1100",
     dict(topic="orders", partition=0, broker_id=1, leader=2, offset=1000,
          log_end_offset=1100)),
    # 1.0's epochChangeMsg lacks the colon after the current `offset` (fixed in 1.1).
    ("epoch_assigned@1.0", CACHE,
     "Updated PartitionLeaderEpoch. New: {epoch:6, offset:1000}, Current: {epoch:5, "
     "offset900} for Partition: orders-0. Cache now contains 3 entries.",
     dict(topic="orders", partition=0, leader_epoch=6, offset=1000)),
    ("epoch_assigned@1.0", CACHE,
     "Updated PartitionLeaderEpoch. New: {epoch:6, offset:1000}, Current: {epoch:5, "
     "offset:900} for Partition: orders-0. Cache now contains 3 entries.",
     dict(topic="orders", partition=0, leader_epoch=6, offset=1000)),
    ("epoch_assigned@2.1", CACHE35,
     "[LeaderEpochCache orders-0] Appended new epoch entry EpochEntry(epoch=6, "
     "startOffset=1000). Cache now contains 3 entries.",
     dict(topic="orders", partition=0, leader_epoch=6, offset=1000)),
    ("epoch_assigned@conflict-2.1", CACHE,
     "[LeaderEpochCache orders-0] New epoch entry EpochEntry(epoch=6, startOffset=1000) "
     "caused truncation of conflicting entries ArrayBuffer(EpochEntry(epoch=5, "
     "startOffset=1050)). Cache now contains 3 entries.",
     dict(topic="orders", partition=0, leader_epoch=6, offset=1000)),
    ("truncate@epoch-cache-1.0", CACHE,
     "Cleared latest Set(EpochEntry(6,1000)) entries from epoch cache based on passed "
     "offset 1000 leaving 2 in EpochFile for partition orders-0",
     dict(topic="orders", partition=0, offset=1000)),
    ("truncate@epoch-cache-2.1", CACHE35,
     "[LeaderEpochCache orders-0] Cleared entries [EpochEntry(epoch=6, startOffset=1000)] "
     "from epoch cache after truncating to end offset 1000, leaving 2 entries in the cache.",
     dict(topic="orders", partition=0, offset=1000)),
    ("unclean_change@3.0", RCM,
     "[QuorumController id=3000] UNCLEAN partition change for orders-0 with topic ID "
     "Vd0y8RcXTzyyDC7A8R8RNg: isr: [1] -> [2], leader: -1 -> 2, leaderEpoch: 5 -> 6, "
     "partitionEpoch: 8 -> 9",
     dict(topic="orders", partition=0, previous_isr=(1,), isr=(2,), previous_leader=-1,
          leader=2, leader_epoch=6, partition_epoch=9, topic_id="Vd0y8RcXTzyyDC7A8R8RNg")),
    # 3.2+ (leaderRecoveryState) and 3.7+ (ELR) print more fields in the diff.
    ("unclean_change@3.0", RCM,
     "[QuorumController id=3000] UNCLEAN partition change for orders-0 with topic ID "
     "Vd0y8RcXTzyyDC7A8R8RNg: isr: [1, 3] -> [2], leader: -1 -> 2, leaderRecoveryState: "
     "RECOVERED -> RECOVERING, leaderEpoch: 5 -> 6, elr: [3] -> [], partitionEpoch: 8 -> 9",
     dict(topic="orders", partition=0, previous_isr=(1, 3), isr=(2,), previous_leader=-1,
          leader=2, leader_epoch=6, partition_epoch=9, topic_id="Vd0y8RcXTzyyDC7A8R8RNg")),
    ("unclean_leader_set@3.6", PCB,
     "Setting new leader for topicId Vd0y8RcXTzyyDC7A8R8RNg, partition 0 to 2 using an "
     "unclean election",
     dict(partition=0, leader=2, topic_id="Vd0y8RcXTzyyDC7A8R8RNg")),
    ("unclean_trigger@3.9", RCM,
     "[QuorumController id=3000] Triggering unclean leader election for offline partition "
     "orders-0.",
     dict(topic="orders", partition=0)),
    ("leader_recovering@3.2", STATE,
     "[Broker id=2] The topic partition orders-0 was marked as RECOVERING. Leader log "
     "recovery is not implemented. Marking the topic partition as RECOVERED.",
     dict(topic="orders", partition=0, broker_id=2)),
    ("leader_recovering@3.3", STATE,
     "[Broker id=2] The topic partition orders-0 was marked as RECOVERING. Marking the "
     "topic partition as RECOVERED.",
     dict(topic="orders", partition=0, broker_id=2)),
]


@pytest.mark.parametrize(("name", "logger", "msg", "fields"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_release_format_reads_what_the_line_states(
        name: str, logger: str, msg: str, fields: dict[str, object]) -> None:
    fmt = next(f for f in formats.FORMATS if f.name == name)
    assert parse.parse(logger, msg) == _f(fmt.kind, format=name, **fields)


def test_the_docs_list_every_format_with_its_call_sites() -> None:
    doc = (ROOT / "docs" / "ingest-compare.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip().strip("`"): line for line in doc.splitlines()
            if line.startswith("| `") and "@" in line.split("|")[1]}
    assert set(rows) == {f.name for f in formats.FORMATS}
    for f in formats.FORMATS:
        for site in f.sources:
            path, at = site.split("@")
            assert f"{path.rsplit('/', 1)[-1]}` at {at}" in rows[f.name], (f.name, site)


def test_every_catalogue_entry_is_tested_and_its_example_parses() -> None:
    assert {c[0] for c in CASES} == {f.name for f in formats.FORMATS}
    for f in formats.FORMATS:
        logger = f.logger.split(" ", 1)[0]
        got = parse.parse(logger, f.example)
        assert got is not None and got.format == f.name and got.kind == f.kind, f.name
        assert f.kind in KINDS
        assert all("@" in s for s in f.sources), f.name


@pytest.mark.parametrize(("logger", "msg"), [
    # 1.0-2.1's shrink has no offsets; its 2.2 successor must not be read as it (and back).
    (PARTITION, "[Partition t-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: "
                "(highWatermark: 5, endOffset: 9)."),
    # A rendering no release prints: the leader epoch missing.
    (STATE, "[Broker id=2] Leader t-0 starts at from offset 1000 with high watermark 990"),
    (ULOG, "[UnifiedLog partition=t-0, dir=/k] Truncating to offset one thousand"),
    (FETCHER, "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition "
              "t-0 with OffsetTruncationState(1000, true)"),
    (RCM, "[QuorumController id=1] UNCLEAN partition change: isr [1] -> [2]"),
])
def test_a_line_that_looks_like_an_offset_line_but_fits_no_format_is_unknown(
        logger: str, msg: str) -> None:
    assert parse.parse(logger, msg) is parse.UNKNOWN


def test_an_unknown_offset_line_is_unparsed_with_its_reason(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "[2024-01-01 00:00:00,000] INFO [UnifiedLog partition=t-0, dir=/k] Truncating to "
        "offset 5 (kafka.log.UnifiedLog)\n"
        "[2024-01-01 00:00:01,000] INFO [UnifiedLog partition=t-0, dir=/k] Truncating to the "
        "offset 5 (kafka.log.UnifiedLog)\n")
    r = pipeline.ingest([str(log)])
    assert [(e.line, e.kind, e.offset) for e in r.evidence] == [(1, "truncate", 5)]
    assert [(u.line, u.reason) for u in r.unparsed] == [
        (2, "a broker offset line no known format reads (jobs.ingest.logparse.offsets)")]
    assert (r.summary[0].lines_extracted, r.summary[0].lines_unparsed) == (1, 1)


@pytest.mark.parametrize(("logger", "msg"), [
    (PARTITION, "[Partition t-0 broker=1] Log loaded for partition t-0 with initial high "
                "watermark 0"),
    (LM, "Created log for partition t-0 in /k/t-0 with properties "
         "{unclean.leader.election.enable -> false}."),
    (STATE, "[Broker id=1] Truncated logs and checkpointed recovery boundaries for "
            "partition t-0 as part of become-follower request"),
    # Another logger entirely: never read, whatever it says.
    ("kafka.server.KafkaServer", "[KafkaServer id=1] Truncating to offset 5"),
    (None, "Truncating to offset 5"),
])
def test_other_lines_are_not_offset_lines(logger: str | None, msg: str) -> None:
    assert parse.parse(logger, msg) is None


def test_idents_name_the_partition_and_the_writing_broker() -> None:
    assert idents.split("[Partition my.topic-v2-12 broker=3] x") == (
        idents.Ident("my.topic-v2", 12, 3, None), "x")
    assert idents.split("[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] x") == (
        idents.Ident(None, None, 1, 2), "x")
    assert idents.split("[LeaderEpochCache t-0] x") == (idents.Ident("t", 0, None, None), "x")
    assert idents.split("[QuorumController id=3000] x") == (idents.NONE, "x")
    # The server's own lines name the broker that writes the log (an offset line's
    # logIdent names it too: `OffsetFact.broker_id`); a controller's node id is no broker.
    assert [idents.writer(m) for m in (
        "[KafkaServer id=4] started", "[BrokerServer id=5] Transition from STARTING to STARTED",
        "[KafkaRaftServer nodeId=6] Kafka Server started", "[ReplicaManager broker=7] x",
        "[Broker id=8] x", "[QuorumController id=11] x", "[Controller id=12] x",
        "started")] == [4, 5, 6, 7, 8, None, None, None]


def test_a_file_is_its_brokers_else_its_folders_else_nobodys() -> None:
    got = owners.file_owners({
        "b1/server.log": {1}, "b1/server.log.1": set(), "b1/state-change.log": {1},
        "b2/server.log": {2, 3},  # two brokers named: nobody's (a merged log)
        "b2/server.log.1": set(),  # nor its neighbour's
        "b4/server.log": set(),  # names nobody, nor does its folder
        "all.log": {5}, "other.log": set(),  # the top folder names one broker
    })
    assert got == {"b1/server.log": 1, "b1/server.log.1": 1, "b1/state-change.log": 1,
                   "all.log": 5, "other.log": 5}
