"""One cluster history in both encodings: as ZooKeeper-mode controller events (replayed by
the ZooKeeper fold, Kafka 3.7.1's controller) and as the `__cluster_metadata` records a
KRaft controller writes for it (folded by `statemachine.kraft`), compared table to table.

The history: brokers 1-3 up; topic `orders` created with p0 [1,2], p1 [2,3], p2 [3,1] and
p3 [1], min.insync.replicas 2; broker 1 fails at 30 s (p0's leader moves to 2, p2 loses a
follower, p3 loses its only replica); broker 1 returns at 90 s (p3 elects it again);
the leaders of p0 and p2 add it back to their ISRs at 100 s and 101 s; broker 2 shuts down
under control at 200 s and exits at 210 s.

The records are those `ReplicationControlManager` writes (3.7.0): a fence as the ISR
removals and re-elections, then the fence (`handleBrokerFenced`, `:1289-1306`); a return
as a new registration, then the unfence and the election of the leaderless partitions the
broker can lead (`handleBrokerUnfenced`, `:1338-1350`); a controlled shutdown as the
registration change, then the ISR removals and leader moves (`handleBrokerInControlledShutdown`,
`:1363-1373`); the exit as a fence (no partition has the broker in its ISR by then).

Where the two modes agree, the tables are equal: every window (kind, start and end time,
cause and end broker), the incidents (blast radius, partition-seconds, cause broker),
every partition's final state, leader, ISR, replicas and partition epoch (the ZooKeeper
znode version), and the brokers' live / shutting-down / dead intervals.

Where they do not:

* seqs: the ZooKeeper fold's are the controller's event order, the KRaft fold's the record
  offsets; incident ids are those seqs. Compared here by time.
* cause and end events are named in each mode's terms (`BrokerFailure` /
  `BrokerRegistrationChangeRecord`); their brokers agree.
* leader epochs: the ZooKeeper controller bumps the leader epoch on every ISR shrink
  (`ReplicaStateMachine.removeReplicasFromIsr`), as a KRaft controller does below metadata
  version 3.6-IV0 (`PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded`, 3.5.0
  `:264-271`); from 3.6 an ISR shrink keeps the leader epoch (3.6.0 `:289-301`). The
  3.3-style encoding below names the leader in its ISR shrinks and agrees on every epoch;
  the 3.6-style one differs by exactly those bumps.
* `controller_epoch`: the ZooKeeper controller epoch against the quorum leader epoch of the
  batch that last wrote the partition.
* a KRaft registration starts fenced: the broker timeline has a zero-length `dead`
  interval at each registration, which the comparison leaves out.
"""

from __future__ import annotations

from typing import Any

from statemachine.cluster import broker_intervals as zk_broker_intervals
from statemachine.cluster import build_timeline
from statemachine.context import ReplayConfig
from statemachine.events import Event
from statemachine.incidents import incidents
from statemachine.kraft import records as K
from statemachine.kraft.fold import fold
from statemachine.kraft.profiles import kraft_profile_for
from statemachine.kraft.records import MetadataRecord
from tests.helpers.core import replay_log

S = 10**6  # a second in microseconds
TID = "orders-id"
MIN_ISR = 2
END = 300 * S  # where the incidents' open windows are counted to


def zk_event(seq: int, second: int, event_type: str, **kw: Any) -> Event:
    for name in ("replicas", "isr", "brokers"):
        if name in kw:
            kw[name] = tuple(kw[name])
    return Event(seq, second * S, event_type, source=f"test:{seq}", **kw)


