"""Release profiles (`statemachine/profiles.py`): each rule replayed under the release line
before and after the change, with the controller source at the tags of apache/kafka cited
(`git show TAG:core/src/main/scala/kafka/controller/FILE`)."""

from __future__ import annotations

from dataclasses import fields

import pytest

from statemachine.context import ReplayConfig
from statemachine.profiles import PROFILES, KafkaProfile, profile_for, supported_lines
from tests.helpers.core import (
    Log,
    at,
    final,
    kinds,
    pstate_row,
    replay_log,
    replica_states_of,
)

A, B, C = 1, 2, 3


def _cfg(version: str) -> ReplayConfig:
    return ReplayConfig(kafka_version=version, scala_binary=profile_for(version).scala_binary)


# -- the mapping ---------------------------------------------------------------------------


@pytest.mark.parametrize(("version", "profile"), [
    ("0.8", "2.0"), ("0.11", "2.0"), ("1.1", "2.0"), ("2.0", "2.0"), ("2.0.1", "2.0"),
    ("2.1", "2.1"), ("2.1.1", "2.1"), ("2.2", "2.2"), ("2.3", "2.3"), ("2.4", "2.5"),
    ("2.5", "2.5"), ("2.6", "2.6"),
    ("2.7", "2.8"), ("2.8", "2.8"), ("3.0", "3.1"), ("3.1", "3.1"), ("3.2", "3.2"),
    ("3.3", "3.7"), ("3.7", "3.7"), ("3.7.1", "3.7"), ("3.9", "3.7"),
])
def test_every_line_maps_to_its_nearest_modelled_profile(version: str, profile: str) -> None:
    assert profile_for(version).name == profile


def test_every_supported_line_has_a_profile_and_the_modelled_names_are_lines() -> None:
    lines = supported_lines()
    assert lines[0] == "0.8" and lines[-1] == "3.9" and len(lines) == 4 + 2 + 9 + 10
    assert {profile_for(v).name for v in lines} == {p.name for _, p in PROFILES}
    assert all(profile_for(p.name) == p for _, p in PROFILES)


@pytest.mark.parametrize("bad", ["", "2", "two.zero", "2.0.x", "4.0", "0.7", "2.9", "1.2",
                                 "3.10", " 2.0 beta"])
def test_malformed_or_unsupported_versions_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError, match="Kafka version"):
        profile_for(bad)


def test_scala_binary_is_pre_2_13_up_to_the_2_x_line_and_2_13_from_3_0() -> None:
    """gradle.properties `scalaVersion` at 2.4.1 is 2.12.10, at 3.0.2 2.13.6; the 2.x line
    shipped 2.12 builds throughout (2.10/2.11 before 2.2 share the pre-2.13 collections)."""
    assert {profile_for(v).scala_binary for v in ("1.1", "2.0", "2.4", "2.8")} == {"2.12"}
    assert {profile_for(v).scala_binary for v in ("3.0", "3.2", "3.7", "3.9")} == {"2.13"}


def test_the_default_config_is_the_3_7_profile() -> None:
    """Every switch is True at 3.7 (the baseline), and every older profile has some off."""
    assert ReplayConfig().profile == profile_for("3.7")
    # A string under postponed annotations; the type itself when compiled by mypyc.
    switches = [f.name for f in fields(KafkaProfile) if f.type in ("bool", bool)]
    assert len(switches) >= 10
    assert all(getattr(profile_for("3.7"), name) for name in switches)
    for _, profile in PROFILES[1:]:
        assert not all(getattr(profile, name) for name in switches), profile.name


# -- failover: OfflineReplica for dead replicas (KAFKA-3143) ---------------------------------


def _failover_log() -> Log:
    """Brokers A, B, C; controller B; a topic on A and B; A stops, then B (the controller):
    C takes over with only itself live."""
    log = Log()
    log.failover(B, [A, B, C])
    log.create("t", 0, [A, B])
    log.failure(A)
    log.failover(C, [C])
    return log


def test_failover_before_2_3_leaves_the_dead_leader_in_place() -> None:
    """ReplicaStateMachine.scala at 2.0.0, lines 62-68: `startup` moves only
    `allLiveReplicas` to OnlineReplica (line 66); the dead replicas stay
    ReplicaDeletionIneligible from `initializeReplicaState` (line 93) and nobody removes B
    from leader and ISR. The offline election (live {C}) fails."""
    _, out = replay_log(_failover_log(), _cfg("2.0"))
    row = pstate_row(out, "t", 0)
    assert (row.state, row.leader, row.isr) == ("OfflinePartition", B, (B,))
    assert replica_states_of(out, "t", 0) == {A: "ReplicaDeletionIneligible",
                                              B: "ReplicaDeletionIneligible"}


