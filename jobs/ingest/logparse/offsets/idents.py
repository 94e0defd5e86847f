"""The logIdent prefixes of the broker's offset lines, and the broker a line names as its
writer. Each class sets its own `logIdent` (a `LogContext` prefix in the Java classes):

    [Partition t-0 broker=1]                      kafka.cluster.Partition (1.0+)
    [Log partition=t-0, dir=/var/kafka]           kafka.log.Log (1.1-3.0)
    [UnifiedLog partition=t-0, dir=/var/kafka]    UnifiedLog (3.1+)
    [LocalLog partition=t-0, dir=...], [LogLoader partition=t-0, dir=...]
    [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0]   ReplicaFetcherThread (1.0+)
    [LeaderEpochCache t-0]                        LeaderEpochFileCache (2.1+)
    [Broker id=1]                                 state.change.logger, broker side (1.0+)
    [QuorumController id=3000]                    the KRaft controller (a node id, not a broker)
    [KafkaServer id=1], [BrokerServer id=1], [KafkaRaftServer nodeId=1], [ReplicaManager
    broker=1]                                     the server's own lines: who wrote the file

`split(msg)` removes one prefix and returns what it says; `writer(msg)` is the broker a
server line names as the one writing the log (`[KafkaServer id=1] started`, `[Broker id=1]
...`), or None, for `owners.py` (an offset line's own logIdent names its broker too).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from jobs.ingest.logparse.values import tp


class Ident(NamedTuple):
    topic: str | None = None
    partition: int | None = None
    broker_id: int | None = None  # the writing broker, when the prefix names it
    leader: int | None = None  # the leader a fetcher thread fetches from


NONE = Ident()

_PREFIX = re.compile(
    r"^\[(?:"
    r"Partition (?P<ptp>\S+) broker=(?P<pb>\d+)"
    r"|(?:Log|UnifiedLog|LocalLog|LogLoader) partition=(?P<ltp>[^,\]]+), dir=[^\]]*"
    r"|ReplicaFetcher replicaId=(?P<fb>\d+), leaderId=(?P<fl>\d+), fetcherId=\d+"
    r"|LeaderEpochCache (?P<etp>[^\]\s]+)"
    r"|Broker id=(?P<bb>\d+)"
    r"|QuorumController id=\d+"
    r")\] ?"
)
# Server lines that name the broker writing the log, whatever their logger.
_WRITER = re.compile(
    r"^\[(?:KafkaServer id=|BrokerServer id=|KafkaRaftServer nodeId=|ReplicaManager broker="
    r"|Broker id=)(\d+)\]"
)


def split(msg: str) -> tuple[Ident, str]:
    if not msg.startswith("["):
        return NONE, msg
    m = _PREFIX.match(msg)
    if m is None:
        return NONE, msg
    g = m.groupdict()
    text = g["ptp"] or g["ltp"] or g["etp"]
    topic, partition = tp(text) if text else (None, None)
    broker = g["pb"] or g["fb"] or g["bb"]
    return Ident(topic, partition, int(broker) if broker else None,
                 int(g["fl"]) if g["fl"] else None), msg[m.end():]


_WRITER_STARTS = ("[KafkaServer id=", "[BrokerServer id=", "[KafkaRaftServer nodeId=",
                  "[ReplicaManager broker=", "[Broker id=")


def writer(msg: str) -> int | None:
    """The broker a line names as its writer, or None."""
    if not msg.startswith(_WRITER_STARTS):
        return None
    m = _WRITER.match(msg)
    return int(m.group(1)) if m else None
