"""Kafka 3.7.1 `PartitionLeaderElectionAlgorithmsTest` against the pure election functions,
plus the strategy details of `Election.scala` (new ISR, recipients).
"""

from __future__ import annotations

from statemachine import election
from statemachine.partition_machine import handle_partition_changes, offline_strategy
from tests.helpers.core import P, add_part, kinds, make_ctx


def test_offline_partition_leader_election() -> None:
    """`testOfflinePartitionLeaderElection`."""
    e = election.offline((2, 4), (2, 4), {4}, allow_unclean=False, topic_unclean=False)
    assert e is not None
    assert (e.leader, e.isr, e.recipients, e.unclean) == (4, (4,), (4,), False)


def test_offline_last_isr_offline_unclean_disabled() -> None:
    """`testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionDisabled`."""
    assert election.offline((2, 4), (2,), {4}, allow_unclean=False, topic_unclean=False) is None


def test_unclean_meter_not_marked() -> None:
    """`testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionDisabled`'s
    meter count 0: a failed clean election records no unclean election."""
    ctx = make_ctx(live=[4])
    part = add_part(ctx, "t", 0, [2, 4], leader=-1, isr=[2], partition_state=P.OfflinePartition)
    handle_partition_changes(ctx, ctx.topics["t"], [part], P.OnlinePartition,
                             offline_strategy(False))
    assert "unclean_leader_election" not in kinds(ctx.out)
    assert part.partition_state == P.OfflinePartition


def test_offline_last_isr_offline_unclean_enabled() -> None:
    """`testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionEnabled`."""
    e = election.offline((2, 4), (2,), {4}, allow_unclean=True, topic_unclean=False)
    assert e is not None
    assert (e.leader, e.isr, e.unclean) == (4, (4,), True)
    # The topic setting (allowUnclean=false strategy) gives the same result.
    e2 = election.offline((2, 4), (2,), {4}, allow_unclean=False, topic_unclean=True)
    assert e2 is not None and (e2.leader, e2.isr, e2.unclean) == (4, (4,), True)


def test_unclean_meter_marked_once() -> None:
    """`testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionEnabled`'s
    meter count 1: one unclean election is one finding."""
    ctx = make_ctx(live=[4])
    part = add_part(ctx, "t", 0, [2, 4], leader=-1, isr=[2], partition_state=P.OfflinePartition)
    handle_partition_changes(ctx, ctx.topics["t"], [part], P.OnlinePartition,
                             offline_strategy(True))
    assert kinds(ctx.out).count("unclean_leader_election") == 1
    assert (part.leader, part.isr, part.recovering) == (4, (4,), True)


def test_reassign_partition_leader_election() -> None:
    """`testReassignPartitionLeaderElection`."""
    e = election.reassign((2, 4), (2, 4), {4})
    assert e is not None
    # ISR unchanged; every target replica is a recipient, dead or not.
    assert (e.leader, e.isr, e.recipients) == (4, (2, 4), (2, 4))


def test_reassign_with_no_live_isr() -> None:
    """`testReassignPartitionLeaderElectionWithNoLiveIsr`."""
    assert election.reassign((2, 4), (2,), set()) is None


def test_reassign_with_empty_isr() -> None:
    """`testReassignPartitionLeaderElectionWithEmptyIsr`."""
    assert election.reassign((2, 4), (), {2}) is None


def test_preferred_replica_election() -> None:
    """`testPreferredReplicaPartitionLeaderElection`."""
    e = election.preferred((2, 4), (2, 4), {2, 4})
    assert e is not None
    assert (e.leader, e.isr, e.recipients) == (2, (2, 4), (2, 4))


def test_preferred_replica_in_isr_not_live() -> None:
    """`testPreferredReplicaPartitionLeaderElectionPreferredReplicaInIsrNotLive`."""
    assert election.preferred((2, 4), (2,), set()) is None


def test_preferred_replica_not_in_isr_live() -> None:
    """`testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrLive`."""
    # No fallback to 4.
    assert election.preferred((2, 4), (4,), {2, 4}) is None


def test_preferred_replica_not_in_isr_not_live() -> None:
    """`testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrNotLive`."""
    assert election.preferred((2, 4), (), set()) is None


def test_controlled_shutdown_election() -> None:
    """`testControlledShutdownPartitionLeaderElection`."""
    e = election.controlled_shutdown((2, 4), (2, 4), {2, 4}, {2})
    assert e is not None
    # New ISR drops the shutting-down broker; recipients include it (KAFKA-7482).
    assert (e.leader, e.isr, e.recipients) == (4, (4,), (2, 4))


def test_controlled_shutdown_last_isr_shutting_down() -> None:
    """`testControlledShutdownPartitionLeaderElectionLastIsrShuttingDown`."""
    assert election.controlled_shutdown((2, 4), (2,), {2, 4}, {2}) is None


def test_controlled_shutdown_all_isr_simultaneously_shut_down() -> None:
    """`testControlledShutdownPartitionLeaderElectionAllIsrSimultaneouslyShutdown`."""
    assert election.controlled_shutdown((2, 4), (2, 4), {2, 4}, {2, 4}) is None


def test_offline_clean_isr_keeps_order_and_drops_dead() -> None:
    """`OfflinePartitionLeaderElectionStrategy`, clean case: new ISR = old ISR filtered by
    online, order kept; leader = first live replica in assignment order that is in the ISR;
    recipients = live replicas."""
    e = election.offline((3, 1, 2), (2, 3, 1), {1, 2}, allow_unclean=False,
                         topic_unclean=False)
    assert e is not None
    assert (e.leader, e.isr, e.recipients) == (1, (2, 1), (1, 2))
