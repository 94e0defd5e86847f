"""Values rendered inside messages, across Kafka versions (the `toString`s that drift).

Every reader accepts all the renderings of its value: `[topic,0]` (≤0.11) and `topic-0`
(1.0+); Scala collections with or without a name (`Set(1, 2)`, `HashSet()`, `1,2`);
LeaderAndIsr as JSON (≤1.0), `LeaderAndIsr(...)` (1.1+, zkVersion / partitionEpoch /
isrWithBrokerEpoch), LeaderIsrAndControllerEpoch `(Leader:..,ISR:..,...)`, and the
generated request classes `LeaderAndIsrPartitionState(...)`, `UpdateMetadataPartitionState(...)`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

Ints = tuple[int, ...]

_INT = re.compile(r"-?\d+")
# Topic names are [a-zA-Z0-9._-]; a partition is the text after the LAST '-'.
TP_TEXT = r"(?:\[[^\[\],\s]+,\d+\]|[A-Za-z0-9._-]+-\d+)"
_TP_ANY = re.compile(TP_TEXT)
_PAR = re.compile(r"\[Topic=([^,\]]+),Partition=(\d+),Replica=(-?\d+)\]")


def ints(text: str | None) -> Ints:
    """Every integer in a rendered id collection: `Set(1, 2)`, `1,2`, `Vector(3)`, ``."""
    return tuple(int(x) for x in _INT.findall(text)) if text else ()


def tp(text: str) -> tuple[str, int | None]:
    """`topic-0` or `[topic,0]` -> (topic, 0). A name without a partition suffix (an
    anonymised log) is kept whole, with partition None."""
    s = text.strip()
    if s.startswith("[") and s.endswith("]") and "," in s:
        t, _, p = s[1:-1].rpartition(",")
        if p.isdigit():
            return t, int(p)
    t, sep, p = s.rpartition("-")
    if sep and t and p.isdigit():
        return t, int(p)
    return s, None


def tp_list(text: str) -> list[tuple[str, int | None]]:
    """A rendered collection of topic-partitions: `t-0,t-1`, `Set(t-0, t-1)`, `[t,0],[t,1]`."""
    return [tp(x) for x in _TP_ANY.findall(text)]


def partition_and_replicas(text: str) -> list[tuple[str, int, int]]:
    """`[Topic=t,Partition=0,Replica=2],...` -> [(t, 0, 2), ...]."""
    return [(t, int(p), int(r)) for t, p, r in _PAR.findall(text)]


def topics(text: str) -> list[str]:
    """A rendered topic collection: `t1,t2`, `Set(t1, t2)`, `HashSet()`, `[Set(t)]`."""
    s = text.strip().strip("[]")
    m = re.fullmatch(r"(?:\w*(?:Set|List|Vector|Buffer|Seq))?\((.*)\)", s)
    if m:
        s = m.group(1)
    return [x.strip() for x in s.split(",") if x.strip()]


# -- assignments -------------------------------------------------------------------------

_ASSIGN_ENTRY = re.compile(
    rf"(?P<tp>{TP_TEXT}) -> (?:ReplicaAssignment\(replicas=(?P<ra>[-\d, ]*), "
    r"addingReplicas=(?P<add>[-\d, ]*), removingReplicas=(?P<rem>[-\d, ]*)\)"
    r"|\w*\((?P<rl>[-\d, ]*)\))"
)


def assignment(text: str) -> list[tuple[str, int | None, Ints]]:
    """`Map(t-0 -> Vector(1, 2))`, `Map([t,0] -> List(1, 2))`,
    `Map(t-0 -> ReplicaAssignment(replicas=1,2, addingReplicas=, removingReplicas=))`,
    `Set(TopicIdReplicaAssignment(t,Some(id),Map(t-0 -> ReplicaAssignment(...))))`
    -> [(topic, partition, replicas)]."""
    out: list[tuple[str, int | None, Ints]] = []
    for m in _ASSIGN_ENTRY.finditer(text):
        t, p = tp(m.group("tp"))
        reps = m.group("ra") if m.group("ra") is not None else m.group("rl")
        out.append((t, p, ints(reps)))
    return out


class ReplicaAssignment(NamedTuple):
    replicas: Ints
    adding: Ints
    removing: Ints


_RA = re.compile(
    r"ReplicaAssignment\(replicas=(?P<r>[-\d, ]*), addingReplicas=(?P<a>[-\d, ]*), "
    r"removingReplicas=(?P<m>[-\d, ]*)\)"
)


def replica_assignments(text: str) -> list[ReplicaAssignment]:
    return [ReplicaAssignment(ints(m.group("r")), ints(m.group("a")), ints(m.group("m")))
            for m in _RA.finditer(text)]


# -- leader and ISR ----------------------------------------------------------------------


class Leadership(NamedTuple):
    leader: int | None = None
    leader_epoch: int | None = None
    isr: Ints | None = None
    zk_version: int | None = None
    controller_epoch: int | None = None
    replicas: Ints | None = None
    adding: Ints | None = None
    removing: Ints | None = None


_F_LEADER = re.compile(r'(?:\bleader=|\bLeader:|"leader":)(-?\d+)')
_F_EPOCH = re.compile(r'(?:leaderEpoch=|LeaderEpoch:|"leader_epoch":)(-?\d+)')
_F_ZK = re.compile(r"(?:zkVersion=|partitionEpoch=|ZkVersion:)(-?\d+)")
_F_CEPOCH = re.compile(r'(?:controllerEpoch=|ControllerEpoch:|"controller_epoch":)(-?\d+)')
_F_ISR = re.compile(
    r'(?:\bisr=(?:List|Vector|ArrayBuffer)?[\[(]([-\d, ]*)[\])]|"isr":\[([-\d, ]*)\]'
    r"|\bISR:([-\d,]*?)(?:,[A-Za-z]|\))"
    r"|isrWithBrokerEpoch=List\(((?:BrokerState\([^)]*\)(?:, )?)*)\))"
)
_F_ISR_BARE = re.compile(r"\bisr=(-?\d+(?:,\s?-?\d+)*)")  # `isr=1,2` (no brackets)
_F_REPLICAS = re.compile(
    r"(?:\breplicas=(?:List|Vector)?[\[(]([-\d, ]*)[\])]|AllReplicas:([-\d,]*))"
)
_F_ADDING = re.compile(r"addingReplicas=\[([-\d, ]*)\]")
_F_REMOVING = re.compile(r"removingReplicas=\[([-\d, ]*)\]")
_BROKER_ID = re.compile(r"brokerId=(-?\d+)")


def _one(rx: re.Pattern[str], text: str) -> int | None:
    m = rx.search(text)
    return int(m.group(1)) if m else None


def leadership(text: str) -> Leadership:
    """Leader, epochs, ISR, zkVersion and replicas from any LeaderAndIsr rendering."""
    isr: Ints | None = None
    m = _F_ISR.search(text)
    if m:
        if m.group(4) is not None:
            isr = tuple(int(x) for x in _BROKER_ID.findall(m.group(4)))
        else:
            isr = ints(next(g for g in m.groups()[:3] if g is not None))
    else:
        m = _F_ISR_BARE.search(text)
        if m:
            isr = ints(m.group(1))
    replicas: Ints | None = None
    m = _F_REPLICAS.search(text)
    if m:
        replicas = ints(m.group(1) if m.group(1) is not None else m.group(2))
    ma, mr = _F_ADDING.search(text), _F_REMOVING.search(text)
    return Leadership(
        _one(_F_LEADER, text), _one(_F_EPOCH, text), isr, _one(_F_ZK, text),
        _one(_F_CEPOCH, text), replicas,
        ints(ma.group(1)) if ma else None, ints(mr.group(1)) if mr else None,
    )
