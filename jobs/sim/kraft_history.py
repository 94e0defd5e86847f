"""A simulated KRaft cluster: its `__cluster_metadata` log written as segments by
`jobs.sim.kraft_encoder`, the records as a 3.7 quorum leader writes them
(`ReplicationControlManager`, 3.7.0), for `make kraft-sample`.

Brokers 1..N register and are unfenced; topics are created (a `TopicRecord`, its
`ConfigRecord`s, its `PartitionRecord`s in one batch), one of them with one replica per
partition and one with `min.insync.replicas` 2. Then, minute by minute with a seeded random
schedule: a broker is fenced (`handleBrokerFenced`: each partition with it in the ISR loses
it, a leader it was is re-elected from the rest of the ISR, a partition whose ISR would
become empty keeps it and has no leader; then the `BrokerRegistrationChangeRecord`) and
unfenced a few minutes later (`handleBrokerUnfenced`: the record, then the leaderless
partitions it can lead elect it), its followers rejoining the ISRs 30 s after
(`AlterPartition` from their leaders); one broker goes through a controlled shutdown
(`handleBrokerInControlledShutdown`: the record, then its leaderships and ISR places
moved off) and comes back with a new registration; a topic is created and deleted; the
quorum leader changes once (a `LeaderChangeMessage`, a new epoch). A `NoOpRecord` every
500 ms fills the rest, as `metadata.max.idle.interval.ms` does.

A size (`SIZES`, `--size` of `python -m jobs.bench.kraft`) adds `topics` topics of
`partitions` partitions each (three replicas, one topic per creation batch) on `brokers`
brokers after the three above, so that every fence, unfence and rejoin writes one record
for each partition the broker holds: `sample` is the history above alone, `large` a
cluster of a million partitions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from jobs.sim.kraft_encoder import Rec, batch_bytes, control_rec, meta, topic_id

CONTROLLERS = (3000, 3001)


@dataclass(frozen=True)
class KraftSize:
    """How big a simulated cluster is: its brokers, and the topics added to the three of
    every history (`topics` x `partitions`)."""

    name: str
    brokers: int
    topics: int
    partitions: int

    @property
    def total_partitions(self) -> int:
        return 24 + self.topics * self.partitions


SIZES = {s.name: s for s in (
    KraftSize("sample", 6, 0, 0),
    KraftSize("small", 6, 20, 50),  # 1,024 partitions
    KraftSize("bench", 12, 200, 250),  # 50,024 partitions
    KraftSize("large", 30, 1000, 1000),  # 1,000,024 partitions
)}


@dataclass
class Partition:
    replicas: list[int]
    isr: list[int]
    leader: int


@dataclass
class KraftSim:
    """The cluster as the quorum leader sees it, and the batches written so far."""

    brokers: int = 6
    start_ms: int = 1_700_000_000_000
    parts: dict[tuple[str, int], Partition] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # topic id -> name
    epochs: dict[int, int] = field(default_factory=dict)  # broker -> broker epoch
    fenced: set[int] = field(default_factory=set)
    quorum_epoch: int = 1
    batches: list[tuple[int, list[Rec], bool, int]] = field(default_factory=list)

    def write(self, ms: int, recs: list[Rec], control: bool = False) -> None:
        if recs:
            self.batches.append((self.start_ms + ms, recs, control, self.quorum_epoch))

    def _pcr(self, key: tuple[str, int], **fields: object) -> Rec:
        return meta("PartitionChangeRecord", {"topicId": key[0], "partitionId": key[1],
                                              **fields}, 0)

    # -- brokers -----------------------------------------------------------------------

    def register(self, ms: int, b: int) -> None:
        self.epochs[b] = self.epochs.get(b, 0) + 100
        self.fenced.add(b)
        self.write(ms, [meta("RegisterBrokerRecord", {
            "brokerId": b, "brokerEpoch": self.epochs[b], "incarnationId": topic_id(b)}, 3)])

    def _flag(self, b: int, **flags: int) -> Rec:
        return meta("BrokerRegistrationChangeRecord",
                    {"brokerId": b, "brokerEpoch": self.epochs[b], **flags}, 1)

    def _remove(self, b: int) -> list[Rec]:
        """Every partition with `b` in its ISR loses it (`generateLeaderAndIsrUpdates`)."""
        out = []
        for key, p in sorted(self.parts.items()):
            if b not in p.isr:
                continue
            rest = [r for r in p.isr if r != b]
            if not rest:  # the last ISR member stays, and the partition has no leader
                if p.leader != -1:
                    p.leader = -1
                    out.append(self._pcr(key, leader=-1))
                continue
            p.isr = rest
            if p.leader == b:
                p.leader = rest[0]
                out.append(self._pcr(key, isr=rest, leader=rest[0]))
            else:
                out.append(self._pcr(key, isr=rest))
        return out

    def fence(self, ms: int, b: int) -> None:
        changes = self._remove(b)
        self.fenced.add(b)
        self.write(ms, [*changes, self._flag(b, fenced=1)])

    def unfence(self, ms: int, b: int) -> None:
        self.fenced.discard(b)
        out = [self._flag(b, fenced=-1)]
        for key, p in sorted(self.parts.items()):
            if p.leader == -1 and b in p.isr:
                p.leader = b
                out.append(self._pcr(key, leader=b))
        self.write(ms, out)

    def rejoin(self, ms: int, b: int) -> None:
        """The follower `b` caught up: its leaders' AlterPartition, one record each."""
        if b in self.fenced:
            return
        out = []
        for key, p in sorted(self.parts.items()):
            if b in p.replicas and b not in p.isr and p.leader >= 0:
                p.isr = [*p.isr, b]
                out.append(self._pcr(key, isr=p.isr))
        self.write(ms, out)

    def controlled_shutdown(self, ms: int, b: int) -> None:
        self.write(ms, [self._flag(b, inControlledShutdown=1), *self._remove(b)])
        self.fenced.add(b)
        self.write(ms + 5_000, [self._flag(b, fenced=1)])

    # -- topics ------------------------------------------------------------------------

    def create_topic(self, ms: int, name: str, n: int, rf: int, first: int,
                     min_isr: int | None = None) -> str:
        tid = topic_id(len(self.names) + 1)
        self.names[tid] = name
        recs = [meta("TopicRecord", {"name": name, "topicId": tid})]
        if min_isr is not None:
            recs.append(meta("ConfigRecord", {"resourceType": 2, "resourceName": name,
                                              "name": "min.insync.replicas",
                                              "value": str(min_isr)}))
        live = sorted(set(range(1, self.brokers + 1)) - self.fenced)
        for i in range(n):
            replicas = [live[(first + i + k) % len(live)] for k in range(rf)]
            self.parts[(tid, i)] = Partition(replicas, list(replicas), replicas[0])
            recs.append(meta("PartitionRecord", {
                "partitionId": i, "topicId": tid, "replicas": replicas, "isr": replicas,
                "leader": replicas[0], "leaderEpoch": 0, "partitionEpoch": 0}, 0))
        self.write(ms, recs)
        return tid

    def delete_topic(self, ms: int, tid: str) -> None:
        for key in [k for k in self.parts if k[0] == tid]:
            del self.parts[key]
        self.write(ms, [meta("RemoveTopicRecord", {"topicId": tid})])

    def quorum_leader(self, ms: int, leader: int) -> None:
        self.quorum_epoch += 1
        self.write(ms, [control_rec("LeaderChangeMessage", {
            "leaderId": leader, "voters": [{"voterId": c} for c in CONTROLLERS],
            "grantingVoters": [{"voterId": leader}]})], control=True)


