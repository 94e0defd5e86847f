"""`state_changes.outcome` (applied / rejected / failed) and `partition_state_writes` (every
write of a partition's state znode), on small logs and on the fuzzer's random logs. The
`rejected` outcome of a transition the matrix refuses is checked with each machine
(`test_conformance_partition`, `test_conformance_replica`, `test_transition_matrix`)."""

from __future__ import annotations

import pytest

from statemachine.rows import APPLIED, FAILED, WRITE_CAUSES
from tests.helpers.core import Log, at, final, replay_log
from tests.statemachine.test_conformance_fuzz import _world

OFFLINE, ONLINE = "OfflinePartition", "OnlinePartition"


def test_a_failed_election_reads_failed_and_leaves_the_partition_offline() -> None:
    """Kafka logs `failed to change state for partition t-0 from OfflinePartition to
    OnlinePartition`: the row names the same target, with outcome failed, and a query for
    the states the partition went through (outcome applied) ends in OfflinePartition."""
    log = Log()
    log.failover(0, [0, 1])
    log.create("t", 0, [1])
    seq = log.failure(1)
    _, out = replay_log(log)
    partition = [(r.from_state, r.to_state, r.outcome) for r in at(out.state_changes, seq)
                 if r.machine == "partition"]
    assert partition == [(ONLINE, OFFLINE, APPLIED), (OFFLINE, ONLINE, FAILED)]
    (failed,) = [r for r in out.state_changes if r.outcome == FAILED]
    assert failed.reason is not None and failed.reason.startswith(
        "Failed to elect leader for partition t-0")
    applied = [r.to_state for r in out.state_changes
               if r.machine == "partition" and r.outcome == APPLIED]
    assert applied[-1] == OFFLINE == final(out, "t", 0).state


def test_deleting_a_two_replica_topic_writes_the_isr_shrinks_and_sends_no_leader_and_isr(
) -> None:
    """onTopicDeletion takes every replica to OfflineReplica: each removal from the ISR is
    a ZooKeeper write (Kafka logs `state changed to (Leader:..,ISR:..) after removing
    replica N`) and, the topic being queued for deletion, no LeaderAndIsr carries it."""
    log = Log()
    log.failover(0, [1, 3])
    log.create("d", 0, [3, 1])
    seq = log.delete("d")
    _, out = replay_log(log)
    writes = [(w.write, w.leader, w.isr, w.leader_epoch, w.zk_version, w.cause)
              for w in at(out.partition_state_writes, seq)]
    assert writes == [(1, 3, (3,), 1, 1, "isr_shrink"), (2, -1, (3,), 2, 2, "isr_shrink")]
    assert at(out.leader_and_isr, seq) == []
    assert {u.leader for u in at(out.update_metadata, seq)} == {-2}  # LeaderDuringDelete


def test_every_write_is_numbered_and_caused() -> None:
    log = Log()
    log.failover(0, [0, 1, 2])
    created = log.create("t", 0, [0, 1, 2])
    shrunk = log.isr("t", 0, [0, 1])
    failed = log.failure(0)
    _, out = replay_log(log)
    causes = [(w.seq, w.write, w.cause) for w in out.partition_state_writes]
    assert causes == [(created, 1, "initialization"), (shrunk, 1, "isr_change"),
                      (failed, 1, "election")]
    assert all(w.cause in WRITE_CAUSES for w in out.partition_state_writes)


@pytest.mark.parametrize("seed", range(8))
def test_random_logs_write_what_the_state_holds(seed: int) -> None:
    """On the fuzzer's logs: each write bumps the partition epoch by one (a new incarnation
    starts at 0), and the last write of every partition that still has a leader is the
    state it ends in."""
    world = _world(seed)
    last: dict[tuple[str, int], tuple[int, int, tuple[int, ...], int]] = {}
    for w in world.rows["partition_state_writes"]:
        key = (w.topic, w.partition)
        if w.cause == "initialization":
            assert w.zk_version == 0
        else:
            assert w.zk_version == last[key][3] + 1, (seed, w)
        last[key] = (w.leader, w.leader_epoch, w.isr, w.zk_version)
    assert world.rows["partition_state_writes"], seed
    for (topic, partition), row in world.parts.items():
        if row.leader is not None and (topic, partition) in last:
            assert last[(topic, partition)] == (row.leader, row.leader_epoch, row.isr,
                                                row.zk_version), (seed, topic, partition)
