"""The KRaft metadata image fold (`statemachine.kraft.image`), derived by hand from Kafka's
`PartitionRegistration.merge` (3.7.0 `PartitionRegistration.java:228-270`; the same rule at
3.0.0 `:71-95` and trunk of 2024-10 `:241-280`), `ClusterDelta.replay` (3.7.0
`ClusterDelta.java:85-151`) and `TopicsDelta.replay` (3.7.0 `TopicsDelta.java:71-115`)."""

from __future__ import annotations

from statemachine.kraft import records as K
from statemachine.kraft.image import KraftPart, MetadataImage
from statemachine.kraft.records import MetadataRecord, record_of

TID = "topic-id-orders"


def rec(record_type: str, offset: int = 0, **kw: object) -> MetadataRecord:
    return MetadataRecord(offset, offset, 1, offset * 1000, record_type, **kw)  # type: ignore[arg-type]


def change(**kw: object) -> MetadataRecord:
    kw.setdefault("leader", K.NO_LEADER_CHANGE)
    return rec(K.PARTITION_CHANGE, topic_id=TID, partition=0, **kw)


def with_partition() -> tuple[MetadataImage, KraftPart]:
    image = MetadataImage()
    image.apply(rec(K.TOPIC, topic="orders", topic_id=TID))
    image.apply(rec(K.PARTITION, topic_id=TID, partition=0, replicas=(1, 2, 3),
                    isr=(1, 2, 3), leader=1, leader_epoch=0, partition_epoch=0))
    part = image.topics["orders"].parts[0]
    assert isinstance(part, KraftPart)
    return image, part


def state(p: KraftPart) -> tuple[object, ...]:
    return p.leader, p.leader_epoch, p.zk_version, p.isr, p.replicas, p.recovering


def test_partition_record_states_the_whole_partition_epochs_included() -> None:
    image = MetadataImage()
    image.apply(rec(K.TOPIC, topic="orders", topic_id=TID))
    image.apply(rec(K.PARTITION, topic_id=TID, partition=0, replicas=(1, 2), isr=(2,),
                    leader=2, leader_epoch=7, partition_epoch=9, leader_recovery_state=1))
    part = image.topics["orders"].parts[0]
    assert isinstance(part, KraftPart)
    assert state(part) == (2, 7, 9, (2,), (1, 2), True)


def test_merge_epochs_by_hand() -> None:
    """Each step: what `merge` gives from the record's fields alone."""
    image, p = with_partition()
    # An ISR shrink written without a leader (metadata version 3.6-IV0 and later,
    # `triggerLeaderEpochBumpIfNeeded`): leader and leader epoch kept, partition epoch + 1.
    image.apply(change(isr=(1, 3)))
    assert state(p) == (1, 0, 1, (1, 3), (1, 2, 3), False)
    # The same shrink before 3.6-IV0: the builder names the current leader, so `merge`
    # bumps the leader epoch although the leader stays.
    image.apply(change(isr=(1,), leader=1))
    assert state(p) == (1, 1, 2, (1,), (1, 2, 3), False)
    # No leader (-1) is a leader change: leader epoch + 1.
    image.apply(change(leader=-1))
    assert state(p) == (-1, 2, 3, (1,), (1, 2, 3), False)
    # An unclean election: leader 3, ISR [3], RECOVERING (`PartitionChangeBuilder.tryElection`).
    image.apply(change(leader=3, isr=(3,), leader_recovery_state=K.RECOVERING))
    assert state(p) == (3, 3, 4, (3,), (1, 2, 3), True)
    # Recovery done (the leader's AlterPartition): only the recovery state and the
    # partition epoch move.
    image.apply(change(leader_recovery_state=K.RECOVERED))
    assert state(p) == (3, 3, 5, (3,), (1, 2, 3), False)
    # A reassignment adding 4: lists replaced, unnamed lists (ISR, removing) kept.
    image.apply(change(replicas=(1, 2, 3, 4), adding_replicas=(4,), leader=3))
    assert state(p) == (3, 4, 6, (3,), (1, 2, 3, 4), False)
    assert (p.adding, p.removing) == ((4,), ())


def test_leader_field_missing_is_no_change() -> None:
    image, p = with_partition()
    image.apply(change(leader=None, isr=(1, 2)))
    assert state(p) == (1, 0, 1, (1, 2), (1, 2, 3), False)


def test_elr_lists_merge_and_clear() -> None:
    image, p = with_partition()
    image.apply(change(isr=(1,), elr=(2, 3), last_known_elr=()))
    assert (p.elr, p.last_known_elr, p.zk_version) == ((2, 3), (), 1)
    image.apply(change(isr=(1, 2)))  # ELR not named: kept
    assert p.elr == (2, 3)
    result = image.apply(rec(K.CLEAR_ELR, topic_id=TID))
    assert p.elr == () and [c[0] for c in result.parts] == [p]


