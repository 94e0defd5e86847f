"""What grouping a KRaft log by topic would give, measured on one process
(`python -m jobs.bench.kraft`'s `split` figures; the replay does not use this).

A cluster's records are cut in two: the records of a topic (`TopicRecord`,
`PartitionRecord`, `PartitionChangeRecord`, `RemoveTopicRecord`, a topic's `ConfigRecord`;
a topic id named by its `TopicRecord`) go to the bucket of the topic's name; every other
record (registrations, fencing, unfencing, controlled shutdowns, cluster and broker
configs, feature levels, quorum leader changes, ...) is cluster scope. Each bucket folds
the cluster-scope records and its own, in log order (`statemachine.kraft.fold.KraftFold`);
the cluster-scope records alone are folded once for the timelines. Figures: CPU seconds of
the cluster timeline, of each bucket (their sum and the largest: the critical path with
one core per bucket), and whether the buckets' partition states, windows and findings
equal the whole fold's, row for row.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Sequence
from typing import Any

from statemachine.kraft import records as K
from statemachine.kraft.fold import KraftFold, KraftOutputs
from statemachine.kraft.profiles import KraftProfile
from statemachine.kraft.records import MetadataRecord

TOPIC_RECORDS = frozenset((K.TOPIC, K.PARTITION, K.PARTITION_CHANGE, K.REMOVE_TOPIC))


def topic_of(r: MetadataRecord, names: dict[str, str]) -> str | None:
    """The topic a record belongs to, or None for a cluster-scope record."""
    if r.record_type == K.TOPIC:
        return r.topic
    if r.record_type in TOPIC_RECORDS:
        return names.get(r.topic_id or "", f"id:{r.topic_id}")
    if r.record_type == K.CONFIG and r.config_resource_type == "TOPIC":
        return r.config_resource
    return None


def split(records: Sequence[MetadataRecord],
          buckets: int) -> tuple[list[int], dict[int, list[int]]]:
    """The indices of the cluster-scope records, and of each bucket's records."""
    names = {r.topic_id: r.topic for r in records
             if r.record_type == K.TOPIC and r.topic_id and r.topic}
    shared: list[int] = []
    by_bucket: dict[int, list[int]] = {}
    for i, r in enumerate(records):
        topic = topic_of(r, names)
        if topic is None:
            shared.append(i)
        else:
            by_bucket.setdefault(zlib.crc32(topic.encode()) % buckets, []).append(i)
    return shared, by_bucket


def _fold(records: list[MetadataRecord], profile: KraftProfile) -> tuple[KraftOutputs, float]:
    c0 = time.process_time()
    f = KraftFold(1, profile)
    f.feed(records)
    return f.finish(), time.process_time() - c0


def split_figures(records: Sequence[MetadataRecord], profile: KraftProfile,
                  whole: KraftOutputs, buckets: int) -> dict[str, Any]:
    """The figures of the module docstring, against `whole` (the cluster's whole fold)."""
    shared, by_bucket = split(records, buckets)
    timeline, timeline_s = _fold([records[i] for i in shared], profile)
    own = {records[i].offset for ids in by_bucket.values() for i in ids}
    states, windows, findings, seconds = [], [], [], []
    for ids in by_bucket.values():
        out, s = _fold([records[i] for i in sorted([*ids, *shared])], profile)
        seconds.append(s)
        states += out.partition_states
        windows += out.partition_windows
        findings += [f for f in out.findings if f.topic is not None or f.seq in own]
    findings += timeline.findings

    def same(a: Sequence[Any], b: Sequence[Any]) -> bool:
        return sorted(map(repr, a)) == sorted(map(repr, b))

    return {"buckets": len(by_bucket), "cluster_scope_records": len(shared),
            "timeline_cpu_s": round(timeline_s, 3),
            "bucket_cpu_s_sum": round(sum(seconds), 3),
            "bucket_cpu_s_max": round(max(seconds, default=0.0), 3),
            "equal": {"partition_states": same(whole.partition_states, states),
                      "partition_windows": same(whole.partition_windows, windows),
                      "findings": same(whole.findings, findings),
                      "broker_timeline": whole.broker_timeline == timeline.broker_timeline,
                      "controller_timeline":
                          whole.controller_timeline == timeline.controller_timeline}}
