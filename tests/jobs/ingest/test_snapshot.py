"""The snapshot parser over `kafka-topics --describe` output of Kafka 1.1 - 3.9 and ZooKeeper
dumps of partition state (fixtures in tests/fixtures/snapshots, each naming its Kafka release
and the TopicCommand or ZkData code that prints it)."""

from __future__ import annotations

import pytest

from jobs.ingest.snapshot import (
    DESCRIBE,
    EMPTY,
    MIXED,
    ZOOKEEPER,
    ObservedPartition,
    Snapshot,
    TopicSettings,
    merge_snapshots,
    parse_snapshot_text,
    read_snapshot,
    read_snapshots,
)
from jobs.ingest.snapshot.describe import parse_configs
from tests.helpers import FIXTURES

SNAPSHOTS = FIXTURES / "snapshots"


def _read(name: str) -> Snapshot:
    return read_snapshot(str(SNAPSHOTS / name))


def _partition(snapshot: Snapshot, topic: str, partition: int) -> ObservedPartition:
    [found] = [p for p in snapshot.partitions if (p.topic, p.partition) == (topic, partition)]
    return found


def _topic(snapshot: Snapshot, topic: str) -> TopicSettings:
    [found] = [t for t in snapshot.topics if t.topic == topic]
    return found


def _state(p: ObservedPartition) -> tuple[object, ...]:
    """Everything but the source."""
    return tuple(p)[:-1]


def _sources(p: ObservedPartition | TopicSettings) -> list[str]:
    return [s.rsplit("/", 1)[-1] for s in p.source.split(", ")]


@pytest.mark.parametrize("name", sorted(p.name for p in SNAPSHOTS.glob("*.txt")
                                        if p.name != "unreadable.txt"))
def test_every_fixture_reads_without_an_unreadable_line_but_those_it_means(name: str) -> None:
    snapshot = _read(name)
    assert snapshot.partitions
    expected = ["zk-shell-interactive.txt:26"] if name == "zk-shell-interactive.txt" else []
    assert [_sources_of(u.source) for u in snapshot.unreadable] == expected


def _sources_of(source: str) -> str:
    return source.rsplit("/", 1)[-1]


# --- kafka-topics --describe ---------------------------------------------------------------

def test_describe_1_1_zookeeper_every_field() -> None:
    s = _read("describe-1.1-zookeeper.txt")
    assert s.format == DESCRIBE
    assert _state(_partition(s, "orders", 0)) == (
        "orders", 0, 1, None, (1, 2), (1, 2), None, None, None, None)
    assert _partition(s, "orders", 0).source.endswith("describe-1.1-zookeeper.txt:7")
    assert _partition(s, "orders", 1).isr == (2,)
    assert _partition(s, "orders", 1).replicas == (2, 3)


def test_leader_none_and_leader_minus_one_both_read_as_no_leader() -> None:
    s = _read("describe-1.1-zookeeper.txt")
    assert _partition(s, "orders", 1).leader == -1  # "Leader: -1": the state znode's NoLeader
    assert _partition(s, "orders", 2).leader == -1  # "Leader: none": no state znode
    assert _partition(s, "orders", 2).isr == ()  # "Isr: " prints an empty ISR
    assert _partition(_read("describe-2.2-bootstrap.txt"), "payments", 1).leader == -1


def test_configs_keep_min_insync_replicas_and_values_with_commas() -> None:
    orders = _topic(_read("describe-1.1-zookeeper.txt"), "orders")
    assert orders.configs == {"min.insync.replicas": "2", "cleanup.policy": "compact,delete"}
    assert orders.marked_for_deletion is False
    assert _topic(_read("describe-2.2-bootstrap.txt"), "payments").configs == {
        "min.insync.replicas": "2", "retention.ms": "604800000"}
    assert _topic(_read("describe-3.7-bootstrap.txt"), "audit").configs == {}
    assert parse_configs("leader.replication.throttled.replicas=0:1,1:2,retention.ms=1") == {
        "leader.replication.throttled.replicas": "0:1,1:2", "retention.ms": "1"}


