"""A KRaft log cut by topic, as the ZooKeeper replay groups its events: the records of a
topic, and every other record (the cluster scope), read with pyarrow filters so that no
reader holds the whole log.

A record belongs to a topic when it is a `TopicRecord`, `PartitionRecord`,
`PartitionChangeRecord` or `RemoveTopicRecord`, a `ClearElrRecord` naming a topic id, or
a `ConfigRecord` of a TOPIC resource; its topic is the one its `TopicRecord` names (by
topic id) or the config's resource. Every other record (registrations, fencing,
unfencing, controlled shutdowns, cluster and broker configs, quorum leader changes,
NoOps, a `ClearElrRecord` of every topic, ...) is cluster scope. A topic goes to the
bucket crc32(name) % buckets; a topic record whose topic id no `TopicRecord` names (or a
topic config of a name none does) goes to bucket 0, so that every record is in exactly
one bucket or in the cluster scope.

The replay order is the one `metadata_source.in_replay_order` gives the whole cluster,
with the cluster's snapshots decided once from every row (`Plan.snapshots`): a subset of
the rows, read in file order and put in that order, is a subsequence of the whole.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from jobs.engine.kraft.metadata_source import (
    _SNAPSHOT,
    BEFORE_SNAPSHOT,
    ClusterLog,
    KraftInput,
    _dataset,
    in_replay_order,
    records_of,
)
from statemachine.kraft import records as K
from statemachine.kraft.records import MetadataRecord

TOPIC_TYPES = (K.TOPIC, K.PARTITION, K.PARTITION_CHANGE, K.REMOVE_TOPIC)


def _text(name: str) -> ds.Expression:
    return pc.coalesce(pc.field(name), pa.scalar(""))


def _among(name: str, values: list[str]) -> ds.Expression:
    return pc.is_in(_text(name), value_set=pa.array(values, pa.string()))


def _topic_config() -> ds.Expression:
    return ((_text("record_type") == K.CONFIG)
            & (_text("config_resource_type") == "TOPIC"))


def _by_id() -> ds.Expression:
    """The topic records a topic id places (the `ClearElrRecord` of one topic too)."""
    return (_among("record_type", list(TOPIC_TYPES))
            | ((_text("record_type") == K.CLEAR_ELR) & (_text("topic_id") != "")))


def cluster_scope() -> ds.Expression:
    """The filter of the cluster-scope records (module docstring)."""
    return ~(_by_id() | _topic_config())


def topic_scoped(r: MetadataRecord) -> bool:
    """Whether a record read belongs to a topic (the filters' rule, on one record)."""
    if r.record_type in TOPIC_TYPES:
        return True
    if r.record_type == K.CLEAR_ELR:
        return bool(r.topic_id)
    return r.record_type == K.CONFIG and r.config_resource_type == "TOPIC"


def bucket_of(topic: str, buckets: int) -> int:
    return zlib.crc32(topic.encode()) % buckets


@dataclass
class Plan:
    """One cluster: its log as the whole replay sees it (every row counted, the snapshots,
    the log offsets; no records kept), and its topics by bucket."""

    log: ClusterLog
    snapshots: dict[str, int]  # every snapshot's source -> its end offset
    ids: dict[int, list[str]] = field(default_factory=dict)  # bucket -> its topic ids
    names: dict[int, list[str]] = field(default_factory=dict)  # bucket -> its topic names
    known_ids: list[str] = field(default_factory=list)
    known_names: list[str] = field(default_factory=list)

    def buckets(self) -> list[int]:
        """The buckets with a topic, and bucket 0 (it takes the unnamed topic records)."""
        return sorted({0, *self.ids, *self.names})

    def bucket_filter(self, cluster: str, bucket: int) -> ds.Expression:
        """The cluster's records a bucket's fold reads: the cluster scope and its own."""
        own = ((_by_id() & _among("topic_id", self.ids.get(bucket, [])))
               | (_topic_config() & _among("config_resource", self.names.get(bucket, []))))
        if bucket == 0:
            own = own | (_by_id() & ~_among("topic_id", self.known_ids)) | (
                _topic_config() & ~_among("config_resource", self.known_names))
        return (pc.field("cluster") == cluster) & (cluster_scope() | own)


def plan_clusters(kraft: KraftInput, buckets: int,
                  keep_offsets: bool = False) -> dict[str, Plan]:
    """Per cluster, its plan (module docstring): two narrow reads, the offsets and the
    `TopicRecord`s' names. `keep_offsets`: the log keeps its records, offsets alone (an
    incremental run's continuity finds the late ones among them)."""
    found = _dataset(kraft.records)
    assert found is not None  # find_kraft_input opened it
    table = found.to_table(columns=["cluster", "source", "offset"])
    rows: dict[str, tuple[list[str], list[int | None]]] = {}
    for cluster, source, offset in zip(table.column("cluster").to_pylist(),
                                       table.column("source").to_pylist(),
                                       table.column("offset").to_pylist(), strict=True):
        sources, offsets = rows.setdefault(str(cluster), ([], []))
        sources.append(str(source or ""))
        offsets.append(offset)
    plans: dict[str, Plan] = {}
    for cluster, (sources, offsets) in sorted(rows.items()):
        if keep_offsets:  # stand-ins of the records: only their offsets were read
            log = in_replay_order([(s, MetadataRecord(o, None, None, None, ""))
                                   for s, o in zip(sources, offsets, strict=True)])
        else:
            log = offsets_log(sources, offsets)
        plans[cluster] = Plan(log, dict(log.snapshot_ends))
    topics = found.to_table(columns=["cluster", "topic_id", "topic"],
                            filter=pc.field("record_type") == K.TOPIC)
    named: dict[str, dict[str, str]] = {}  # cluster -> topic id -> name (the last given)
    for cluster, topic_id, topic in zip(topics.column("cluster").to_pylist(),
                                        topics.column("topic_id").to_pylist(),
                                        topics.column("topic").to_pylist(), strict=True):
        if topic:
            names = named.setdefault(str(cluster), {})
            names[str(topic_id or "")] = str(topic)
    for cluster, names in named.items():
        plan = plans[cluster]
        for topic_id, topic in names.items():
            if topic_id:  # a topic id in one bucket only
                plan.ids.setdefault(bucket_of(topic, buckets), []).append(topic_id)
                plan.known_ids.append(topic_id)
        for topic in sorted(set(names.values())):
            plan.names.setdefault(bucket_of(topic, buckets), []).append(topic)
            plan.known_names.append(topic)
    return plans


def offsets_log(sources: list[str], offsets: list[int | None]) -> ClusterLog:
    """`in_replay_order`'s log of one cluster's rows but its records: what is counted
    (rows read, skipped before the snapshot), the snapshot the replay starts from, the
    log offsets."""
    snapshots = {s: int(m.group(1)) for s in set(sources) if (m := _SNAPSHOT.search(s))}
    start = max(snapshots.items(), key=lambda kv: (kv[1], kv[0]), default=None)
    out = ClusterLog(rows_read=len(sources), snapshot_ends=snapshots)
    skipped = 0
    for s, o in zip(sources, offsets, strict=True):
        if start is not None and s == start[0]:
            out.from_snapshot += 1
        elif s in snapshots or (start is not None and o is not None and o < start[1]):
            skipped += 1
    if skipped:
        out.skipped[BEFORE_SNAPSHOT] = skipped
    out.snapshot = None if start is None else start[0]
    out.log_offsets = sorted(o for s, o in zip(sources, offsets, strict=True)
                             if s not in snapshots and o is not None)
    return out


def read_records(kraft: KraftInput, where: ds.Expression,
                 snapshots: dict[str, int]) -> ClusterLog:
    """One cluster's records under `where`, in the whole cluster's replay order."""
    found = _dataset(kraft.records)
    assert found is not None
    table = found.to_table(columns=["source", *MetadataRecord._fields], filter=where)
    sources = [str(s or "") for s in table.column("source").to_pylist()]
    return in_replay_order(list(zip(sources, records_of(table), strict=True)), snapshots)


def read_cluster_scope(kraft: KraftInput, cluster: str, plan: Plan) -> ClusterLog:
    return read_records(kraft, (pc.field("cluster") == cluster) & cluster_scope(),
                        plan.snapshots)
