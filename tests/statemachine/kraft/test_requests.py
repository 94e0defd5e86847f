"""A KRaft what-if variant re-decides the log's reassignments, elections and
unregistrations on its own image (`statemachine.kraft.variant`, `statemachine.kraft.requests`).

Every history: quorum leader 3000; brokers 1-4 registered and unfenced (offsets 1-8);
topic `orders` (min.insync.replicas 2) created at offset 9 with p0 [1,2,3] led by 1, p1
[1,2,3] led by 2 (its preferred replica is 1), p2 [1,3,4] whose only ISR member is 1.
The log's later records are what Kafka 3.7.0's controller writes, derived by hand in each
test (`ReplicationControlManager.java`, `PartitionChangeBuilder.java`,
`PartitionReassignmentReplicas.java`, `PartitionReassignmentRevert.java`)."""

from __future__ import annotations

from typing import Any

from statemachine.kraft import records as K
from statemachine.kraft.controller import FENCE, UNFENCE, Settings
from statemachine.kraft.fold import fold
from statemachine.kraft.profiles import kraft_profile_for
from statemachine.kraft.records import MetadataRecord
from statemachine.kraft.variant import NO_LONGER_APPLIES, Edits, Injected, VariantFold, anchors_of
from tests.helpers.kraft_history import BRCR, batch, leader_change, part, pcr, topic_config

S = 10**6
V37 = kraft_profile_for("3.7")


def setup() -> list[MetadataRecord]:
    return [
        *leader_change(0, 1, 3000),
        *batch(1, 1, *[(K.REGISTER_BROKER, dict(broker_id=b, broker_epoch=9 + b, fenced=True))
                       for b in (1, 2, 3, 4)]),
        *batch(5, 1, *[(BRCR, dict(broker_id=b, broker_epoch=9 + b, fenced=False))
                       for b in (1, 2, 3, 4)]),
        *batch(9, 1, (K.TOPIC, dict(topic="orders", topic_id="orders-id")),
               topic_config(K.MIN_ISR, "2"),
               part(0, (1, 2, 3), (1, 2, 3), 1), part(1, (1, 2, 3), (1, 2, 3), 2),
               part(2, (1, 3, 4), (1,), 1)),
    ]


# `changePartitionReassignment` of p0 to [1, 2, 4] (`:2021-2053`): removing [3], adding
# [4], replicas [1, 2, 4, 3]; 4 is not in the ISR: no completion; leader 1 stays; the
# target replicas hold all of [1, 2, 3]: no leader epoch bump.
START = pcr(0, replicas=(1, 2, 4, 3), removing_replicas=(3,), adding_replicas=(4,))
# Leader 1's AlterPartition with ISR [1, 2, 3, 4] (`alterPartition`, `:1009-1139`):
# `maybeCompleteReassignment` (PartitionReassignmentReplicas.java `:98-134`) drops the
# removing 3: ISR [1, 2, 4], replicas [1, 2, 4]; 3 left the replicas: the leader named (a
# leader epoch bump, `triggerLeaderEpochBumpIfNeeded`).
COMPLETE = pcr(0, leader=1, isr=(1, 2, 4), replicas=(1, 2, 4), removing_replicas=(),
               adding_replicas=())
# `cancelPartitionReassignment` (`:1957-1991`): `PartitionReassignmentRevert` takes the
# adding 4 out: replicas [1, 2, 3], ISR unchanged; 4 left the replicas: leader 1 named.
CANCEL = pcr(0, leader=1, replicas=(1, 2, 3), removing_replicas=(), adding_replicas=())


def run(records: list[MetadataRecord], *ops: Injected, dropped: frozenset[int] = frozenset(),
        settings: Settings | None = None) -> tuple[Any, VariantFold]:
    v = VariantFold(Edits(ops, dropped), settings or Settings(V37), anchors_of(records, 1, V37),
                    1, V37)
    return v.run(records), v


def state(out: Any, p: int) -> tuple[Any, ...]:
    [s] = [s for s in out.partition_states if s.partition == p]
    return s.leader, s.isr, s.replicas, s.adding_replicas, s.removing_replicas


def late(out: Any) -> list[tuple[Any, ...]]:
    return [(f.partition, f.detail.split(" ", 4)[-1]) for f in out.findings
            if f.kind == NO_LONGER_APPLIES]


def test_a_variant_that_does_not_touch_the_partitions_writes_the_log_s_records() -> None:
    """Broker 4 fenced at 5 s is in no ISR and back at 15 s, before the log's reassignment
    (20-30 s) and preferred election of p1 (40 s): the variant has diverged, so each is
    re-decided, and each is the log's own record (edited 0): the partitions end as in the
    baseline, epochs included."""
    log = [*setup(), *batch(20, 1, START), *batch(30, 1, COMPLETE),
           *batch(40, 1, pcr(1, leader=1))]
    base = fold(log)
    assert state(base, 0) == (1, (1, 2, 4), (1, 2, 4), (), ())
    quiet, v = run(log, Injected(FENCE, 4, 5 * S), Injected(UNFENCE, 4, 15 * S))
    # The same rows but for the last seq: the variant's records come 2 offsets later.
    assert [s[:-1] for s in quiet.partition_states] == [s[:-1] for s in base.partition_states]
    assert v.counts.edited == 0 and not late(quiet)