def zookeeper_history() -> list[Event]:
    created = [zk_event(2, 2, "PartitionCreated", topic="orders", partition=p, replicas=r)
               for p, r in enumerate(((1, 2), (2, 3), (3, 1), (1,)))]
    return [
        zk_event(1, 1, "ControllerFailover", broker_id=1, brokers=[1, 2, 3]),
        *created,
        zk_event(3, 30, "BrokerFailure", broker_id=1),
        zk_event(4, 90, "BrokerStartup", broker_id=1),
        zk_event(5, 100, "IsrChanged", topic="orders", partition=0, isr=[2, 1]),
        zk_event(6, 101, "IsrChanged", topic="orders", partition=2, isr=[3, 1]),
        zk_event(7, 200, "ControlledShutdown", broker_id=2),
        zk_event(8, 210, "BrokerFailure", broker_id=2),
    ]


class Batches:
    """Record batches written at given times, offsets in order."""

    def __init__(self) -> None:
        self.records: list[MetadataRecord] = []

    def add(self, second: int, *records: tuple[str, dict[str, Any]],
            control: bool = False) -> None:
        base = len(self.records)
        self.records += [MetadataRecord(base + i, base, 1, second * S, kind,  # type: ignore[arg-type]
                                        is_control=control, **kw)
                         for i, (kind, kw) in enumerate(records)]


def pcr(p: int, leader: int = K.NO_LEADER_CHANGE, **kw: Any) -> tuple[str, dict[str, Any]]:
    return K.PARTITION_CHANGE, dict(topic_id=TID, partition=p, leader=leader, **kw)


def brcr(broker: int, epoch: int, **kw: Any) -> tuple[str, dict[str, Any]]:
    return K.BROKER_REGISTRATION_CHANGE, dict(broker_id=broker, broker_epoch=epoch, **kw)


def kraft_history(shrink_names_leader: bool) -> list[MetadataRecord]:
    """The same history as records; `shrink_names_leader`: a 3.3-3.5 controller, whose ISR
    shrinks name the current leader (a leader epoch bump)."""
    def shrink(p: int, leader: int, isr: tuple[int, ...]) -> tuple[str, dict[str, Any]]:
        return pcr(p, leader if shrink_names_leader else K.NO_LEADER_CHANGE, isr=isr)

    b = Batches()
    b.add(1, (K.LEADER_CHANGE, dict(broker_id=3000)), control=True)
    b.add(1, *[(K.REGISTER_BROKER, dict(broker_id=i, broker_epoch=10 + i, fenced=True))
               for i in (1, 2, 3)])
    b.add(1, *[brcr(i, 10 + i, fenced=False) for i in (1, 2, 3)])
    b.add(2, (K.TOPIC, dict(topic="orders", topic_id=TID)), *[
        (K.PARTITION, dict(topic_id=TID, partition=p, replicas=r, isr=r, leader=r[0],
                           leader_epoch=0, partition_epoch=0))
        for p, r in enumerate(((1, 2), (2, 3), (3, 1), (1,)))])
    # Broker 1's heartbeats stop: handleBrokerFenced(1).
    b.add(30, pcr(0, 2, isr=(2,)), shrink(2, 3, (3,)), pcr(3, K.NO_LEADER),
          brcr(1, 11, fenced=True))
    # Broker 1 restarts: a new registration (fenced), then handleBrokerUnfenced(1).
    b.add(90, (K.REGISTER_BROKER, dict(broker_id=1, broker_epoch=50, fenced=True)))
    b.add(90, brcr(1, 50, fenced=False), pcr(3, 1))
    b.add(100, pcr(0, isr=(2, 1)))  # AlterPartition from p0's leader 2
    b.add(101, pcr(2, isr=(3, 1)))  # and from p2's leader 3
    # handleBrokerInControlledShutdown(2), then the fence once it may shut down.
    b.add(200, brcr(2, 12, in_controlled_shutdown=True), pcr(0, 1, isr=(1,)),
          pcr(1, 3, isr=(3,)))
    b.add(210, brcr(2, 12, fenced=True))
    return b.records


def zookeeper() -> Any:
    return replay_log(zookeeper_history(), ReplayConfig(min_insync_replicas=MIN_ISR))[1]


