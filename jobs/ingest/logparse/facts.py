"""A fact: what one log record says, typed, before it is placed in the controller's order.

One record gives zero or more facts (a `New topics` line gives one per partition). Facts of
one record share its file and line; `assemble.py` turns them into events (the event-log
contract, docs/tables.md) and observed state changes. Kinds:

event facts     failover, failover_epoch, failover_brokers, failover_deletions (the topics
                queued for deletion it read, comma-joined in `detail`), failover_ready,
                broker_change,
                broker_up, broker_down, startup_callback, failure_callback,
                controlled_shutdown, new_partition, deletion_start, deletion_done,
                stop_replica_response, replica_deleted, reassign_start, reassign_update,
                isr_update, election_start, unclean_enabled, broker_change_failed
                (also kept as an observation: the BrokerChange handler threw),
                isr_notification (up to 2.6: its UpdateMetadata lines are the ISR changes)
observations    partition_transition, replica_transition, isr_shrink, leader_elected,
                leader_epoch_updated, reassignment_leader, leader_and_isr_request,
                leader_and_isr_summary, update_metadata_request, update_metadata_summary,
                stop_replica_request, stop_replica_summary, broker_leader_and_isr,
                broker_metadata, broker_transition, broker_leader_start,
                broker_follower_start, replica_snapshot, partition_snapshot,
                live_brokers (the registered brokers a BrokerChange line lists)
"""

from __future__ import annotations

from typing import NamedTuple

from jobs.ingest.logparse.values import Ints

EVENT_KINDS = frozenset({
    "failover", "failover_epoch", "failover_brokers", "failover_deletions", "failover_ready",
    "broker_change",
    "broker_up", "broker_down", "startup_callback", "failure_callback", "controlled_shutdown",
    "new_partition", "deletion_start", "deletion_done", "stop_replica_response",
    "replica_deleted", "reassign_start", "reassign_update", "isr_update", "election_start",
    "unclean_enabled", "broker_change_failed", "isr_notification",
})
# Observations a broker writes about a request it received (old versions have no
# `[Broker id=B]` prefix, so the kind says who wrote the line).
BROKER_SIDE_KINDS = frozenset({
    "broker_leader_and_isr", "broker_metadata", "broker_transition", "broker_leader_start",
    "broker_follower_start",
})
# Event facts that are also worth keeping as observations of state.
OBSERVED_EVENT_KINDS = frozenset({"isr_update", "failover_brokers", "broker_change_failed"})


class Fact(NamedTuple):
    kind: str
    topic: str | None = None
    partition: int | None = None
    broker_id: int | None = None
    from_state: str | None = None
    to_state: str | None = None
    leader: int | None = None
    leader_epoch: int | None = None
    isr: Ints | None = None
    zk_version: int | None = None
    replicas: Ints | None = None
    brokers: Ints | None = None
    controller_id: int | None = None
    controller_epoch: int | None = None
    # Of a transition (and of a failed preferred election or BrokerChange handler):
    # `statemachine.rows.APPLIED`, `REJECTED` or `FAILED`; None for the other kinds.
    outcome: str | None = None
    error: str | None = None
    detail: str | None = None


class Located(NamedTuple):
    """A fact with where and when it was logged."""

    file: str
    line: int  # 1-based line of the record's first line in `file`
    ts: int | None  # epoch microseconds (UTC) as logged; None: the line has no timestamp
    observed_by: str  # controller | broker
    fact: Fact