def test_marked_for_deletion_on_topic_line_and_partition_lines() -> None:
    old = _topic(_read("describe-1.1-zookeeper.txt"), "old-events")
    # "Configs:\tMarkedForDeletion:true": no overrides, marked.
    assert (old.marked_for_deletion, old.configs) == (True, {})
    clicks = _topic(_read("describe-2.4-zookeeper.txt"), "clicks")
    assert clicks.marked_for_deletion is True
    assert _sources(clicks) == ["describe-2.4-zookeeper.txt:6", "describe-2.4-zookeeper.txt:7",
                                "describe-2.4-zookeeper.txt:8"]
    assert _partition(_read("describe-2.4-zookeeper.txt"), "clicks", 0).leader == -1


def test_under_replicated_report_has_partition_lines_only() -> None:
    s = _read("describe-1.1-under-replicated.txt")
    assert [(p.topic, p.partition, p.leader, p.isr) for p in s.partitions] == [
        ("old-events", 0, 3, (3,)), ("orders", 1, 2, (2,))]
    # No topic line: the topic is known only through the partition line's mark.
    assert [(t.topic, t.configs, t.marked_for_deletion) for t in s.topics] == [
        ("old-events", None, True)]


def test_reassignment_fields_2_8() -> None:
    s = _read("describe-2.8-bootstrap.txt")
    p0, p1 = _partition(s, "orders", 0), _partition(s, "orders", 1)
    assert (p0.replicas, p0.isr, p0.adding_replicas, p0.removing_replicas) == (
        (1, 2, 3, 4), (1, 2, 3), (4,), (3,))
    # Without a reassignment 2.8 prints neither field: unknown, not empty.
    assert (p1.adding_replicas, p1.removing_replicas) == (None, None)
    assert _topic(s, "orders").topic_id == "6Fv2mKkTRd2Vh0bqSz8r4A"


def test_reassignment_with_an_empty_adding_list_3_7() -> None:
    s = _read("describe-3.7-bootstrap.txt")
    assert _state(_partition(s, "audit", 0)) == (
        "audit", 0, 3, None, (3, 1, 2), (3, 1, 2), (), (2,), None, None)
    assert _state(_partition(s, "audit", 1)) == (
        "audit", 1, -1, None, (), (1, 2), None, None, None, None)


def test_elr_fields_3_9_are_accepted_and_not_kept() -> None:
    s = _read("describe-3.9-bootstrap.txt")
    assert [(p.partition, p.leader, p.isr) for p in s.partitions] == [(0, 1, (1, 2)), (1, 2, (2,))]
    bad = parse_snapshot_text("\tTopic: m\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1"
                              "\tElr: x\tLastKnownElr: N/A\n", "elr")
    assert [u.reason for u in bad.unreadable] == ["Elr: 'x' is not a list of broker ids"]


def test_tabs_pasted_as_spaces_read_like_the_original() -> None:
    pasted, original = _read("describe-pasted-spaces.txt"), _read("describe-2.8-bootstrap.txt")
    assert _state(_partition(pasted, "orders", 0)) == _state(_partition(original, "orders", 0))
    assert _topic(pasted, "orders")[:4] == _topic(original, "orders")[:4]
    p1 = _partition(pasted, "orders", 1)  # "Isr:  Adding Replicas:  Removing Replicas: 1"
    assert (p1.leader, p1.isr, p1.adding_replicas, p1.removing_replicas) == (-1, (), (), (1,))
    legacy = _topic(pasted, "legacy")  # the 1.x "Topic:legacy PartitionCount:1 ..." line
    assert (legacy.configs, legacy.marked_for_deletion) == ({"cleanup.policy": "compact"}, True)
    assert _partition(pasted, "legacy", 0).leader == -1


def test_delete_and_list_notices_mark_the_topic() -> None:
    s = parse_snapshot_text(
        "Topic gone is marked for deletion.\n"
        "Note: This will have no impact if delete.topic.enable is not set to true.\n"
        "going - marked for deletion\n", "notices")
    assert [(t.topic, t.marked_for_deletion) for t in s.topics] == [("going", True), ("gone", True)]
    assert s.unreadable == []


# --- ZooKeeper dumps -----------------------------------------------------------------------

