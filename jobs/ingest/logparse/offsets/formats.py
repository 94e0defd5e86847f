"""The catalogue of the broker's offset lines: one entry per line format and release range,
read from Kafka's source at each release tag (apache/kafka, the file and line of the call
site at the first and the last tag printing it; "trunk" is the 4.0 development line of
October 2024, commit 1eb7644). `until` None: the format is still printed there.

Each entry's `body` is the message after its logIdent (`idents.split`), as a regular
expression with named groups that `parse.py` reads:

    tp                 a topic-partition (`t-0`); `name` the same, as a log's directory name
    epoch / offset / leo / hw / pe   leader epoch, an offset, a log end offset, a high
                       watermark, a partition epoch (zkVersion)
    isr / prev_isr     id lists (`1,2`, `[1,2]`, `[1, 2]`); `leader` / `prev_leader` ids
                       (`Some(1)` / `None` as Scala prints an `Option[Int]`)
    oos                the out-of-sync replicas of an ISR shrink; `diff` a KRaft partition
                       change; `topic` / `partition` / `topic_id` when printed apart

`example` is a message as that release prints it (logIdent included, envelope removed); the
tests parse every example (tests/jobs/ingest/logparse/offsets/test_formats.py) and
docs/ingest-compare.md lists them.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_N = r"-?\d+"
_TP = r"(?P<tp>[A-Za-z0-9._-]+-\d+)"
_IDS = r"[-\d, ]*"
_OPT = r"(?:Some\((?P<prev_leader>-?\d+)\)|None)"


class LineFormat(NamedTuple):
    name: str  # kind@first release line
    kind: str  # `facts.KINDS`
    since: str
    until: str | None  # the last release line printing it; None: still in trunk (4.0)
    logger: str  # the logger's class (log4j's %c), last component
    level: str
    sources: tuple[str, ...]  # "path:line@tag" of the call site
    example: str
    body: str  # regular expression of the message after the logIdent

    @property
    def releases(self) -> str:
        return f"{self.since}-{self.until or '4.x'}" if self.until != self.since else self.since


_P = "core/src/main/scala/kafka/cluster/Partition.scala"
_LOG = "core/src/main/scala/kafka/log/Log.scala"
_ULOG = "core/src/main/scala/kafka/log/UnifiedLog.scala"
_LM = "core/src/main/scala/kafka/log/LogManager.scala"
_AFT = "core/src/main/scala/kafka/server/AbstractFetcherThread.scala"
_RFT = "core/src/main/scala/kafka/server/ReplicaFetcherThread.scala"
_LEC = "core/src/main/scala/kafka/server/epoch/LeaderEpochFileCache.scala"
_LECJ = "storage/src/main/java/org/apache/kafka/storage/internals/epoch/LeaderEpochFileCache.java"
_PR = "metadata/src/main/java/org/apache/kafka/metadata/PartitionRegistration.java"
_PCB = "metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java"
_RCM = "metadata/src/main/java/org/apache/kafka/controller/ReplicationControlManager.java"
_OOS = r"(?P<oos>(?:\(brokerId: \d+, endOffset: (?:-?\d+|unknown)\) ?)+)"
_OOS36 = (r"(?P<oos>(?:\(brokerId: \d+, endOffset: (?:-?\d+|unknown), lastCaughtUpTimeMs: "
          r"(?:-?\d+|unknown)\) ?)+)")
_LEADER_TAIL = rf"from offset (?P<offset>{_N})"

FORMATS: tuple[LineFormat, ...] = (
    # -- ISR shrink and expansion (the leader's kafka.cluster.Partition) ------------------
    LineFormat(
        "isr_shrink@1.0", "isr_shrink", "1.0", "2.1", "Partition", "INFO",
        (f"{_P}:443@1.0.0", f"{_P}:639@2.1.0"),
        "[Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1",
        rf"^Shrinking ISR from (?P<prev_isr>{_IDS}) to (?P<isr>{_IDS})$"),
    LineFormat(
        "isr_shrink@2.2", "isr_shrink", "2.2", "3.5", "Partition", "INFO",
        (f"{_P}:642@2.2.0", f"{_P}:964@2.7.0", f"{_P}:1168@3.5.0"),
        "[Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: (highWatermark: "
        "1000, endOffset: 1000). Out of sync replicas: (brokerId: 2, endOffset: 1000).",
        rf"^Shrinking ISR from (?P<prev_isr>{_IDS}) to (?P<isr>{_IDS})\. Leader: \(highWatermark: "
        rf"(?P<hw>{_N}), endOffset: (?P<leo>{_N})\)\. Out of sync replicas: {_OOS}\.$"),
    LineFormat(
        "isr_shrink@3.6", "isr_shrink", "3.6", None, "Partition", "INFO",
        (f"{_P}:1200@3.6.0", f"{_P}:1277@trunk"),
        "[Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: (highWatermark: "
        "1000, endOffset: 1000). Out of sync replicas: (brokerId: 2, endOffset: 1000, "
        "lastCaughtUpTimeMs: 1700000000000).",
        rf"^Shrinking ISR from (?P<prev_isr>{_IDS}) to (?P<isr>{_IDS})\. Leader: \(highWatermark: "
        rf"(?P<hw>{_N}), endOffset: (?P<leo>{_N})\)\. Out of sync replicas: {_OOS36}\.$"),
    LineFormat(
        "isr_expand@1.0", "isr_expand", "1.0", "2.7", "Partition", "INFO",
        (f"{_P}:316@1.0.0", f"{_P}:688@2.5.0", f"{_P}:1338@2.7.0"),
        "[Partition orders-0 broker=1] Expanding ISR from 1 to 1,2",
        rf"^Expanding ISR from (?P<prev_isr>{_IDS}) to (?P<isr>{_IDS})$"),
    LineFormat(
        "isr_updated@1.0", "isr_updated", "1.0", "2.7", "Partition", "TRACE up to 2.3, INFO",
        (f"{_P}:569@1.0.0", f"{_P}:1183@2.4.0", f"{_P}:1381@2.7.0"),
        "[Partition orders-0 broker=1] ISR updated to [1,2] and zkVersion updated to [5]",
        rf"^ISR updated to \[(?P<isr>{_IDS})\] and zkVersion updated to \[(?P<pe>{_N})\]$"),
    LineFormat(
        "isr_updated@2.7", "isr_updated", "2.7", "2.7", "Partition", "INFO",
        (f"{_P}:1451@2.7.0",),
        "[Partition orders-0 broker=1] ISR updated from AlterIsr to 1,2 and version updated "
        "to [5]",
        rf"^ISR updated from AlterIsr to (?P<isr>{_IDS}) and version updated to \[(?P<pe>{_N})\]$"),
    LineFormat(
        "isr_updated@2.8", "isr_updated", "2.8", "3.0", "Partition", "INFO",
        (f"{_P}:1421@2.8.0", f"{_P}:1407@3.0.0"),
        "[Partition orders-0 broker=1] ISR updated to 1,2 and version updated to [5]",
        rf"^ISR updated to (?P<isr>{_IDS}) and version updated to \[(?P<pe>{_N})\]$"),
    LineFormat(
        "isr_updated@3.1", "isr_updated", "3.1", "3.4", "Partition", "INFO",
        (f"{_P}:1449@3.1.0", f"{_P}:1726@3.3.0"),
        "[Partition orders-0 broker=1] ISR updated to 1,2 and version updated to 5",
        rf"^ISR updated to (?P<isr>[-\d,]*) and version updated to (?P<pe>{_N})$"),
    LineFormat(
        "isr_updated@3.5", "isr_updated", "3.5", None, "Partition", "INFO",
        (f"{_P}:1871@3.5.0", f"{_P}:1988@trunk"),
        "[Partition orders-0 broker=1] ISR updated to 1,2 (under-min-isr) and version "
        "updated to 5",
        rf"^ISR updated to (?P<isr>[-\d,]*) (?:\(under-min-isr\) )?\s?and version updated to "
        rf"(?P<pe>{_N})$"),
    # -- becoming leader: the new leader's end offset at the election ---------------------
    LineFormat(
        "leader_start@1.0", "leader_start", "1.0", "2.4", "Partition", "INFO",
        (f"{_P}:201@1.0.0", f"{_P}:384@2.2.0", f"{_P}:509@2.4.0"),
        "[Partition orders-0 broker=2] orders-0 starts at Leader Epoch 6 from offset 1000. "
        "Previous Leader Epoch was: 5",
        rf"^{_TP} starts at Leader Epoch (?P<epoch>{_N}) {_LEADER_TAIL}\. Previous Leader "
        rf"Epoch was: {_N}$"),
    LineFormat(
        "leader_start@2.5", "leader_start", "2.5", "2.5", "Partition", "INFO",
        (f"{_P}:493@2.5.0",),
        "[Partition orders-0 broker=2] orders-0 starts at leader epoch 6 from offset 1000 "
        "with high watermark 1000. Previous leader epoch was 5.",
        rf"^{_TP} starts at leader epoch (?P<epoch>{_N}) {_LEADER_TAIL} with high watermark "
        rf"(?P<hw>{_N})\. Previous leader epoch was {_N}\.$"),
    LineFormat(
        "leader_start@2.6", "leader_start", "2.6", "3.2", "state.change.logger", "INFO",
        (f"{_P}:503@2.6.0", f"{_P}:577@3.2.0"),
        "[Broker id=2] Leader orders-0 starts at leader epoch 6 from offset 1000 with high "
        "watermark 1000 ISR [2] addingReplicas [] removingReplicas []. Previous leader epoch "
        "was 5.",
        rf"^Leader {_TP} starts at leader epoch (?P<epoch>{_N}) {_LEADER_TAIL} with high "
        rf"watermark (?P<hw>{_N}) ISR \[(?P<isr>{_IDS})\] addingReplicas \[{_IDS}\] "
        rf"removingReplicas \[{_IDS}\]\. Previous leader epoch was {_N}\.$"),
    LineFormat(
        "leader_start@3.3", "leader_start", "3.3", "3.4", "state.change.logger", "INFO",
        (f"{_P}:620@3.3.0",),
        "[Broker id=2] Leader orders-0 with topic id Some(Vd0y8RcXTzyyDC7A8R8RNg) starts at "
        "leader epoch 6 from offset 1000 with partition epoch 9, high watermark 1000, ISR "
        "[2], adding replicas [] and removing replicas []. Previous leader epoch was 5.",
        rf"^Leader {_TP} with topic id (?:Some\((?P<topic_id>[^)]*)\)|None) starts at leader "
        rf"epoch (?P<epoch>{_N}) {_LEADER_TAIL} with partition epoch (?P<pe>{_N}), high "
        rf"watermark (?P<hw>{_N}), ISR \[(?P<isr>{_IDS})\], adding replicas \[{_IDS}\] and "
        rf"removing replicas \[{_IDS}\]\. Previous leader epoch was {_N}\.$"),
    LineFormat(
        "leader_start@3.5", "leader_start", "3.5", "3.5", "state.change.logger", "INFO",
        (f"{_P}:720@3.5.0",),
        "[Broker id=2] Leader orders-0 with topic id Some(Vd0y8RcXTzyyDC7A8R8RNg) starts at "
        "leader epoch 6 from offset 1000 with partition epoch 9, high watermark 1000, ISR "
        "[2], adding replicas [] and removing replicas [] (under-min-isr). Previous leader "
        "epoch was 5.",
        rf"^Leader {_TP} with topic id (?:Some\((?P<topic_id>[^)]*)\)|None) starts at leader "
        rf"epoch (?P<epoch>{_N}) {_LEADER_TAIL} with partition epoch (?P<pe>{_N}), high "
        rf"watermark (?P<hw>{_N}), ISR \[(?P<isr>{_IDS})\], adding replicas \[{_IDS}\] and "
        rf"removing replicas \[{_IDS}\] (?:\(under-min-isr\))?\. Previous leader epoch was "
        rf"{_N}\.$"),
    LineFormat(
        "leader_start@3.6", "leader_start", "3.6", None, "state.change.logger", "INFO",
        (f"{_P}:734@3.6.0", f"{_P}:781@trunk"),
        "[Broker id=2] Leader orders-0 with topic id Some(Vd0y8RcXTzyyDC7A8R8RNg) starts at "
        "leader epoch 6 from offset 1000 with partition epoch 9, high watermark 1000, ISR "
        "[2], adding replicas [] and removing replicas [] (under-min-isr). Previous leader "
        "None and previous leader epoch was 5.",
        rf"^Leader {_TP} with topic id (?:Some\((?P<topic_id>[^)]*)\)|None) starts at leader "
        rf"epoch (?P<epoch>{_N}) {_LEADER_TAIL} with partition epoch (?P<pe>{_N}), high "
        rf"watermark (?P<hw>{_N}), ISR \[(?P<isr>{_IDS})\], adding replicas \[{_IDS}\] and "
        rf"removing replicas \[{_IDS}\] (?:\(under-min-isr\))?\. Previous leader {_OPT} and "
        rf"previous leader epoch was {_N}\.$"),
    # -- becoming follower: its end offset before the truncation (2.6+) --------------------
    LineFormat(
        "follower_start@2.6", "follower_start", "2.6", "3.2", "state.change.logger", "INFO",
        (f"{_P}:574@2.6.0", f"{_P}:658@3.2.0"),
        "[Broker id=1] Follower orders-0 starts at leader epoch 6 from offset 1100 with high "
        "watermark 1000. Previous leader epoch was 5.",
        rf"^Follower {_TP} starts at leader epoch (?P<epoch>{_N}) from offset (?P<leo>{_N}) "
        rf"with high watermark (?P<hw>{_N})\. Previous leader epoch was {_N}\.$"),
    LineFormat(
        "follower_start@3.3", "follower_start", "3.3", "3.5", "state.change.logger", "INFO",
        (f"{_P}:714@3.3.0", f"{_P}:815@3.5.0"),
        "[Broker id=1] Follower orders-0 starts at leader epoch 6 from offset 1100 with "
        "partition epoch 9 and high watermark 1000. Current leader is 2. Previous leader "
        "epoch was 5.",
        rf"^Follower {_TP} starts at leader epoch (?P<epoch>{_N}) from offset (?P<leo>{_N}) "
        rf"with partition epoch (?P<pe>{_N}) and high watermark (?P<hw>{_N})\. Current leader "
        rf"is (?P<leader>{_N})\. Previous leader epoch was {_N}\.$"),
    LineFormat(
        "follower_start@3.6", "follower_start", "3.6", None, "state.change.logger", "INFO",
        (f"{_P}:835@3.6.0", f"{_P}:883@trunk"),
        "[Broker id=1] Follower orders-0 starts at leader epoch 6 from offset 1100 with "
        "partition epoch 9 and high watermark 1000. Current leader is 2. Previous leader "
        "None and previous leader epoch was 5.",
        rf"^Follower {_TP} starts at leader epoch (?P<epoch>{_N}) from offset (?P<leo>{_N}) "
        rf"with partition epoch (?P<pe>{_N}) and high watermark (?P<hw>{_N})\. Current leader "
        rf"is (?P<leader>{_N})\. Previous leader {_OPT} and previous leader epoch was {_N}\.$"),
    # -- loading a log at startup: the end offset a returning broker had ------------------
    LineFormat(
        "log_loaded@1.0", "log_loaded", "1.0", "1.0", "Log", "INFO",
        (f"{_LOG}:217@1.0.0",),
        "Completed load of log orders-0 with 1 log segments, log start offset 0 and log end "
        "offset 1100 in 12 ms",
        rf"^Completed load of log (?P<name>\S+) with \d+ log segments, log start offset {_N} "
        rf"and log end offset (?P<leo>{_N}) in \d+ ms$"),
    LineFormat(
        "log_loaded@1.1", "log_loaded", "1.1", "2.5", "Log", "INFO",
        (f"{_LOG}:230@1.1.0", f"{_LOG}:315@2.5.0"),
        "[Log partition=orders-0, dir=/var/lib/kafka] Completed load of log with 1 segments, "
        "log start offset 0 and log end offset 1100 in 12 ms",
        rf"^Completed load of log with \d+ segments, log start offset {_N} and log end offset "
        rf"(?P<leo>{_N}) in \d+ ms$"),
    LineFormat(
        "log_loaded@2.6", "log_loaded", "2.6", "3.5", "LogManager", "INFO",
        (f"{_LM}:357@2.6.0", f"{_LM}:415@3.3.0", f"{_LM}:433@3.5.0"),
        "Completed load of Log(dir=/var/lib/kafka/orders-0, topic=orders, partition=0, "
        "highWatermark=1000, lastStableOffset=1000, logStartOffset=0, logEndOffset=1100) with "
        "1 segments in 12ms (1/3 loaded in /var/lib/kafka)",
        rf"^Completed load of Log\(dir=[^,]*(?:, topicId=(?P<topic_id>[^,]*))?, "
        rf"topic=(?P<topic>[^,]+), partition=(?P<partition>\d+), highWatermark=(?P<hw>{_N}), "
        rf"lastStableOffset={_N}, logStartOffset={_N}, logEndOffset=(?P<leo>{_N})\) with \d+ "
        r"segments in \d+ms \(\d+/\d+ (?:loaded|completed) in [^)]*\)$"),
    LineFormat(
        "log_loaded@3.6", "log_loaded", "3.6", None, "LogManager", "INFO",
        (f"{_LM}:441@3.6.0", f"{_LM}:507@trunk"),
        "Completed load of Log(dir=/var/lib/kafka/orders-0, topicId=Vd0y8RcXTzyyDC7A8R8RNg, "
        "topic=orders, partition=0, highWatermark=1000, lastStableOffset=1000, "
        "logStartOffset=0, logEndOffset=1100) with 1 segments, local-log-start-offset 0 and "
        "log-end-offset 1100 in 12ms (1/3 completed in /var/lib/kafka)",
        rf"^Completed load of Log\(dir=[^,]*(?:, topicId=(?P<topic_id>[^,]*))?, "
        rf"topic=(?P<topic>[^,]+), partition=(?P<partition>\d+), highWatermark=(?P<hw>{_N}), "
        rf"lastStableOffset={_N}, logStartOffset={_N}, logEndOffset=(?P<leo>{_N})\) with \d+ "
        rf"segments, local-log-start-offset {_N} and log-end-offset {_N} in \d+ms "
        r"\(\d+/\d+ completed in [^)]*\)$"),
    # -- truncation --------------------------------------------------------------------------
    LineFormat(
        "truncate@1.0", "truncate", "1.0", "1.0", "Log", "INFO",
        (f"{_LOG}:1474@1.0.0",),
        "Truncating log orders-0 to offset 1000.",
        rf"^Truncating log (?P<name>\S+) to offset (?P<offset>{_N})\.$"),
    LineFormat(
        "truncate@1.1", "truncate", "1.1", None, "Log (UnifiedLog from 3.1)", "INFO",
        (f"{_LOG}:1486@1.1.0", f"{_LOG}:1811@3.0.0", f"{_ULOG}:1588@3.1.0",
         f"{_ULOG}:1844@trunk"),
        "[UnifiedLog partition=orders-0, dir=/var/lib/kafka] Truncating to offset 1000",
        rf"^Truncating to offset (?P<offset>{_N})$"),
    LineFormat(
        "truncate_no_effect@1.0", "truncate_no_effect", "1.0", "1.0", "Log", "INFO",
        (f"{_LOG}:1471@1.0.0",),
        "Truncating orders-0 to 1100 has no effect as the largest offset in the log is 1099.",
        rf"^Truncating (?P<name>\S+) to (?P<offset>{_N}) has no effect as the largest offset "
        rf"in the log is (?P<largest>{_N})\.$"),
    LineFormat(
        "truncate_no_effect@1.1", "truncate_no_effect", "1.1", None,
        "Log (UnifiedLog from 3.1)", "INFO",
        (f"{_LOG}:1483@1.1.0", f"{_LOG}:1799@3.0.0", f"{_ULOG}:1576@3.1.0",
         f"{_ULOG}:1832@trunk"),
        "[Log partition=orders-0, dir=/var/lib/kafka] Truncating to 1100 has no effect as the "
        "largest offset in the log is 1099",
        rf"^Truncating to (?P<offset>{_N}) has no effect as the largest offset in the log is "
        rf"(?P<largest>{_N})$"),
    LineFormat(
        "truncate@fetcher-hw-2.2", "truncate", "2.2", "3.0", "ReplicaFetcherThread", "INFO",
        (f"{_AFT}:219@2.2.0", f"{_AFT}:251@3.0.0"),
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition orders-0 "
        "to local high watermark 1000",
        rf"^Truncating partition {_TP} to local high watermark (?P<offset>{_N})$"),
    LineFormat(
        "truncate@fetcher-hw-3.1", "truncate", "3.1", None, "ReplicaFetcherThread", "INFO",
        (f"{_AFT}:251@3.1.0", f"{_AFT}:244@trunk"),
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition orders-0 "
        "with TruncationState(offset=1000, completed=true) due to local high watermark 1000",
        rf"^Truncating partition {_TP} with TruncationState\(offset=(?P<offset>{_N}), "
        rf"completed=\w+\) due to local high watermark (?P<hw>{_N})$"),
    LineFormat(
        "truncate@fetcher-epoch-3.1", "truncate", "3.1", None, "ReplicaFetcherThread", "INFO",
        (f"{_AFT}:270@3.1.0", f"{_AFT}:263@trunk"),
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition orders-0 "
        "with TruncationState(offset=1000, completed=true) due to leader epoch and offset "
        "EpochEndOffset(errorCode=0, partition=0, leaderEpoch=5, endOffset=1000)",
        rf"^Truncating partition {_TP} with TruncationState\(offset=(?P<offset>{_N}), "
        rf"completed=\w+\) due to leader epoch and offset EpochEndOffset\(.*leaderEpoch="
        rf"(?P<epoch>{_N}), endOffset={_N}\)$"),
    LineFormat(
        "truncate@below-hw-2.0", "truncate", "2.0", None, "ReplicaFetcherThread", "WARN",
        (f"{_RFT}:327@2.0.0", f"{_RFT}:285@2.4.0", f"{_RFT}:182@trunk"),
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating orders-0 to offset "
        "900 below high watermark 1000",
        rf"^Truncating {_TP} to offset (?P<offset>{_N}) below high watermark (?P<hw>{_N})$"),
    LineFormat(
        "truncate@reset-1.0", "truncate", "1.0", None, "ReplicaFetcherThread", "WARN",
        (f"{_RFT}:160@1.0.0", f"{_RFT}:192@2.0.0", f"{_AFT}:515@2.1.0", f"{_AFT}:653@trunk"),
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Reset fetch offset for "
        "partition orders-0 from 1100 to current leader's latest offset 1000",
        rf"^Reset fetch offset for partition {_TP} from (?P<leo>{_N}) to current leader's "
        rf"latest offset (?P<offset>{_N})$"),
    LineFormat(
        "fetch_reset_start@1.0", "fetch_reset_start", "1.0", "3.5", "ReplicaFetcherThread",
        "WARN", (f"{_RFT}:188@1.0.0", f"{_AFT}:542@2.1.0", f"{_AFT}:683@3.5.0"),
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Reset fetch offset for "
        "partition orders-0 from 10 to current leader's start offset 500",
        rf"^Reset fetch offset for partition {_TP} from (?P<leo>{_N}) to current leader's "
        rf"start offset (?P<offset>{_N})$"),
    LineFormat(
        "truncate_no_effect@epoch-1.0", "truncate_no_effect", "1.0", "1.1",
        "ReplicaFetcherThread", "INFO", (f"{_RFT}:336@1.0.0", f"{_RFT}:373@1.1.0"),
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Based on follower's leader "
        "epoch, leader replied with an offset 1100 >= the follower's log end offset 1100 in "
        "orders-0. No truncation needed.",
        rf"^Based on follower's leader epoch, leader replied with an offset (?P<offset>{_N}) >= "
        rf"the follower's log end offset (?P<leo>{_N}) in {_TP}\. No truncation needed\.$"),
    LineFormat(
        "truncation_refused@1.0", "truncation_refused", "1.0", "2.0", "ReplicaFetcherThread",
        "FATAL", (f"{_RFT}:155@1.0.0", f"{_RFT}:187@2.0.0"),
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Exiting because log truncation "
        "is not allowed for partition orders-0, current leader's latest offset 1000 is less "
        "than replica's latest offset 1100",
        rf"^Exiting because log truncation is not allowed for partition {_TP}, current "
        rf"leader's latest offset (?P<offset>{_N}) is less than replica's latest offset "
        rf"(?P<leo>{_N})$"),
    # -- the leader-epoch cache --------------------------------------------------------------
    LineFormat(
        "epoch_assigned@1.0", "epoch_assigned", "1.0", "2.0", "LeaderEpochFileCache", "INFO",
        (f"{_LEC}:62@1.0.0", f"{_LEC}:187@1.0.0", f"{_LEC}:196@2.0.0"),
        "Updated PartitionLeaderEpoch. New: {epoch:6, offset:1000}, Current: {epoch:5, "
        "offset:900} for Partition: orders-0. Cache now contains 3 entries.",
        rf"^Updated PartitionLeaderEpoch\. New: \{{epoch:(?P<epoch>{_N}), offset:"
        rf"(?P<offset>{_N})\}}, Current: \{{epoch:{_N}, offset:?{_N}\}} for Partition: {_TP}\. "
        r"Cache now contains \d+ entries\.$"),
    LineFormat(
        "epoch_assigned@2.1", "epoch_assigned", "2.1", None, "LeaderEpochFileCache", "DEBUG",
        (f"{_LEC}:80@2.1.0", f"{_LEC}:58@3.4.0", f"{_LECJ}:73@3.5.0", f"{_LECJ}:116@trunk"),
        "[LeaderEpochCache orders-0] Appended new epoch entry EpochEntry(epoch=6, "
        "startOffset=1000). Cache now contains 3 entries.",
        rf"^Appended new epoch entry EpochEntry\(epoch=(?P<epoch>{_N}), startOffset="
        rf"(?P<offset>{_N})\)\. Cache now contains \d+ entries\.$"),
    LineFormat(
        "epoch_assigned@conflict-2.1", "epoch_assigned", "2.1", None, "LeaderEpochFileCache",
        "WARN", (f"{_LEC}:82@2.1.0", f"{_LEC}:107@3.4.0", f"{_LECJ}:125@3.5.0",
                 f"{_LECJ}:162@trunk"),
        "[LeaderEpochCache orders-0] New epoch entry EpochEntry(epoch=6, startOffset=1000) "
        "caused truncation of conflicting entries List(EpochEntry(epoch=5, startOffset=1050))."
        " Cache now contains 3 entries.",
        rf"^New epoch entry EpochEntry\(epoch=(?P<epoch>{_N}), startOffset=(?P<offset>{_N})\) "
        r"caused truncation of conflicting entries .*\. Cache now contains \d+ entries\.$"),
    LineFormat(
        "truncate@epoch-cache-1.0", "truncate", "1.0", "2.0", "LeaderEpochFileCache", "INFO",
        (f"{_LEC}:125@1.0.0", f"{_LEC}:134@2.0.0"),
        "Cleared latest Set(EpochEntry(6,1000)) entries from epoch cache based on passed "
        "offset 1000 leaving 2 in EpochFile for partition orders-0",
        rf"^Cleared latest .* entries from epoch cache based on passed offset (?P<offset>{_N}) "
        rf"leaving \d+ in EpochFile for partition {_TP}$"),
    LineFormat(
        "truncate@epoch-cache-2.1", "truncate", "2.1", None, "LeaderEpochFileCache", "DEBUG",
        (f"{_LEC}:163@2.1.0", f"{_LEC}:239@3.4.0", f"{_LECJ}:312@3.5.0", f"{_LECJ}:352@trunk"),
        "[LeaderEpochCache orders-0] Cleared entries List(EpochEntry(epoch=5, "
        "startOffset=1050)) from epoch cache after truncating to end offset 1000, leaving 2 "
        "entries in the cache.",
        rf"^Cleared entries .* from epoch cache after truncating to end offset "
        rf"(?P<offset>{_N}), leaving \d+ entries in the cache\.$"),
    # -- unclean elections: the KRaft controller and the new leader ------------------------
    LineFormat(
        "unclean_change@3.0", "unclean_change", "3.0", None, "ReplicationControlManager",
        "INFO", (f"{_PR}:143@3.0.0", f"{_PR}:351@trunk"),
        "[QuorumController id=3000] UNCLEAN partition change for orders-0 with topic ID "
        "Vd0y8RcXTzyyDC7A8R8RNg: isr: [1] -> [2], leader: -1 -> 2, leaderEpoch: 5 -> 6, "
        "partitionEpoch: 8 -> 9",
        r"^UNCLEAN partition change for (?P<tp>[A-Za-z0-9._-]+-\d+) with topic ID "
        r"(?P<topic_id>\S+): (?P<diff>.*)$"),
    LineFormat(
        "unclean_leader_set@3.6", "unclean_leader_set", "3.6", None, "PartitionChangeBuilder",
        "INFO", (f"{_PCB}:242@3.6.0", f"{_PCB}:341@trunk"),
        "Setting new leader for topicId Vd0y8RcXTzyyDC7A8R8RNg, partition 0 to 2 using an "
        "unclean election",
        rf"^Setting new leader for topicId (?P<topic_id>\S+), partition (?P<partition>\d+) to "
        rf"(?P<leader>{_N}) using an unclean election$"),
    LineFormat(
        "unclean_trigger@3.9", "unclean_trigger", "3.9", None, "ReplicationControlManager",
        "ERROR", (f"{_RCM}:1708@3.9.0-rc3", f"{_RCM}:1705@trunk"),
        "[QuorumController id=3000] Triggering unclean leader election for offline partition "
        "orders-0.",
        rf"^Triggering unclean leader election for offline partition {_TP}\.$"),
    LineFormat(
        "leader_recovering@3.2", "leader_recovering", "3.2", "3.2", "state.change.logger",
        "INFO", (f"{_P}:554@3.2.0",),
        "[Broker id=2] The topic partition orders-0 was marked as RECOVERING. Leader log "
        "recovery is not implemented. Marking the topic partition as RECOVERED.",
        rf"^The topic partition {_TP} was marked as RECOVERING\. Leader log recovery is not "
        r"implemented\. Marking the topic partition as RECOVERED\.$"),
    LineFormat(
        "leader_recovering@3.3", "leader_recovering", "3.3", None, "state.change.logger",
        "INFO", (f"{_P}:590@3.3.0", f"{_P}:751@trunk"),
        "[Broker id=2] The topic partition orders-0 was marked as RECOVERING. Marking the "
        "topic partition as RECOVERED.",
        rf"^The topic partition {_TP} was marked as RECOVERING\. Marking the topic partition "
        r"as RECOVERED\.$"),
)

# A message of these loggers with one of these words is an offset line: one that no format
# reads is reported, never guessed at. Every format's line holds one (a line without any
# is not tried against the formats at all).
CANDIDATE = re.compile(
    r"Shrinking ISR|Expanding ISR|ISR updated| starts at |"
    r"Completed load of [Ll]og|Truncating |truncation of conflicting|after truncating|"
    r"truncation is not allowed|No truncation needed|epoch entry|PartitionLeaderEpoch|"
    r"from epoch cache|Reset fetch offset|UNCLEAN|unclean (?:leader )?election|RECOVERING"
)
# The loggers (log4j's %c, last component) whose lines `parse` reads.
LOGGERS = frozenset({
    "Partition", "Log", "UnifiedLog", "LocalLog", "LogLoader", "LogManager",
    "ReplicaFetcherThread", "AbstractFetcherThread", "LeaderEpochFileCache",
    "ReplicationControlManager", "PartitionChangeBuilder", "QuorumController",
    "state.change.logger",
})

COMPILED: tuple[tuple[LineFormat, re.Pattern[str]], ...] = tuple(
    (f, re.compile(f.body)) for f in FORMATS)