def simulate(minutes: int = 120, brokers: int = 6, seed: int = 1,
             size: KraftSize | None = None) -> KraftSim:
    """The history (module docstring), `minutes` long; `size` sets the brokers and adds
    its topics."""
    rng = random.Random(seed)
    if size is not None:
        brokers = size.brokers
    sim = KraftSim(brokers)
    sim.quorum_leader(0, CONTROLLERS[0])
    sim.write(0, [meta("FeatureLevelRecord", {"name": "metadata.version",
                                              "featureLevel": 19})])
    for b in range(1, brokers + 1):
        sim.register(0, b)
        sim.unfence(0, b)
    sim.create_topic(0, "orders", 12, 3, 0)
    sim.create_topic(0, "payments", 6, 3, 1, min_isr=2)
    sim.create_topic(0, "audit-log", 6, 1, 0)  # one replica: offline while it is fenced
    if size is not None:
        for t in range(size.topics):
            sim.create_topic(0, f"t{t:05d}", size.partitions, 3, t)
    events: list[tuple[int, int, str, int]] = []  # (ms, order, what, broker)
    for start in range(5, minutes - 10, 15):
        b = rng.randint(1, brokers)
        at = (start * 60 + rng.randint(0, 120)) * 1000
        back = at + rng.randint(60, 300) * 1000
        events += [(at, 0, "fence", b), (back, 1, "unfence", b), (back + 30_000, 2, "rejoin", b)]
    events.sort()
    plan = {minutes // 3: "shutdown", minutes // 2: "quorum", minutes // 4: "topic"}
    done: set[int] = set()
    for at, _, what, b in events:
        for minute, extra in sorted(plan.items()):
            if minute not in done and minute * 60_000 <= at:
                done.add(minute)
                _extra(sim, minute * 60_000, extra, rng)
        {"fence": sim.fence, "unfence": sim.unfence, "rejoin": sim.rejoin}[what](at, b)
    return sim


def _extra(sim: KraftSim, ms: int, what: str, rng: random.Random) -> None:
    if what == "quorum":
        sim.quorum_leader(ms, CONTROLLERS[1])
    elif what == "topic":
        tid = sim.create_topic(ms, "tmp", 3, 2, 2)
        sim.delete_topic(ms + 600_000, tid)
    else:  # a controlled shutdown of a live broker, back 3 minutes later
        b = min(set(range(1, sim.brokers + 1)) - sim.fenced)
        sim.controlled_shutdown(ms, b)
        sim.register(ms + 180_000, b)
        sim.unfence(ms + 181_000, b)
        sim.rejoin(ms + 211_000, b)


def write_log(folder: Path, sim: KraftSim, minutes: int, segments: int = 2) -> dict[str, int]:
    """The history with its NoOps, in time order, as `segments` segment files of
    `folder/__cluster_metadata-0`; the record counts."""
    end = sim.start_ms + minutes * 60_000
    noops = [(ms, [meta("NoOpRecord", {})], False, 0)
             for ms in range(sim.start_ms, end, 500)]
    ordered = sorted([(b[0], 1, i, b) for i, b in enumerate(sim.batches)]
                     + [(b[0], 0, i, b) for i, b in enumerate(noops)],
                     key=lambda t: (t[0], t[1], t[2]))
    log = folder / "__cluster_metadata-0"
    log.mkdir(parents=True, exist_ok=True)
    per = -(-len(ordered) // segments)
    offset, epoch = 0, 1
    for i in range(0, len(ordered), per):
        name, chunk = f"{offset:020d}.log", bytearray()
        for ms, _, _, (_, recs, control, quorum) in ordered[i:i + per]:
            epoch = quorum or epoch  # a NoOp is written in the epoch of the time
            chunk += batch_bytes(offset, recs, timestamp=ms, control_batch=control,
                                 leader_epoch=epoch)
            offset += len(recs)
        (log / name).write_bytes(bytes(chunk))
    return {"records": offset, "noops": len(noops), "batches": len(ordered)}
