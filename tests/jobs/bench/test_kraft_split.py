"""The by-topic split the KRaft bench measures (`jobs.bench.kraft_split`, and its Spark
groups' function in `jobs.bench.kraft_spark_split`): on a simulated history of several
topics, folding each bucket's records with the cluster-scope ones gives the whole fold's
partition states, windows and findings, and the cluster-scope records alone its
timelines (pure: the segments decoded by the ingest's decoder, no Spark)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from jobs.bench.kraft_spark_split import fold_group
from jobs.bench.kraft_split import split, split_figures, topic_of
from jobs.ingest.kraft.inputs import SEGMENT, Input, decode_all
from jobs.sim.kraft_history import KraftSize, simulate, write_log
from statemachine.kraft import records as K
from statemachine.kraft.fold import fold
from statemachine.kraft.profiles import kraft_profile_for
from statemachine.kraft.records import MetadataRecord, record_of

MINUTES = 60


def _records(tmp_path: Path) -> list[MetadataRecord]:
    write_log(tmp_path, simulate(MINUTES, seed=3, size=KraftSize("t", 6, 4, 5)), MINUTES)
    folder = tmp_path / "__cluster_metadata-0"
    rows, _ = decode_all(Input(p.name, SEGMENT, p.read_bytes())
                         for p in sorted(folder.iterdir()))
    return [record_of(r) for r in rows]


def test_the_buckets_and_the_cluster_timeline_give_the_whole_fold(tmp_path: Path) -> None:
    records = _records(tmp_path)
    profile = kraft_profile_for("3.7")
    whole = fold(records, profile=profile)
    assert whole.partition_windows  # the fences open windows
    fig = split_figures(records, profile, whole, buckets=3)
    assert fig["buckets"] == 3 and fig["cluster_scope_records"] > 0
    assert all(fig["equal"].values()), fig["equal"]


def test_topic_records_go_to_their_topic_and_broker_records_are_cluster_scope() -> None:
    names = {"id-a": "a"}
    assert topic_of(MetadataRecord(1, 1, 1, 0, K.PARTITION_CHANGE, topic_id="id-a"),
                    names) == "a"
    assert topic_of(MetadataRecord(2, 2, 1, 0, K.PARTITION_CHANGE, topic_id="id-b"),
                    names) == "id:id-b"  # no TopicRecord read: its id keeps it together
    assert topic_of(MetadataRecord(3, 3, 1, 0, K.FENCE_BROKER, broker_id=1), names) is None
    assert topic_of(MetadataRecord(4, 4, 1, 0, K.CONFIG, config_resource_type="BROKER",
                                   config_resource="1"), names) is None
    records = [MetadataRecord(0, 0, 1, 0, K.TOPIC, topic="a", topic_id="id-a"),
               MetadataRecord(1, 1, 1, 0, K.PARTITION, topic_id="id-a", partition=0),
               MetadataRecord(2, 2, 1, 0, K.REGISTER_BROKER, broker_id=1)]
    shared, by_bucket = split(records, 4)
    assert shared == [2] and list(by_bucket.values()) == [[0, 1]]


def test_a_spark_group_folds_its_topics_with_the_cluster_scope_records(tmp_path: Path) -> None:
    # `kraft_spark_split.fold_group`, the function each (cluster, bucket) group runs, given
    # the group's rows and the broadcast cluster-scope rows as Arrow tables.
    records = _records(tmp_path)
    whole = fold(records, profile=kraft_profile_for("3.7"))
    shared_ids, by_bucket = split(records, 2)
    table = pa.Table.from_pylist([{"cluster": "c", **r._asdict()} for r in records])
    shared = table.take(shared_ids)
    states = []
    for bucket, ids in by_bucket.items():
        out = fold_group(shared, (pa.scalar("c"), pa.scalar(bucket)), table.take(ids))
        assert set(out.column("bucket").to_pylist()) == {bucket}
        states += [(r["topic"], r["partition"], r["leader"], r["leader_epoch"])
                   for r in out.to_pylist()]
    assert sorted(states) == sorted((s.topic, s.partition, s.leader, s.leader_epoch)
                                    for s in whole.partition_states)
