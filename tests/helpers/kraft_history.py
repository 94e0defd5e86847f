"""KRaft metadata-log histories for the tests of the KRaft fold: records as Kafka 3.7.0's
controller writes them, built batch by batch (`statemachine.kraft.records.MetadataRecord`).
The hand derivations of each history are in its docstring."""

from __future__ import annotations

from statemachine.kraft import records as K
from statemachine.kraft.fold import KraftOutputs
from statemachine.kraft.records import MetadataRecord

TID = "orders-id"
BRCR = K.BROKER_REGISTRATION_CHANGE
# The cause a window names for a registration change: the record with its effect.
FENCED, UNFENCED = f"{BRCR}(fenced)", f"{BRCR}(unfenced)"
SHUTDOWN = f"{BRCR}(in controlled shutdown)"
PCR = K.PARTITION_CHANGE


def batch(base: int, epoch: int, *records: tuple[str, dict[str, object]]) -> list[MetadataRecord]:
    """Records of one batch at `base`, CreateTime base * 1000 ms (µs: base * 10**6)."""
    return [MetadataRecord(base + i, base, epoch, base * 10**6, kind, **kw)  # type: ignore[arg-type]
            for i, (kind, kw) in enumerate(records)]


def leader_change(offset: int, epoch: int, leader: int) -> list[MetadataRecord]:
    return [MetadataRecord(offset, offset, epoch, offset * 10**6, K.LEADER_CHANGE,
                           is_control=True, broker_id=leader)]


def part(p: int, replicas: tuple[int, ...], isr: tuple[int, ...], leader: int
         ) -> tuple[str, dict[str, object]]:
    return K.PARTITION, dict(topic_id=TID, partition=p, replicas=replicas, isr=isr,
                             leader=leader, leader_epoch=0, partition_epoch=0)


def pcr(p: int, **kw: object) -> tuple[str, dict[str, object]]:
    kw.setdefault("leader", K.NO_LEADER_CHANGE)
    return PCR, dict(topic_id=TID, partition=p, **kw)


def topic_config(name: str, value: str | None) -> tuple[str, dict[str, object]]:
    return K.CONFIG, dict(config_resource_type="TOPIC", config_resource="orders",
                          config_name=name, config_value=value)


def setup() -> list[MetadataRecord]:
    """Quorum leader 3000 in epoch 1; brokers 1-3 registered (fenced) and unfenced; topic
    `orders` created as `ReplicationControlManager.createTopic` writes it: the TopicRecord,
    its configs, its partitions, in one batch (3.7.0 `ReplicationControlManager.java:808-818`).
    p2's only ISR member is broker 1."""
    return [
        *leader_change(0, 1, 3000),
        *batch(1, 1, *[(K.REGISTER_BROKER, dict(broker_id=b, broker_epoch=9 + b, fenced=True))
                       for b in (1, 2, 3)]),
        *batch(4, 1, *[(BRCR, dict(broker_id=b, broker_epoch=9 + b, fenced=False))
                       for b in (1, 2, 3)]),
        *batch(7, 1, (K.TOPIC, dict(topic="orders", topic_id=TID)),
               topic_config(K.MIN_ISR, "2"),
               part(0, (1, 2, 3), (1, 2, 3), 1), part(1, (2, 1), (2, 1), 2),
               part(2, (1, 3), (1,), 1)),
    ]


def fence_1(base: int, epoch: int = 1) -> list[MetadataRecord]:
    """`handleBrokerFenced(1)` (3.7.0 `ReplicationControlManager.java:1289-1306`): for each
    partition with 1 in its ISR, `PartitionChangeBuilder` with target ISR = ISR - {1} and
    1 not an acceptable leader (`generateLeaderAndIsrUpdates`, `:1821-1894`), then the
    fence. `electAnyLeader` (3.7.0 `PartitionChangeBuilder.java:263-291`) keeps a valid
    current leader, else takes the first replica in the target ISR, else (unclean
    election enabled) the first acceptable replica, else -1; an empty target ISR is not
    written without ELR (`build`, `:443`)."""
    return batch(base, epoch,
                 pcr(0, leader=2, isr=(2, 3)),  # 1 led: 2 is the first of [2, 3]
                 pcr(1, isr=(2,)),  # 2 leads and stays: ISR only, no epoch bump
                 pcr(2, leader=-1),  # ISR [1] -> []: no leader, the ISR stays [1]
                 (BRCR, dict(broker_id=1, broker_epoch=10, fenced=True)))


def unfence_1(base: int, epoch: int) -> list[MetadataRecord]:
    """`handleBrokerUnfenced(1)` (`:1338-1350`): the unfence first, then the leaderless
    partitions elected with 1 acceptable: p2's ISR [1] elects 1."""
    return batch(base, epoch, (BRCR, dict(broker_id=1, broker_epoch=10, fenced=False)),
                 pcr(2, leader=1))


def states(out: KraftOutputs) -> list[tuple[object, ...]]:
    return [(s.partition, s.state, s.leader, s.leader_epoch, s.isr, s.zk_version,
             s.controller_epoch, s.leader_recovery_state) for s in out.partition_states]