def test_failover_from_2_3_moves_dead_replicas_offline() -> None:
    """ReplicaStateMachine.scala at 2.3.0, lines 39-42 (and 2.4.0, same lines): `startup`
    also runs `handleStateChanges(offlineReplicas, OfflineReplica)`, whose
    `removeReplicasFromIsr` drops the dead leader B (leader -1) and keeps the last ISR
    member."""
    for version in ("2.3", "3.7"):
        _, out = replay_log(_failover_log(), _cfg(version))
        row = pstate_row(out, "t", 0)
        assert (row.state, row.leader, row.isr) == ("OfflinePartition", -1, (B,)), version
        assert replica_states_of(out, "t", 0) == {A: "OfflineReplica", B: "OfflineReplica"}


# -- ReplicaDeletionIneligible's previous states (KAFKA-8237) -------------------------------


def _delete_with_dead_replica() -> Log:
    log = Log()
    log.failover(0, [0, A, B])
    log.create("t", 0, [A, B])
    log.failure(B)
    log.delete("t")
    return log


def test_ineligible_only_from_deletion_started_before_2_3() -> None:
    """ReplicaStateMachine.scala at 2.2.0, line 440: ReplicaDeletionIneligible's
    validPreviousStates is Set(ReplicaDeletionStarted); TopicDeletionManager's move of the
    dead replica (OfflineReplica) is an invalid transition, the replica stays Offline."""
    _, out = replay_log(_delete_with_dead_replica(), _cfg("2.2"))
    assert "invalid_transition" in kinds(out)
    assert replica_states_of(out, "t", 0)[B] == "OfflineReplica"


def test_ineligible_from_offline_from_2_3() -> None:
    """ReplicaStateMachine.scala at 2.3.0, line 433: Set(OfflineReplica,
    ReplicaDeletionStarted)."""
    _, out = replay_log(_delete_with_dead_replica(), _cfg("2.3"))
    assert "invalid_transition" not in kinds(out)
    assert replica_states_of(out, "t", 0)[B] == "ReplicaDeletionIneligible"


# -- controlled shutdown recipients (KAFKA-7482) --------------------------------------------


def _shutdown_log() -> tuple[Log, int]:
    log = Log()
    log.failover(0, [A, B, C])
    log.create("t", 0, [A, B, C])
    return log, log.controlled_shutdown(A)


def test_controlled_shutdown_before_2_1_does_not_notify_the_shutting_down_broker() -> None:
    """PartitionStateMachine.scala at 2.0.0, lines 405-411: `leaderForControlledShutdown`
    elects among `isReplicaOnline` replicas (shutting-down brokers excluded) and returns
    them as the recipients."""
    log, seq = _shutdown_log()
    _, out = replay_log(log, _cfg("2.0"))
    sent = at(out.leader_and_isr, seq)
    assert sorted({r.broker_id for r in sent if r.leader == B}) == [B, C]
    assert final(out, "t", 0)[1:3] == (B, (B, C))


def test_controlled_shutdown_from_2_1_notifies_the_shutting_down_broker() -> None:
    """PartitionStateMachine.scala at 2.1.0, lines 444-449: the candidates and recipients
    are `isReplicaOnline(..., includeShuttingDownBrokers = true)`."""
    log, seq = _shutdown_log()
    _, out = replay_log(log, _cfg("2.1"))
    sent = at(out.leader_and_isr, seq)
    assert sorted({r.broker_id for r in sent if r.leader == B}) == [A, B, C]
    assert final(out, "t", 0)[1:3] == (B, (B, C))


# -- reassignment before KIP-455 (2.4) ------------------------------------------------------


def _reassign_log() -> tuple[Log, int]:
    log = Log()
    log.failover(0, [A, B, C, 4])
    log.create("t", 0, [A, B])
    return log, log.reassign("t", 0, [C, 4])


def test_reassignment_before_2_4_starts_with_isnew_false_to_oar_plus_rar() -> None:
    """KafkaController.scala at 2.0.0, lines 515-530: AR becomes (RAR ++ OAR) (step 1), one
    LeaderAndIsr with isNew=false goes to every replica of it (step 2,
    `updateLeaderEpochAndSendRequest`, line 800), then RAR - OAR move to NewReplica one by
    one (step 3), each with its own isNew=true LeaderAndIsr."""
    log, seq = _reassign_log()
    _, out = replay_log(log, _cfg("2.0"))
    sent = [(r.broker_id, r.is_new, r.replicas) for r in at(out.leader_and_isr, seq)]
    assert sent[:4] == [(C, False, (C, 4, A, B)), (4, False, (C, 4, A, B)),
                        (A, False, (C, 4, A, B)), (B, False, (C, 4, A, B))]
    assert sent[4:] == [(C, True, (C, 4, A, B)), (4, True, (C, 4, A, B))]
    # LeaderAndIsr v0-v1 (2.0.0 LeaderAndIsrRequest.java) has no adding/removing fields.
    assert {(r.adding_replicas, r.removing_replicas) for r in at(out.leader_and_isr, seq)} == {
        ((), ())}


