# ruff: noqa: E501
"""One real-shaped line per extracting template family that the real excerpts and the version
fixtures do not already cover (state-change.log controller and broker side, controller.log):
the facts each yields, field by field."""

from __future__ import annotations

import pytest

from jobs.ingest.logparse import envelope, idents, patterns

FIELDS = ("kind", "topic", "partition", "broker_id", "from_state", "to_state", "leader",
          "leader_epoch", "isr", "zk_version", "brokers", "outcome", "controller_id",
          "controller_epoch", "detail")

CASES = [
    (
        '[2021-01-01 00:00:00,000] DEBUG [Controller id=1] ISR for partition t-0 updated to [1,2] and zkVersion updated to [5] (kafka.controller.KafkaController)',
        [('isr_update', 't', 0, None, None, None, None, None, (1, 2), 5, None, None, 1, None, None)],
    ),
    (
        '[2021-01-01 00:00:00,000] TRACE [Controller id=1 epoch=2] Sending StopReplica request StopReplicaPartitionState(partitionIndex=0, leaderEpoch=4, deletePartition=true) to broker 2 for partition t-0 (state.change.logger)',
        [('stop_replica_request', 't', 0, 2, None, None, None, 4, None, None, None, None, 1, 2, 'delete=true')],
    ),
    (
        '[2021-01-01 00:00:00,000] INFO [Controller id=1 epoch=2] Sending StopReplica request (delete = true) for 3 replicas to broker 2 (state.change.logger)',
        [('stop_replica_summary', None, None, 2, None, None, None, None, None, None, None, None, 1, 2, 'delete=true replicas=3')],
    ),
    (
        '[2021-01-01 00:00:00,000] INFO [Controller id=1 epoch=2] Sent LeaderAndIsr request (Leader:1,ISR:1,2,3,LeaderEpoch:3,ZkVersion:4,ControllerEpoch:2) with new replica assignment ReplicaAssignment(replicas=1,2,3, addingReplicas=3, removingReplicas=) to leader 1 for partition being reassigned t-0 (state.change.logger)',
        [('leader_and_isr_request', 't', 0, 1, None, None, 1, 3, (1, 2, 3), 4, None, None, 1, 2, 'reassignment')],
    ),
    (
        '[2019-01-01 00:00:00,000] DEBUG [Controller id=1] The stop replica request (delete = true) sent to broker 2 is StopReplicaRequestInfo([Topic=t,Partition=0,Replica=2],true),StopReplicaRequestInfo([Topic=t,Partition=1,Replica=2],true) (kafka.controller.ControllerBrokerRequestBatch)',
        [('stop_replica_request', 't', 0, 2, None, None, None, None, None, None, None, None, 1, None, 'delete=true'), ('stop_replica_request', 't', 1, 2, None, None, None, None, None, None, None, None, 1, None, 'delete=true')],
    ),
    (
        "[2016-01-01 00:00:00,000] WARN [OfflinePartitionLeaderSelector]: No broker in ISR is alive for [t,0]. Elect leader 3 from live brokers 3. There's potential data loss. (kafka.controller.OfflinePartitionLeaderSelector)",
        [('leader_elected', 't', 0, None, None, None, 3, None, None, None, (3,), None, None, None, 'unclean')],
    ),
    (
        '[2016-01-01 00:00:00,000] DEBUG [Partition state machine on Controller 0]: After leader election, leader cache is updated to Map([t,0] -> (Leader:1,ISR:1,4,5,LeaderEpoch:0,ControllerEpoch:1), [t,1] -> (Leader:4,ISR:4,LeaderEpoch:2,ControllerEpoch:1)) (kafka.controller.PartitionStateMachine)',
        [('leader_elected', 't', 0, None, None, None, 1, 0, (1, 4, 5), None, None, None, 0, 1, 'leader_cache'), ('leader_elected', 't', 1, None, None, None, 4, 2, (4,), None, None, None, 0, 1, 'leader_cache')],
    ),
    (
        '[2020-01-01 00:00:00,000] WARN [Controller id=1] Partition t-0 failed to complete preferred replica leader election to 2. Leader is still 1 (kafka.controller.KafkaController)',
        [('leader_elected', 't', 0, None, None, None, 1, None, None, None, None, 'failed', 1, None, 'preferred')],
    ),
    (
        '[2020-01-01 00:00:00,000] INFO [Controller id=1 epoch=3] Partition t-0 state changed to (Leader:2,ISR:2,LeaderEpoch:7,ControllerEpoch:3) after removing replica 1 from the ISR as part of transition to OfflineReplica (state.change.logger)',
        [('isr_shrink', 't', 0, 1, None, 'OfflineReplica', 2, 7, (2,), None, None, None, 1, 3, None)],
    ),
    (
        '[2015-01-01 00:00:00,000] TRACE Controller 1 epoch 1 sending become-leader LeaderAndIsr request (Leader:1,ISR:1,2,LeaderEpoch:0,ControllerEpoch:1) with correlationId 5 to broker 1 for partition [t,0] (state.change.logger)',
        [('leader_and_isr_request', 't', 0, 1, None, None, 1, 0, (1, 2), None, None, None, 1, 1, 'become-leader')],
    ),
    (
        '[2017-01-01 00:00:00,000] TRACE Controller 1 epoch 1 sending UpdateMetadata request (Leader:1,ISR:1,2,LeaderEpoch:0,ControllerEpoch:1) to brokers Set(1, 2) for partition [t,0] (state.change.logger)',
        [('update_metadata_request', 't', 0, None, None, None, 1, 0, (1, 2), None, (1, 2), None, 1, 1, None)],
    ),
    (
        '[2018-01-01 00:00:00,000] TRACE [Controller id=1 epoch=1] Changed partition t-0 from NewPartition to OnlinePartition with leader 1 (state.change.logger)',
        [('partition_transition', 't', 0, None, 'NewPartition', 'OnlinePartition', 1, None, None, None, None, 'applied', 1, 1, None)],
    ),
    (
        '[2018-01-01 00:00:00,000] ERROR [Controller id=1 epoch=1] Initiated state change for partition t-0 from OnlinePartition to NonExistentPartition failed (state.change.logger)',
        [('partition_transition', 't', 0, None, 'OnlinePartition', 'NonExistentPartition', None, None, None, None, None, 'failed', 1, 1, None)],
    ),
    (
        '[2015-01-01 00:00:00,000] ERROR Controller 1 epoch 1 initiated state change of replica 2 for partition [t,0] from OnlineReplica to ReplicaDeletionStarted failed (state.change.logger)',
        [('replica_transition', 't', 0, 2, 'OnlineReplica', 'ReplicaDeletionStarted', None, None, None, None, None, 'failed', 1, 1, None)],
    ),
    (
        '[2018-01-01 00:00:00,000] TRACE [Controller id=1 epoch=1] Elected leader 2 for Offline partition t-0 (state.change.logger)',
        [('leader_elected', 't', 0, None, None, None, 2, None, None, None, None, None, 1, 1, 'offline')],
    ),
    (
        '[2015-01-01 00:00:00,000] TRACE Controller 1 epoch 1 elected leader 2 for Offline partition [t,0] (state.change.logger)',
        [('leader_elected', 't', 0, None, None, None, 2, None, None, None, None, None, 1, 1, 'offline')],
    ),
    (
        '[2015-01-01 00:00:00,000] TRACE Controller 1 epoch 1 changed state of replica 2 for partition [t,0] from OnlineReplica to OfflineReplica (state.change.logger)',
        [('replica_transition', 't', 0, 2, 'OnlineReplica', 'OfflineReplica', None, None, None, None, None, 'applied', 1, 1, None)],
    ),
    (
        '[2015-01-01 00:00:00,000] TRACE Broker 2 handling LeaderAndIsr request correlationId 5 from controller 1 epoch 1 starting the become-leader transition for partition [t,0] (state.change.logger)',
        [('broker_transition', 't', 0, 2, None, None, 2, None, None, None, None, None, 1, 1, 'become-leader')],
    ),
    (
        '[2019-01-01 00:00:00,000] TRACE [Broker id=2] Handling LeaderAndIsr request correlationId 5 from controller 1 epoch 1 starting the become-follower transition for partition t-0 with leader 1 (state.change.logger)',
        [('broker_transition', 't', 0, 2, None, None, 1, None, None, None, None, None, 1, 1, 'become-follower')],
    ),
    (
        '[2019-01-01 00:00:00,000] INFO [Controller id=1] Starting topic deletion for topics t1,t2 (kafka.controller.KafkaController)',
        [('deletion_start', 't1', None, None, None, None, None, None, None, None, None, None, 1, None, None), ('deletion_start', 't2', None, None, None, None, None, None, None, None, None, None, 1, None, None)],
    ),
    (
        '[2019-01-01 00:00:00,000] INFO [Controller id=1] New partitions to be added Map(t-2 -> Vector(1, 2)) (kafka.controller.KafkaController)',
        [('new_partition', 't', 2, None, None, None, None, None, None, None, None, None, 1, None, 'add_partitions')],
    ),
    (
        '[2019-01-01 00:00:00,000] INFO [Controller id=1] Starting replica leader election (PREFERRED) for partitions t-0,t-1 triggered by AutoTriggered (kafka.controller.KafkaController)',
        [('election_start', 't', 0, None, None, None, None, None, None, None, None, None, 1, None, 'PREFERRED'), ('election_start', 't', 1, None, None, None, None, None, None, None, None, None, 1, None, 'PREFERRED')],
    ),
    (
        '[2019-01-01 00:00:00,000] INFO [Controller id=1] Leader 1 for partition t-0 being reassigned, is already in the new list of replicas 1,3 and is alive (kafka.controller.KafkaController)',
        [('reassignment_leader', 't', 0, None, None, None, 1, None, None, None, None, None, 1, None, 'in_target_alive')],
    ),
    (
        '[2019-01-01 00:00:00,000] INFO [Controller id=1] Updated leader epoch for partition t-0 to 5, zkVersion=7 (kafka.controller.KafkaController)',
        [('leader_epoch_updated', 't', 0, None, None, None, None, 5, None, 7, None, None, 1, None, None)],
    ),
    (
        '[2019-01-01 00:00:00,000] INFO [Controller id=1] Started replica state machine with initial state -> Map([Topic=t,Partition=0,Replica=1] -> OnlineReplica, [Topic=t,Partition=0,Replica=2] -> OfflineReplica) (kafka.controller.ZkReplicaStateMachine)',
        [('replica_snapshot', 't', 0, 1, None, 'OnlineReplica', None, None, None, None, None, None, 1, None, None), ('replica_snapshot', 't', 0, 2, None, 'OfflineReplica', None, None, None, None, None, None, 1, None, None)],
    ),
]


@pytest.mark.parametrize(("line", "expected"), CASES)
def test_template(line: str, expected: list[tuple[object, ...]]) -> None:
    env = envelope.split(line)
    assert env is not None
    ident, body = idents.strip(env.msg)
    facts = patterns.extract(body, ident)
    assert facts is not None
    assert [tuple(getattr(f, k) for k in FIELDS) for f in facts] == expected
