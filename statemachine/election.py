"""Kafka's four leader-election strategies as pure functions
(`PartitionLeaderElectionAlgorithms` in `Election.scala`, Kafka 3.7.1).

Each takes the assignment (ordered), the ISR (from the ZK read) and the liveness sets, and
returns an `Elected` or None when no leader can be chosen. Epoch bumps and writes are the
partition machine's business.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

from statemachine.rows import Ints


class Elected(NamedTuple):
    leader: int
    isr: Ints
    recipients: Ints  # brokers that get the LeaderAndIsr (dead ones are dropped at send)
    unclean: bool = False


def offline(
    assignment: Ints, isr: Ints, live: Collection[int], allow_unclean: bool,
    topic_unclean: bool,
) -> Elected | None:
    """`OfflinePartitionLeaderElectionStrategy(allowUnclean)`.

    `allow_unclean` is the strategy's flag (true only for an admin-triggered unclean
    election); `topic_unclean` is the topic's effective `unclean.leader.election.enable`,
    which Kafka reads when the flag is false and no ISR member is alive.
    """
    live_replicas = tuple(r for r in assignment if r in live)
    for r in live_replicas:
        if r in isr:
            return Elected(r, tuple(i for i in isr if i in live), live_replicas)
    live_isr = any(i in live for i in isr)
    unclean = not live_isr and (allow_unclean or topic_unclean)
    if unclean and live_replicas:
        leader = live_replicas[0]
        return Elected(leader, (leader,), live_replicas, True)
    return None


def reassign(target: Ints, isr: Ints, live: Collection[int]) -> Elected | None:
    """`ReassignPartitionLeaderElectionStrategy`: first live target replica in the
    ISR; the ISR is unchanged; every target replica is a recipient, dead or not."""
    for r in target:
        if r in live and r in isr:
            return Elected(r, isr, target)
    return None


def preferred(assignment: Ints, isr: Ints, live: Collection[int]) -> Elected | None:
    """`PreferredReplicaPartitionLeaderElectionStrategy`: the head or nothing."""
    if assignment and assignment[0] in live and assignment[0] in isr:
        return Elected(assignment[0], isr, assignment)
    return None


def controlled_shutdown(
    assignment: Ints, isr: Ints, live_or_shutting_down: Collection[int],
    shutting_down: Collection[int],
) -> Elected | None:
    """`ControlledShutdownPartitionLeaderElectionStrategy`: the first ISR replica
    that is registered and not shutting down; the new ISR drops every shutting-down broker;
    recipients include the shutting-down broker (KAFKA-7482, 2.1+). Version note: before 2.1
    the caller passes the live brokers only (`partition_machine.controlled_shutdown_strategy`)."""
    candidates = tuple(r for r in assignment if r in live_or_shutting_down)
    for r in candidates:
        if r in isr and r not in shutting_down:
            return Elected(r, tuple(i for i in isr if i not in shutting_down), candidates)
    return None