def kraft(shrink_names_leader: bool) -> Any:
    profile = kraft_profile_for("3.5" if shrink_names_leader else "3.7")
    return fold(kraft_history(shrink_names_leader), default_min_isr=MIN_ISR, profile=profile)


def windows(out: Any) -> list[tuple[Any, ...]]:
    return sorted((w.topic, w.partition, w.kind, w.start_ts, w.end_ts, w.seconds,
                   w.cause_broker, w.end_broker) for w in out.partition_windows)


def incident_figures(out: Any) -> list[tuple[Any, ...]]:
    return sorted(((i.cause_broker, i.start_ts, i.end_ts, i.peak_partitions_offline,
                   i.partitions_affected, i.offline_partition_seconds,
                   i.under_min_isr_partition_seconds, i.recovery_broker)
                  for i in incidents(out.partition_windows, as_of=END)), key=repr)


def states(out: Any, epochs: bool) -> list[tuple[Any, ...]]:
    return sorted((s.topic, s.partition, s.state, s.leader, s.isr, s.replicas, s.zk_version,
                   *((s.leader_epoch,) if epochs else ())) for s in out.partition_states)


def broker_intervals(rows: Any) -> list[tuple[Any, ...]]:
    return sorted(((b.broker_id, b.status, b.ts_from, b.ts_to) for b in rows
                   if b.ts_from != b.ts_to), key=repr)


def test_the_windows_agree_and_are_the_history_s() -> None:
    zk, kr = windows(zookeeper()), windows(kraft(False))
    assert zk == kr
    offline = [w for w in zk if w[2] == "offline"]
    # p3's only replica is broker 1: offline from its failure to its return, 60 s.
    assert offline == [("orders", 3, "offline", 30 * S, 90 * S, 60.0, 1, 1)]
    under = {(w[1], w[3], w[4], w[6]) for w in zk if w[2] == "under_min_isr"}
    assert under == {(0, 30 * S, 100 * S, 1), (2, 30 * S, 101 * S, 1),
                     (0, 200 * S, None, 2), (1, 200 * S, None, 2),
                     (3, 2 * S, None, None)}  # p3 has one replica, min.insync.replicas 2


def test_the_incidents_agree() -> None:
    zk = incident_figures(zookeeper())
    assert zk == incident_figures(kraft(False))
    by_broker = {i[0]: i for i in zk if i[0] is not None}
    # Broker 1's failure: one partition offline at its peak, three affected, 60 offline
    # partition-seconds (p3) and 70 + 71 under min ISR (p0, p2; p3 has been under it
    # since its creation, an incident of its own).
    assert by_broker[1][3:] == (1, 3, 60.0, 141.0, None)
    assert by_broker[2][3:] == (0, 2, 0.0, 200.0, None)


def test_the_final_states_agree_with_the_3_6_epochs_differing_by_the_isr_shrinks() -> None:
    zk = zookeeper()
    assert states(zk, epochs=False) == states(kraft(False), epochs=False)
    # A 3.3-3.5 controller names the leader in an ISR shrink: every epoch agrees.
    assert states(zk, epochs=True) == states(kraft(True), epochs=True)
    # From 3.6, p2's shrink at broker 1's failure does not bump its leader epoch: the
    # only partition whose ISR shrank without a leader change.
    epochs_zk = {s.partition: s.leader_epoch for s in zk.partition_states}
    epochs_kr = {s.partition: s.leader_epoch for s in kraft(False).partition_states}
    assert {p: (epochs_zk[p], epochs_kr[p]) for p in epochs_zk
            if epochs_zk[p] != epochs_kr[p]} == {2: (1, 0)}


def test_the_broker_timelines_agree() -> None:
    zk = broker_intervals(zk_broker_intervals(build_timeline(zookeeper_history())))
    assert zk == broker_intervals(kraft(False).broker_timeline)
    assert [(s, a, b) for broker, s, a, b in zk if broker == 2] == [
        ("dead", 210 * S, None), ("live", 1 * S, 200 * S), ("shutting_down", 200 * S, 210 * S)]
