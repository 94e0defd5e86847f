"""A small KRaft cluster history written as `__cluster_metadata` segments by the test
encoder: three brokers, a topic `orders` (p0 on 1,2; p1 on 1 alone), broker 1 fenced for
two minutes (p1 offline), the ISR of p0 grown back, a topic `tmp` created and deleted, and
three NoOps. Offsets and times are the tests' hand derivations (tests/jobs/replay/kraft/).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from jobs.sim.kraft_encoder import Rec, batch_bytes, control_rec, meta, topic_id

START_MS = 1_700_000_000_000
ORDERS, TMP = topic_id(1), topic_id(2)


def _register(b: int) -> list[list[Rec]]:
    return [[meta("RegisterBrokerRecord", {"brokerId": b, "brokerEpoch": b,
                                           "incarnationId": topic_id(100 + b)}, 3)],
            [meta("UnfenceBrokerRecord", {"id": b, "epoch": b})]]


def _part(t: str, p: int, replicas: list[int], leader: int) -> Rec:
    return meta("PartitionRecord", {"partitionId": p, "topicId": t, "replicas": replicas,
                                    "isr": replicas, "leader": leader, "leaderEpoch": 0,
                                    "partitionEpoch": 0}, 0)


def _pcr(t: str, p: int, **fields: object) -> Rec:
    return meta("PartitionChangeRecord", {"partitionId": p, "topicId": t, **fields}, 0)


def history() -> list[tuple[int, list[Rec], bool]]:
    """(seconds after START_MS, records, control batch) per batch, in offset order."""
    noop = [meta("NoOpRecord", {})]
    setup = [[meta("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 7})]]
    for b in (1, 2, 3):
        setup += _register(b)
    return [
        (0, [control_rec("LeaderChangeMessage", {"leaderId": 1, "voters": [{"voterId": 1}],
                                                 "grantingVoters": [{"voterId": 1}]})], True),
        *((0, recs, False) for recs in setup),  # offsets 1-7
        (0, [meta("TopicRecord", {"name": "orders", "topicId": ORDERS}),
             _part(ORDERS, 0, [1, 2], 1), _part(ORDERS, 1, [1], 1)], False),  # 8-10
        (30, noop, False),  # 11
        # 12-14: ReplicationControlManager.handleBrokerFenced: the ISR removals and
        # re-elections, then the fence (p1's last ISR member keeps its place, no leader).
        (60, [_pcr(ORDERS, 0, isr=[2], leader=2), _pcr(ORDERS, 1, leader=-1),
              meta("FenceBrokerRecord", {"id": 1, "epoch": 1})], False),
        (90, noop, False),  # 15
        # 16-17: handleBrokerUnfenced: the unfence, then the leaderless partition's election.
        (180, [meta("UnfenceBrokerRecord", {"id": 1, "epoch": 1}),
               _pcr(ORDERS, 1, leader=1)], False),
        (190, [_pcr(ORDERS, 0, isr=[2, 1])], False),  # 18: AlterPartition from leader 2
        (200, [meta("TopicRecord", {"name": "tmp", "topicId": TMP}),
               _part(TMP, 0, [2, 3], 2)], False),  # 19-20
        (240, [meta("RemoveTopicRecord", {"topicId": TMP})], False),  # 21
        (300, noop, False),  # 22
    ]


def write_segment(folder: Path, keep: Callable[[int], bool]) -> Path:
    """The history's batches whose time (seconds from the start) `keep` accepts, as one
    segment of `folder/__cluster_metadata-0` named by its base offset as Kafka names it (the
    offsets of the batches left out stay counted: a night delivers its own); that folder."""
    log = folder / "__cluster_metadata-0"
    log.mkdir(parents=True, exist_ok=True)
    data, offset, base = bytearray(), 0, None
    for seconds, recs, control in history():
        if keep(seconds):
            base = offset if base is None else base
            data += batch_bytes(offset, recs, timestamp=START_MS + seconds * 1000,
                                control_batch=control)
        offset += len(recs)
    (log / f"{base:020d}.log").write_bytes(bytes(data))
    return folder


def write_segments(folder: Path) -> Path:
    """The history as two segments of `folder/__cluster_metadata-0`; that folder."""
    log = folder / "__cluster_metadata-0"
    log.mkdir(parents=True)
    batches = history()
    offset, chunks = 0, [bytearray(), bytearray()]
    for i, (seconds, recs, control) in enumerate(batches):
        chunks[i * 2 // len(batches)] += batch_bytes(
            offset, recs, timestamp=START_MS + seconds * 1000, control_batch=control)
        if i * 2 // len(batches) == 0:
            second_base = offset + len(recs)
        offset += len(recs)
    (log / f"{0:020d}.log").write_bytes(bytes(chunks[0]))
    (log / f"{second_base:020d}.log").write_bytes(bytes(chunks[1]))
    return log