def test_a_reassignment_onto_a_fenced_broker_starts_but_does_not_complete() -> None:
    """Broker 4 fenced at 10 s and held: the start is accepted (4 is registered), the same
    record as the log's; the leader's AlterPartition would not take the fenced 4 into the
    ISR (KIP-841), so the reassignment stays in progress: a finding, the ISR [1, 2, 3].
    With 4 back at 25 s the completion is the log's."""
    log = [*setup(), *batch(20, 1, START), *batch(30, 1, COMPLETE)]
    out, v = run(log, Injected(FENCE, 4, 10 * S))
    assert state(out, 0) == (1, (1, 2, 3), (1, 2, 4, 3), (4,), (3,))
    assert late(out) == [(0, "does not complete the reassignment: adding replica(s) [4] "
                             "not all in the variant's ISR")]
    assert v.counts.edited == 0
    back, v = run(log, Injected(FENCE, 4, 10 * S), Injected(UNFENCE, 4, 25 * S))
    assert state(back, 0) == state(fold(log), 0)
    assert not late(back)


def test_a_removal_that_completes_at_once_stays_in_progress_without_another_isr() -> None:
    """The log moves p0 off broker 3 ([1, 2, 3] -> [1, 2]): removing [3], replicas
    [1, 2, 3]; the ISR less 3 is [1, 2]: complete at once, replicas [1, 2], leader 1 named
    (3 left): `pcr(leader=1, isr=[1, 2], replicas=[1, 2])`. The variant fences 1 and 2 first:
    p0's ISR is [3], led by 3; the ISR less the removing 3 is empty, so the controller only
    starts it (`maybeCompleteReassignment` returns nothing): removing [3], leader 3 stays,
    the replicas unchanged, not written. The log's record is replaced (edited)."""
    log = [*setup(), *batch(20, 1, pcr(0, leader=1, isr=(1, 2), replicas=(1, 2)))]
    assert state(fold(log), 0) == (1, (1, 2), (1, 2), (), ())
    out, v = run(log, Injected(FENCE, 1, 10 * S), Injected(FENCE, 2, 11 * S))
    assert state(out, 0) == (3, (3,), (1, 2, 3), (), (3,))
    assert v.counts.edited == 1 and not late(out)


def test_a_cancel_keeps_the_variant_s_leader() -> None:
    """Broker 1 fenced at 10 s: p0's ISR [2, 3], led by 2. The log's start is the same
    record; its cancel reverts to [1, 2, 3] with the ISR [2, 3] (no adding replica in it)
    and names the variant's leader 2, not the log's 1: edited."""
    log = [*setup(), *batch(20, 1, START), *batch(30, 1, CANCEL)]
    assert state(fold(log), 0) == (1, (1, 2, 3), (1, 2, 3), (), ())
    out, v = run(log, Injected(FENCE, 1, 10 * S))
    assert state(out, 0) == (2, (2, 3), (1, 2, 3), (), ())
    assert v.counts.edited == 1 and not late(out)


def test_a_reassignment_the_variant_completed_at_once_is_not_cancelled_again() -> None:
    """The log moves p2 [1, 3, 4] off broker 1 at 20 s: its ISR [1] less the removing 1 is
    empty, so it only starts: replicas [3, 4, 1], removing [1]; at 30 s the operator
    cancels it: `PartitionReassignmentRevert` keeps [3, 4, 1] and the ISR [1], so only the
    removing list is written. The variant fences 1 at 10 s with unclean election on: p2 led
    by 3 alone (`electAnyLeader` UNCLEAN). The start then completes at once (the ISR less 1
    is [3]): replicas [3, 4], 1 left, the leader 3 named (edited); the log's cancel finds no
    reassignment in progress: not applied."""
    log = [*setup(), *batch(20, 1, pcr(2, replicas=(3, 4, 1), removing_replicas=(1,))),
           *batch(30, 1, pcr(2, removing_replicas=()))]
    assert state(fold(log), 2) == (1, (1,), (3, 4, 1), (), ())
    out, v = run(log, Injected(FENCE, 1, 10 * S),
                 settings=Settings(V37, topic_unclean={"orders": True}))
    assert state(out, 2) == (3, (3,), (3, 4), (), ())
    assert late(out) == [(2, "ends a reassignment not in progress in the variant")]
    assert v.counts.edited == 1


