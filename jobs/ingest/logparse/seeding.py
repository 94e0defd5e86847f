"""PartitionSnapshot events from a failover block: the partitions a new controller found in
ZooKeeper that the excerpt never saw created.

`PartitionStateMachine.startup` ends with `Started partition state machine with initial
state -> Map(...)` (INFO up to 2.x, DEBUG from 2.2; `[t,0]` up to 0.11, `t-0` from 1.0):
every partition and its state after the failover's own elections. That line names no
replica and no leader, so the event takes them from what else the block logs: the
requests the failover sends (`Sending UpdateMetadata request ... for partition` up to 2.5, the
LeaderAndIsr requests of `ReplicaStateMachine.startup` and of the elections, TRACE on
state.change.logger, and the brokers' own `received LeaderAndIsr request` lines), the
latest per partition. The ordered assignment is in the request's `replicas=[..]` from 1.0
(and in the receiving broker's line in 0.10); up to 0.10 the controller side prints only
`(Leader:..,ISR:..,LeaderEpoch:..,ControllerEpoch:..)`. Only what the lines say is used:
a partition without a logged assignment, or Online/Offline without a logged leader, gets
no event (its state line stays an observation). The leadership's controller epoch is not
in those renderings reliably, so it is left null.

The events are emitted when the block closes (`Ready to serve as the new controller`, or
the next controller event), at that line: they then stand for the state after the
failover, which is what the state line prints.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jobs.ingest.logparse.facts import Fact
from jobs.ingest.logparse.values import Ints

SNAPSHOT_KIND = "partition_snapshot"
# Observations that carry a partition's leadership (and, from 1.0, its ordered replicas).
LEADERSHIP_KINDS = frozenset({
    "update_metadata_request", "leader_and_isr_request", "broker_leader_and_isr",
    "broker_metadata", "leader_elected",
})
NEW_PARTITION = "NewPartition"

Key = tuple[str, int]


@dataclass
class FailoverSnapshot:
    """What one failover block has said so far about each partition."""

    controller: int | None
    states: dict[Key, str] = field(default_factory=dict)
    leadership: dict[Key, Fact] = field(default_factory=dict)  # latest, with its ISR
    replicas: dict[Key, Ints] = field(default_factory=dict)  # latest ordered assignment

    def add(self, f: Fact) -> None:
        if f.topic is None or f.partition is None:
            return
        key = (f.topic, f.partition)
        if f.kind == SNAPSHOT_KIND:
            if f.to_state and f.controller_id in (None, self.controller):
                self.states[key] = f.to_state
            return
        if f.kind not in LEADERSHIP_KINDS:
            return
        if f.replicas:
            self.replicas[key] = f.replicas
        if f.leader is not None and f.isr is not None:
            self.leadership[key] = f
        elif f.leader is not None:
            # A new leader without its ISR (an old election line): what was known is stale.
            self.leadership.pop(key, None)

    def events(self, known: set[Key]) -> Iterator[dict[str, Any]]:
        """The PartitionSnapshot fields of each partition not in `known` that the block
        logged enough about, by topic and partition."""
        for key in sorted(self.states):
            replicas = self.replicas.get(key)
            if key in known or not replicas:
                continue
            state = self.states[key]
            lead = None if state == NEW_PARTITION else self.leadership.get(key)
            if lead is None and state != NEW_PARTITION:
                continue
            fields: dict[str, Any] = dict(topic=key[0], partition=key[1], replicas=replicas,
                                          partition_state=state)
            if lead is not None:
                fields.update(leader=lead.leader, isr=lead.isr, leader_epoch=lead.leader_epoch,
                              zk_version=lead.zk_version)
            yield fields