def test_path_and_json_lines_merge_topic_and_state_znodes() -> None:
    s = _read("zk-path-json.txt")
    assert s.format == ZOOKEEPER
    p0 = _partition(s, "orders", 0)
    assert _state(p0) == ("orders", 0, 1, 7, (1, 2), (1, 2, 3, 4), (4,), (3,), 5, None)
    assert _sources(p0) == ["zk-path-json.txt:5", "zk-path-json.txt:6"]
    # Tab separated; leader -1; version 2+ topic znode: absent from adding_replicas = none.
    assert _state(_partition(s, "orders", 1)) == (
        "orders", 1, -1, 3, (2,), (2, 3, 1), (), (), 4, None)
    orders = _topic(s, "orders")
    assert (orders.configs, orders.topic_id) == ({"min.insync.replicas": "2"},
                                                 "6Fv2mKkTRd2Vh0bqSz8r4A")


def test_version_1_topic_znode_under_a_chroot_and_delete_topics() -> None:
    s = _read("zk-path-json.txt")
    legacy = _partition(s, "legacy", 0)
    # Version 1 (Kafka 1.x) has no adding/removing replicas: unknown.
    assert _state(legacy) == ("legacy", 0, 4, 0, (4, 5), (4, 5), None, None, 2, None)
    assert _topic(s, "legacy").marked_for_deletion is True
    assert _topic(s, "orders").marked_for_deletion is False


def test_zookeeper_shell_3_4_get_with_stat_block_gives_zk_version() -> None:
    s = _read("zk-shell-3.4-get.txt")
    p0 = _partition(s, "orders", 0)
    assert _state(p0) == ("orders", 0, 1, 7, (1, 2), (1, 2, 3), None, None, 5, 12)
    assert _sources(p0) == ["zk-shell-3.4-get.txt:10", "zk-shell-3.4-get.txt:17",
                            "zk-shell-3.4-get.txt:28"]
    # The topic znode's own dataVersion (0) is not a partition's zkVersion.
    assert _partition(s, "orders", 1).zk_version is None
    assert _partition(s, "orders", 1).replicas == (2, 3, 1)


def test_zookeeper_shell_interactive_session() -> None:
    s = _read("zk-shell-interactive.txt")
    assert [_state(p) for p in s.partitions] == [
        ("payments", 0, 2, 15, (2, 3), (2, 3, 1), (), (), 9, 21)]
    # From `ls /admin/delete_topics`; the `ls /brokers/topics` listing marks nothing.
    assert [(t.topic, t.marked_for_deletion) for t in s.topics] == [
        ("clicks", True), ("old-events", True)]
    [missing] = s.unreadable
    assert missing.reason == ("zookeeper-shell: /brokers/topics/payments/partitions/1/state "
                              "does not exist")


def test_stat_command_alone_gives_zk_version() -> None:
    s = parse_snapshot_text(
        "$ zookeeper-shell.sh zk:2181 stat /brokers/topics/t/partitions/3/state\n"
        "cZxid = 0x1\ndataVersion = 8\nnumChildren = 0\n", "stat")
    assert [_state(p) for p in s.partitions] == [
        ("t", 3, None, None, None, None, None, None, None, 8)]


def test_state_znode_with_leader_recovery_state_and_unknown_recovery() -> None:
    ok = parse_snapshot_text('/brokers/topics/t/partitions/0/state {"controller_epoch":1,'
                             '"leader":2,"version":1,"leader_epoch":4,"isr":[2],'
                             '"leader_recovery_state":1}', "recovering")
    assert (ok.partitions[0].leader, ok.unreadable) == (2, [])
    bad = parse_snapshot_text('/brokers/topics/t/partitions/0/state {"controller_epoch":1,'
                              '"leader":2,"version":1,"leader_epoch":4,"isr":[2],'
                              '"leader_recovery_state":7}', "recovering")
    assert bad.partitions == []
    assert bad.unreadable[0].reason.endswith("leader_recovery_state 7 is neither 0 nor 1")


# --- merging and detection -----------------------------------------------------------------

def test_a_describe_and_a_zookeeper_dump_merge_across_files() -> None:
    s = read_snapshots([str(SNAPSHOTS / "describe-2.8-bootstrap.txt"),
                        str(SNAPSHOTS / "zk-path-json.txt")])
    assert s.format == MIXED
    assert _state(_partition(s, "orders", 0)) == (
        "orders", 0, 1, 7, (1, 2, 3), (1, 2, 3, 4), (4,), (3,), 5, None)
    # The two disagree on ISRs and a leader: the first read is kept, each contradiction shown.
    assert [u.text for u in s.unreadable] == [
        "orders-0 isr=(1, 2)", "orders-1 leader=-1", "orders-1 isr=(2,)"]
    conflict = s.unreadable[0]
    assert conflict.source.endswith("zk-path-json.txt:6")
    assert conflict.reason == ("contradicts isr=(1, 2, 3) read at "
                               f"{SNAPSHOTS / 'describe-2.8-bootstrap.txt'}:6; the first is kept")
    # Configs are a union by key: describe's extra segment.bytes is no contradiction.
    assert _topic(s, "orders").configs == {"min.insync.replicas": "2",
                                           "segment.bytes": "1073741824"}