def test_reassignment_from_2_4_sends_isnew_true_to_the_adding_replicas() -> None:
    """KafkaController.scala at 2.4.0, lines 615-629: `updateLeaderEpochAndSendRequest`
    sends to the origin replicas (isNew=false) and the adding ones (isNew=true) in one
    batch; the NewReplica move repeats isNew=true."""
    log, seq = _reassign_log()
    _, out = replay_log(log, _cfg("2.4"))
    sent = {(r.broker_id, r.is_new) for r in at(out.leader_and_isr, seq)}
    assert (C, False) not in sent and (C, True) in sent and (A, False) in sent
    assert {(r.adding_replicas, r.removing_replicas) for r in at(out.leader_and_isr, seq)} == {
        ((C, 4), (A, B))}


def test_reassignment_before_2_4_completes_with_the_twelve_steps() -> None:
    """KafkaController.scala at 2.0.0, lines 531-552: every RAR replica goes Online (step 5),
    the leader A, not in RAR, is re-elected from RAR (step 7), OAR - RAR are stopped and
    removed (steps 8-9), AR = RAR."""
    log, _ = _reassign_log()
    log.isr("t", 0, [A, B, C, 4])
    _, out = replay_log(log, _cfg("2.0"))
    row = pstate_row(out, "t", 0)
    assert (row.replicas, row.leader, row.adding_replicas, row.removing_replicas) == (
        (C, 4), C, (), ())
    assert replica_states_of(out, "t", 0) == {C: "OnlineReplica", 4: "OnlineReplica"}


def test_retarget_before_2_4_keeps_the_first_targets_until_completion() -> None:
    """KafkaController.scala at 2.0.0, line 521: a new znode target RAR2 extends AR to
    (RAR2 ++ AR), nothing is stopped; from 2.4 (`maybeBuildReassignment` starts from the
    origin) replica C, which left the target, is stopped at once."""
    for version, kept in (("2.0", True), ("2.4", False)):
        log = Log()
        log.failover(0, [A, B, C, 4])
        log.create("t", 0, [A, B])
        log.reassign("t", 0, [C])
        log.reassign("t", 0, [4])
        _, out = replay_log(log, _cfg(version))
        assert (C in pstate_row(out, "t", 0).replicas) is kept, version


# -- StopReplica leader epochs (KIP-570, IBP 2.6) -------------------------------------------


@pytest.mark.parametrize(("version", "epochs"), [("2.5", {None}), ("2.6", {0}), ("3.7", {0})])
def test_stop_replica_carries_leader_epochs_from_2_6(version: str, epochs: set[int | None]
                                                     ) -> None:
    """ControllerChannelManager.scala at 2.5.0, lines 396-401: a StopReplica entry is the
    replica and the delete flag only (v0-v2, lines 547-551); at 2.6.0, lines 400-413, each
    partition's leader epoch is added (v3 from IBP 2.6, line 548). A controlled shutdown
    of the follower C stops its replica (delete=false)."""
    log = Log()
    log.failover(0, [A, B, C])
    log.create("t", 0, [A, B, C])  # leader A, epoch 0
    seq = log.controlled_shutdown(C)
    _, out = replay_log(log, _cfg(version))
    sent = at(out.stop_replica, seq)
    # One from doControlledShutdown, one from the OfflineReplica transition.
    assert [(r.broker_id, r.delete_partition) for r in sent] == [(C, False), (C, False)]
    assert {r.leader_epoch for r in sent} == epochs


# -- ISR changes: ZK notification, AlterIsr (KIP-497), AlterPartition (KIP-841) -------------


def _isr_log(leader_epoch: int, isr: list[int]) -> Log:
    log = Log()
    log.failover(0, [A, B, C])
    log.create("t", 0, [A, B, C])
    log.failure(C)  # epoch 1, ISR [A, B]
    log.isr("t", 0, isr, leader_epoch=leader_epoch)
    return log


@pytest.mark.parametrize(("version", "accepted"), [("2.6", True), ("2.7", False),
                                                    ("3.2", False), ("3.7", False)])
