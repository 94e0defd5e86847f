"""The cache re-stamp of OfflineReplica changes the controller's cache, not ZooKeeper.

Kafka 3.7.1 (`ZkReplicaStateMachine.doRemoveReplicasFromIsr`): when OfflineReplica finds
the replica outside the ISR there is no ZK write, but the controller *cache* is set to
`LeaderIsrAndControllerEpoch(zkState, currentControllerEpoch)`. ZooKeeper keeps the epoch of
the controller that last wrote it; a later failover reloads that older epoch
(`initializeControllerContext`), and `waitForPartitionState(tp, ctrlEpoch, ...)` observes
the ZK value (`ControllerIntegrationTest.testTopicIdUpgradeAfterReassigningPartitions`: a
failover does not rewrite healthy partitions).
"""

from __future__ import annotations

from tests.helpers.core import Log, at, final, replay_log


def test_failover_with_dead_follower_outside_isr_keeps_zk_controller_epoch() -> None:
    log = Log()
    log.failover(0, [0, 1])  # epoch 1
    log.create("t", 0, [0, 1])
    log.isr("t", 0, [0], leader_epoch=0)  # written by controller epoch 1
    log.failure(1)  # 1 is outside the ISR: no write
    seq = log.failover(0, [0])  # epoch 2: 1 is Ineligible -> Offline, no write again
    log.failover(0, [0])  # epoch 3: reloads ZK
    last = log.seq
    _, out = replay_log(log)
    # ZK was last written at controller epoch 1.
    assert final(out, "t", 0) == ("OnlinePartition", 0, (0,), 0, 1, 1)
    # The epoch-2 controller first sends the state it reloaded from ZK (1, replica startup
    # OnlineReplica), then its OfflineReplica step re-stamps the cache (2) ...
    assert [r.state_controller_epoch for r in at(out.leader_and_isr, seq)] == [1, 2]
    # ... but the epoch-3 controller reloaded ZK: its replica-startup LAI (before its own
    # OfflineReplica step re-stamps the cache) carries 1.
    assert [r.state_controller_epoch for r in at(out.leader_and_isr, last)][0] == 1