def test_one_text_may_hold_both_formats() -> None:
    s = parse_snapshot_text(
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n"
        '/brokers/topics/t/partitions/0/state {"controller_epoch":3,"leader":1,"version":1,'
        '"leader_epoch":9,"isr":[1,2]}\n', "both")
    assert s.format == MIXED
    assert [(_state(p), p.source) for p in s.partitions] == [
        (("t", 0, 1, 9, (1, 2), (1, 2), None, None, 3, None), "both:1, both:2")]
    assert s.unreadable == []


def test_merge_snapshots_of_nothing_is_empty() -> None:
    assert merge_snapshots([]) == Snapshot([], [], [], EMPTY)
    assert parse_snapshot_text("\n# only a comment\n\n", "blank") == Snapshot([], [], [], EMPTY)


def test_conflicting_topic_configs_are_reported() -> None:
    s = parse_snapshot_text(
        '/config/topics/t {"version":1,"config":{"min.insync.replicas":"2"}}\n'
        "Topic: t\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: min.insync.replicas=1\n",
        "configs")
    assert _topic(s, "t").configs == {"min.insync.replicas": "2"}
    assert [(u.source, u.text) for u in s.unreadable] == [
        ("configs:2", "t config min.insync.replicas='1'")]


# --- unreadable lines ----------------------------------------------------------------------

def test_unreadable_lines_are_reported_with_file_and_line() -> None:
    s = _read("unreadable.txt")
    assert s.partitions == [] and s.topics == [] and s.format == EMPTY
    assert [(_sources_of(u.source), u.reason) for u in s.unreadable] == [
        ("unreadable.txt:2", "PartitionCount: 'x' is not a number"),
        ("unreadable.txt:3", "Isr: '1,two' is not a list of broker ids"),
        ("unreadable.txt:4", "unknown describe field 'Preferred: 1'"),
        ("unreadable.txt:5", "partition line without Leader"),
        ("unreadable.txt:6", "kafka-topics: the topic does not exist"),
        ("unreadable.txt:7", "znode data with no znode path before it"),
        ("unreadable.txt:8", "/brokers/topics/orders/partitions/3/state: leader_epoch None is "
                             "not a number"),
        ("unreadable.txt:9", "/brokers/topics/orders/partitions/4/state: not JSON (Expecting "
                             "property name enclosed in double quotes)"),
        ("unreadable.txt:10", "/controller: not a partition state, topic, topic config or "
                              "delete_topics znode"),
        ("unreadable.txt:11", "the tool logged an error; the snapshot may be partial"),
        ("unreadable.txt:12", "neither kafka-topics --describe output nor a ZooKeeper dump line"),
    ]
    assert s.unreadable[1].text == (
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,two")


def test_noise_is_ignored_by_name_only() -> None:
    s = parse_snapshot_text(
        "[2024-05-01 10:00:00,123] WARN slow (org.apache.zookeeper.ClientCnxn)\n"
        "2019-03-05 10:11:12,000 [myid:] - INFO  [main:ZooKeeper@438] - Initiating client\n"
        "log4j:WARN No appenders could be found for logger (org.apache.zookeeper.ZooKeeper).\n"
        "Connecting to zk:2181\nWATCHER::\nWatchedEvent state:SyncConnected type:None path:null\n"
        "Exception in thread main\n", "noise")
    assert [(u.source, u.text) for u in s.unreadable] == [("noise:7", "Exception in thread main")]


def test_a_crlf_file_with_a_byte_order_mark_reads() -> None:
    s = parse_snapshot_text("\ufeffTopic: t\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: "
                            "\r\n\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\r\n",
                            "windows")
    assert (s.unreadable, [p.isr for p in s.partitions], s.topics[0].configs) == ([], [(1,)], {})