def test_stale_leader_epoch(version: str, accepted: bool) -> None:
    """KafkaController.scala at 2.6.0, lines 1676-1690: `processIsrChangeNotification`
    reloads what the leader wrote to ZK and checks nothing; at 2.7.0, lines 2283-2285,
    AlterIsr fences `newLeaderAndIsr.leaderEpoch < current` (FENCED_LEADER_EPOCH)."""
    _, out = replay_log(_isr_log(0, [A]), _cfg(version))
    assert (final(out, "t", 0).isr == (A,)) is accepted
    assert ("alter_partition_rejected" in kinds(out)) is not accepted


@pytest.mark.parametrize(("version", "accepted"), [("2.0", True), ("2.8", True),
                                                    ("3.2", True), ("3.3", False)])
def test_ahead_epoch_and_dead_isr_member(version: str, accepted: bool) -> None:
    """KafkaController.scala at 3.3.1, lines 2338-2344 (an ahead epoch: NOT_CONTROLLER) and
    2376-2383 (non-live ISR members: INELIGIBLE_REPLICA, KIP-841); at 3.2.0, lines
    2366-2368, only a lower epoch is fenced."""
    for epoch, isr in ((5, [A]), (1, [A, B, C])):
        _, out = replay_log(_isr_log(epoch, isr), _cfg(version))
        assert (final(out, "t", 0).isr == tuple(isr)) is accepted, (epoch, isr)


@pytest.mark.parametrize("version", ["2.6", "2.7", "2.8", "3.1", "3.2"])
def test_an_ahead_leader_epoch_is_written_as_the_request_carries_it(version: str) -> None:
    """KafkaController.scala at 2.7.0, line 2208: the AlterIsr request becomes
    `new LeaderAndIsr(brokerId, partitionReq.leaderEpoch, newIsr, ...)`; lines 2283-2292
    fence only a lower epoch, and `zkClient.updateLeaderAndIsr` (line 2301) writes the
    request's epoch (3.2.0: line 2258, lines 2367-2376 and 2385, the same). Before 2.7
    the leader wrote its own epoch (Partition.scala at 2.6.0, lines 1196 and 1202) and
    the controller reloaded it. An ahead epoch with the same ISR is no echo
    (`equalsIgnoreZk` compares the epoch): it is written too."""
    for epoch, isr in ((5, [A]), (5, [A, B])):
        log = _isr_log(epoch, isr)
        _, out = replay_log(log, _cfg(version))
        assert final(out, "t", 0)[1:4] == (A, tuple(isr), 5), (epoch, isr)
        [write] = at(out.partition_state_writes, log.seq)
        assert (write.leader_epoch, write.cause) == (5, "isr_change")


def test_from_3_3_an_ahead_leader_epoch_is_refused_and_nothing_is_written() -> None:
    """KafkaController.scala at 3.3.1, lines 2339-2344: NOT_CONTROLLER for an ahead epoch."""
    log = _isr_log(5, [A, B])
    _, out = replay_log(log, _cfg("3.3"))
    assert final(out, "t", 0)[1:4] == (A, (A, B), 1)
    assert not at(out.partition_state_writes, log.seq)


def test_isr_change_before_2_7_keeps_the_stored_controller_epoch() -> None:
    """Before 2.7 the leader itself writes the ISR (the controller's cache reload writes
    nothing): the controller epoch stored with the state is not the current controller's."""
    log = _isr_log(1, [A])
    log.failover(B, [A, B])  # a new controller (epoch 2) ...
    log.isr("t", 0, [A, B], leader_epoch=1)  # ... then the leader grows the ISR
    _, old = replay_log(log, _cfg("2.6"))
    _, new = replay_log(log, _cfg("2.7"))
    assert final(old, "t", 0).controller_epoch == 1
    assert final(new, "t", 0).controller_epoch == 2


# -- leader recovery state (KIP-704, IBP 3.2) ----------------------------------------------


@pytest.mark.parametrize(("version", "state"), [("3.1", "RECOVERED"), ("3.2", "RECOVERING")])
def test_unclean_election_leader_recovery_state(version: str, state: str) -> None:
    """Election.scala at 3.2.0, line 46: an unclean election marks the partition RECOVERING
    when leader recovery is supported (IBP 3.2); at 3.1.0 there is no such state."""
    log = Log()
    log.failover(0, [A, B])
    log.create("t", 0, [A, B], unclean=True)
    log.isr("t", 0, [A], leader_epoch=0)
    log.failure(A)
    _, out = replay_log(log, _cfg(version))
    row = pstate_row(out, "t", 0)
    assert (row.leader, row.leader_recovery_state) == (B, state)
