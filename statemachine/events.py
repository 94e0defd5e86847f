"""The event the core folds: one row of the event log (the input contract in
docs/tables.md), as a NamedTuple."""

from __future__ import annotations

from typing import Any, NamedTuple

from statemachine.rows import Ints


class Event(NamedTuple):
    seq: int
    ts: Any  # passed through to every output row; read only for partition_windows.seconds
    event_type: str
    broker_id: int | None = None
    topic: str | None = None
    partition: int | None = None
    replicas: Ints | None = None
    isr: Ints | None = None
    leader_epoch: int | None = None
    brokers: Ints | None = None
    error: str | None = None
    unclean_leader_election: bool | None = None
    source: str | None = None
    # PartitionSnapshot only (null otherwise): leader (-1: none), znode version, controller
    # epoch of the leadership, and the partition state the source printed.
    leader: int | None = None
    zk_version: int | None = None
    controller_epoch: int | None = None
    partition_state: str | None = None
    # ControllerFailover only: the topics queued for deletion the new controller read from
    # ZooKeeper (`fetchTopicDeletionsInProgress`), null when the log does not say; and,
    # for the same event, `controller_epoch` is the epoch it was elected in, when logged.
    topics_to_be_deleted: tuple[str, ...] | None = None
