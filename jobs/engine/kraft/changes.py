"""The `changes` digest of a KRaft replay (same schema and `jobs.engine.change_digest.Change` as
the ZooKeeper run's), from the records the fold applied (`writes.Applied`), its
`reassigning` windows and its quorum leaders. A KRaft run replays its whole log (from the
snapshot it starts at), so every change since that start is listed.

* `topic_created`: a `TopicRecord`, with the `PartitionRecord`s of that topic that follow
  it before any record but the topic's `ConfigRecord`s
  (`ReplicationControlManager.createTopic` writes the three kinds together);
  `partitions_added`: any later `PartitionRecord` of an existing topic
  (`createPartitions`); `topic_deleted`: a `RemoveTopicRecord` (KRaft deletes at once);
* `reassignment_*`: the `reassigning` windows, as in the ZooKeeper digest;
* `leader_moved`: a `PartitionChangeRecord` that moved a leader from one broker to
  another (the leader before it, from the image);
* `topic_config_changed` / `cluster_config_changed`: a `ConfigRecord` of
  `min.insync.replicas` or `unclean.leader.election.enable`, of a topic / of the cluster
  default or a broker;
* `controller_failover`: a new quorum leader (`controller_timeline`, epoch and id);
* `broker_registered`, `broker_unregistered`, `broker_fenced`, `broker_unfenced`: the
  broker records (a `BrokerRegistrationChangeRecord` by its `fenced` flag);
  `broker_shutdown`: a registration change into controlled shutdown.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from jobs.engine import change_digest
from jobs.engine.change_digest import Change, Window
from jobs.engine.kraft.writes import Applied
from jobs.engine.requested import FIRST, Listed
from statemachine.kraft import records as K
from statemachine.model import NO_LEADER
from statemachine.rows import ControllerRow

# The ZooKeeper digest's order, with the KRaft-only changes beside their kin.
KRAFT_CHANGES = (
    *change_digest.CHANGES[:change_digest.CHANGES.index("topic_config_changed") + 1],
    "cluster_config_changed", "controller_failover", "broker_registered", "broker_unfenced",
    "broker_shutdown", "broker_fenced", "broker_unregistered",
)
CONFIGS = (K.MIN_ISR, K.UNCLEAN)


def kraft_changes(applied: Iterable[Applied], reassigning: Iterable[Window], run_id: str,
                  controllers: Iterable[ControllerRow]) -> list[Change]:
    """The digest's changes with at least one row, in `KRAFT_CHANGES` order."""
    out: dict[str, list[Listed]] = defaultdict(list)
    creations: list[tuple[int, int | None, str, int]] = []
    creating: tuple[str, int] | None = None  # the topic being created, its record's offset
    for a in applied:
        r, seq = a.record, -1 if a.record.offset is None else a.record.offset
        if r.record_type == K.TOPIC:
            creating = (str(r.topic), seq)
            creations.append((seq, r.ts, str(r.topic), -1))  # the topic, with no partition
            continue
        if r.record_type == K.PARTITION and a.parts:
            topic, partition = a.parts[0][:2]
            born = creating[1] if creating is not None and creating[0] == topic else seq
            creations.append((born, r.ts, topic, partition))
            continue
        if not (creating is not None and r.record_type == K.CONFIG
                and r.config_resource_type == "TOPIC" and r.config_resource == creating[0]):
            creating = None
        _record_changes(a, seq, out)
    found = [*_created(creations), *change_digest.reassignments(reassigning, run_id)]
    for c in controllers:
        out["controller_failover"].append(_controller(c))
    found += [Change(name, len(rows), tuple(sorted(rows, key=_order)[:FIRST]))
              for name, rows in out.items()]
    by_name = {c.change: c for c in found if c.count}
    return [by_name[name] for name in KRAFT_CHANGES if name in by_name]


def _controller(c: ControllerRow) -> Listed:
    """A new quorum epoch. `kafka-dump-log` prints a LEADER_CHANGE control record without
    its leader (`controlType: LEADER_CHANGE(2)`): "no leader", never "broker -1"."""
    if c.controller_id == NO_LEADER:
        return (c.seq, c.ts, None, None, None,
                f"a new quorum epoch {c.controller_epoch}, no leader named")
    return (c.seq, c.ts, None, None, c.controller_id,
            f"the new controller, epoch {c.controller_epoch}")


def _created(rows: list[tuple[int, int | None, str, int]]) -> list[Change]:
    """`change_digest.created` over the partitions; a topic created without partitions counts."""
    changes = change_digest.created([r for r in rows if r[3] >= 0])
    with_parts = {t for _, _, t, p in rows if p >= 0}
    bare = [(s, ts, t, None, None, "0 partitions") for s, ts, t, p in rows
            if p < 0 and t not in with_parts]
    topics = changes[0]
    listed = sorted([*topics.first, *bare], key=_order)[:FIRST]
    return [Change("topic_created", topics.count + len(bare), tuple(listed)), changes[1]]


def _record_changes(a: Applied, seq: int, out: dict[str, list[Listed]]) -> None:
    r = a.record
    kind = r.record_type
    if kind == K.REMOVE_TOPIC:
        out["topic_deleted"].append((seq, r.ts, a.removed, None, None, None))
    elif kind == K.PARTITION_CHANGE:
        for topic, partition, was, now, _, _ in a.parts:
            if was >= 0 and now >= 0 and was != now:
                out["leader_moved"].append((seq, r.ts, topic, partition, None,
                                            f"{was} -> {now}"))
    elif kind == K.CONFIG and r.config_name in CONFIGS:
        setting = f"{r.config_name}={r.config_value}"
        if r.config_resource_type == "TOPIC":
            out["topic_config_changed"].append((seq, r.ts, r.config_resource, None, None,
                                                setting))
        else:
            where = f"broker {r.config_resource}" if r.config_resource else "cluster default"
            out["cluster_config_changed"].append((seq, r.ts, None, None, None,
                                                  f"{where}: {setting}"))
    else:
        name = _broker_change(r)
        if name is not None:
            out[name].append((seq, r.ts, None, None, r.broker_id,
                              None if r.broker_epoch is None else f"epoch {r.broker_epoch}"))


def _broker_change(r: K.MetadataRecord) -> str | None:
    kind = r.record_type
    if kind == K.REGISTER_BROKER:
        return "broker_registered"
    if kind == K.UNREGISTER_BROKER:
        return "broker_unregistered"
    if kind == K.FENCE_BROKER or (kind == K.BROKER_REGISTRATION_CHANGE and r.fenced):
        return "broker_fenced"
    if kind == K.UNFENCE_BROKER or (kind == K.BROKER_REGISTRATION_CHANGE
                                    and r.fenced is False):
        return "broker_unfenced"
    if kind == K.BROKER_REGISTRATION_CHANGE and r.in_controlled_shutdown:
        return "broker_shutdown"
    return None


def _order(row: Listed) -> tuple[int, str, int, int]:
    seq, _, topic, partition, broker, _ = row
    return (seq, topic or "", -1 if partition is None else partition,
            -1 if broker is None else broker)