def test_a_preferred_election_needs_the_preferred_replica_in_the_variant_s_isr() -> None:
    """The log elects p1's preferred replica 1 at 40 s (`electLeader` PREFERRED,
    `:1470-1518`; `electPreferredLeader`, PartitionChangeBuilder.java `:234-261`). Broker 1
    fenced at 10 s and back at 15 s is active but out of p1's ISR [2, 3]: the current
    leader 2 stays valid, nothing is written: not applied (a finding). Broker 3 fenced
    instead leaves 1 in the ISR: applied as in the log."""
    log = [*setup(), *batch(40, 1, pcr(1, leader=1))]
    out, _ = run(log, Injected(FENCE, 1, 10 * S), Injected(UNFENCE, 1, 15 * S))
    assert state(out, 1)[:2] == (2, (2, 3))
    assert late(out) == [(1, "the preferred replica is not in the variant's ISR or not "
                             "active")]
    assert not [f for f in out.findings if f.kind == "unclean_leader_election"]
    applied, v = run(log, Injected(FENCE, 3, 10 * S))
    assert state(applied, 1)[:2] == (1, (1, 2))
    assert v.counts.edited == 0 and not late(applied)


def test_an_unclean_election_picks_the_variant_s_first_active_replica() -> None:
    """The log fences 1 at 20 s (p0 led by 2 with ISR [2, 3], p1's ISR [2, 3], p2 without a
    leader: `handleBrokerFenced`), then an unclean ElectLeaders of p2 at 25 s elects 3, the
    ISR [3], RECOVERING. The variant fences 3 at 10 s: the first active replica of
    [1, 3, 4] is 4 (`electAnyLeader` UNCLEAN): p2 led by 4, ISR [4] (edited, with the three
    changes of the log's fence of 1, re-decided); with 3 and 4 fenced there is none: not
    applied."""
    fence_1 = batch(20, 1, pcr(0, leader=2, isr=(2, 3)), pcr(1, isr=(2, 3)),
                    pcr(2, leader=-1), (BRCR, dict(broker_id=1, broker_epoch=10, fenced=True)))
    log = [*setup(), *fence_1,
           *batch(25, 1, pcr(2, leader=3, isr=(3,), leader_recovery_state=K.RECOVERING))]
    assert state(fold(log), 2)[:2] == (3, (3,))
    out, v = run(log, Injected(FENCE, 3, 10 * S))
    assert state(out, 2)[:2] == (4, (4,))
    [s] = [s for s in out.partition_states if s.partition == 2]
    assert s.leader_recovery_state == "RECOVERING"
    assert v.counts.edited == 4 and not late(out)
    none, _ = run(log, Injected(FENCE, 3, 10 * S), Injected(FENCE, 4, 11 * S))
    assert state(none, 2)[:2] == (-1, (1,))
    assert late(none) == [(2, "no eligible leader in the variant")]


def test_an_unregistration_is_re_decided_even_for_a_broker_held_fenced() -> None:
    """The log decommissions broker 3: its fence at 20 s (p0's ISR [1, 2]), then its
    `UnregisterBrokerRecord` at 30 s (`handleBrokerUnregistered`, `:1318-1325`: 3 is in no
    ISR any more, so the record alone). The variant fencing 3 at 10 s drops the log's fence
    but still unregisters 3. A variant that drops the log's fence (offset 21) has 3 active
    and in p0's ISR at 30 s: the unregistration takes it out first, as Kafka writes it."""
    log = [*setup(), *batch(20, 1, pcr(0, isr=(1, 2)),
                            (BRCR, dict(broker_id=3, broker_epoch=12, fenced=True))),
           *batch(30, 1, (K.UNREGISTER_BROKER, dict(broker_id=3, broker_epoch=12)))]
    out, v = run(log, Injected(FENCE, 3, 10 * S))
    assert 3 not in v.image.brokers and 3 not in v.dead
    assert state(out, 0)[:2] == (1, (1, 2))
    assert v.counts.dropped == 2
    kept, v = run(log, dropped=frozenset({21}))
    assert 3 not in v.image.brokers
    assert state(kept, 0)[:2] == (1, (1, 2))
    # The fence (20-21) is not folded; the re-decided change and unregistration are
    # written after the last record folded (13): offsets 14-15.
    [change] = [s for s in kept.partition_states if s.partition == 0]
    assert change.last_seq == 14


def test_without_an_edit_the_variant_is_the_log() -> None:
    """Nothing is re-decided before a variant's first edit: the reassignment, the
    elections and the decommission fold as the baseline does."""
    log = [*setup(), *batch(20, 1, START), *batch(30, 1, COMPLETE),
           *batch(40, 1, pcr(1, leader=1)),
           *batch(50, 1, pcr(0, isr=(1, 2)),
                  (BRCR, dict(broker_id=4, broker_epoch=13, fenced=True))),
           *batch(60, 1, (K.UNREGISTER_BROKER, dict(broker_id=4, broker_epoch=13)))]
    out, v = run(log)
    base = fold(log)
    assert (out.partition_states, out.partition_windows, out.findings) == \
        (base.partition_states, base.partition_windows, base.findings)
    assert (v.counts.edited, v.counts.dropped, v.counts.injected) == (0, 0, 0)