def test_change_of_unknown_partition_is_rejected() -> None:
    image, _ = with_partition()
    assert image.apply(rec(K.PARTITION_CHANGE, topic_id=TID, partition=5, leader=2)).rejected
    assert image.apply(rec(K.PARTITION, topic_id="nope", partition=0)).rejected


def test_remove_topic_is_immediate() -> None:
    image, p = with_partition()
    image.apply(rec(K.CONFIG, config_resource_type="TOPIC", config_resource="orders",
                    config_name=K.MIN_ISR, config_value="2"))
    result = image.apply(rec(K.REMOVE_TOPIC, topic_id=TID))
    assert result.removed is not None and result.removed.parts[0] is p
    assert image.topics == {} and image.names == {} and image.min_isr() == {}
    assert image.apply(rec(K.REMOVE_TOPIC, topic_id=TID)).rejected


def test_brokers_register_fenced_unfence_fence_shutdown_unregister() -> None:
    image = MetadataImage()
    image.apply(rec(K.REGISTER_BROKER, broker_id=1, broker_epoch=10, fenced=True))
    image.apply(rec(K.REGISTER_BROKER, broker_id=2, broker_epoch=11))  # fenced by default
    assert image.available() == frozenset()
    image.apply(rec(K.UNFENCE_BROKER, broker_id=1, broker_epoch=10, fenced=False))
    image.apply(rec(K.BROKER_REGISTRATION_CHANGE, broker_id=2, broker_epoch=11, fenced=False))
    assert image.available() == {1, 2}
    image.apply(rec(K.BROKER_REGISTRATION_CHANGE, broker_id=2, broker_epoch=11,
                    in_controlled_shutdown=True))
    assert image.brokers[2].in_controlled_shutdown and image.available() == {1, 2}
    image.apply(rec(K.FENCE_BROKER, broker_id=1, broker_epoch=10, fenced=True))
    assert image.available() == {2}
    image.apply(rec(K.UNREGISTER_BROKER, broker_id=2, broker_epoch=11))
    assert image.available() == frozenset() and set(image.brokers) == {1}


def test_broker_change_under_another_epoch_or_unregistered_is_rejected() -> None:
    """`ClusterDelta.getBrokerOrThrow` (3.7.0 `ClusterDelta.java:99-111`)."""
    image = MetadataImage()
    image.apply(rec(K.REGISTER_BROKER, broker_id=1, broker_epoch=10, fenced=False))
    stale = image.apply(rec(K.FENCE_BROKER, broker_id=1, broker_epoch=9, fenced=True))
    assert stale.rejected and "broker epoch 9" in stale.rejected
    assert image.available() == {1}
    assert image.apply(rec(K.UNFENCE_BROKER, broker_id=4, broker_epoch=1, fenced=False)).rejected
    assert image.apply(rec(K.UNREGISTER_BROKER, broker_id=4)).rejected


def test_configs_topic_over_cluster_default_broker_own_ignored() -> None:
    image, _ = with_partition()
    assert image.default_min_isr() == 1
    cluster = image.apply(rec(K.CONFIG, config_resource_type="BROKER", config_resource="",
                              config_name=K.MIN_ISR, config_value="2"))
    one = image.apply(rec(K.CONFIG, config_resource_type="BROKER", config_resource="3",
                          config_name=K.MIN_ISR, config_value="3"))
    image.apply(rec(K.CONFIG, config_resource_type="TOPIC", config_resource="orders",
                    config_name=K.UNCLEAN, config_value="true"))
    assert (cluster.config, one.config, image.default_min_isr()) == (True, False, 2)
    assert image.topics["orders"].unclean_leader_election_enable is True
    image.apply(rec(K.CONFIG, config_resource_type="TOPIC", config_resource="orders",
                    config_name=K.MIN_ISR, config_value="3"))
    assert image.min_isr() == {"orders": 3}
    image.apply(rec(K.CONFIG, config_resource_type="TOPIC", config_resource="orders",
                    config_name=K.MIN_ISR, config_value=None))  # deleted
    assert image.min_isr() == {}


def test_record_of_reads_table_rows_lists_as_tuples() -> None:
    class Row:
        offset, batch_base_offset, batch_leader_epoch, ts = 5, 4, 2, 7000
        record_type, isr, leader = K.PARTITION_CHANGE, [1, 2], -2

    r = record_of(Row())
    assert (r.offset, r.isr, r.leader, r.replicas, r.is_control) == (5, (1, 2), -2, None, None)
