"""What-if variants of a KRaft log (`statemachine.kraft.variant`), derived by hand on the
history of tests/helpers/kraft_history.py: brokers 1-3 up; `orders` (min.insync.replicas
2) with p0 [1,2,3] led by 1, p1 [2,1] led by 2, p2 [1,3] whose only ISR member is 1
(offsets 0-11, times 0-7 s); then the log's own fence of broker 1 (offsets 20-23, 20 s), a
new quorum leader (29), the unfence of 1 (30-31, 30 s) and p1's leader adding 1 back to its
ISR (40, 40 s)."""

from __future__ import annotations

from typing import Any

from statemachine import flows
from statemachine.kraft import records as K
from statemachine.kraft.controller import FENCE, UNFENCE, Settings
from statemachine.kraft.fold import fold
from statemachine.kraft.profiles import kraft_profile_for
from statemachine.kraft.records import MetadataRecord
from statemachine.kraft.variant import (
    NO_LONGER_APPLIES,
    Edits,
    Injected,
    VariantFold,
    anchors_of,
)
from tests.helpers.kraft_history import (
    FENCED,
    batch,
    fence_1,
    leader_change,
    pcr,
    setup,
    unfence_1,
)

S = 10**6
V37, V40 = kraft_profile_for("3.7"), kraft_profile_for("4.0")


def history() -> list[MetadataRecord]:
    return [*setup(), *fence_1(20), *leader_change(29, 2, 3001), *unfence_1(30, 2),
            *batch(40, 2, pcr(1, isr=(2, 1)))]


def run(records: list[MetadataRecord], *ops: Injected, settings: Settings | None = None,
        dropped: frozenset[int] = frozenset()) -> tuple[Any, VariantFold]:
    settings = settings or Settings(V37)
    v = VariantFold(Edits(ops, dropped), settings, anchors_of(records, 1, settings.profile),
                    1, settings.profile)
    return v.run(records), v


def offline(out: Any) -> list[tuple[Any, ...]]:
    return [(w.partition, w.start_seq, w.start_ts, w.end_seq, w.end_ts, w.cause_event,
             w.cause_broker) for w in out.partition_windows if w.kind == "offline"]


def leaders(out: Any) -> dict[int, tuple[int, tuple[int, ...]]]:
    return {s.partition: (s.leader, s.isr) for s in out.partition_states}


def test_the_finding_is_the_zookeeper_core_s() -> None:
    assert NO_LONGER_APPLIES == flows.NO_LONGER_APPLIES


def test_without_an_edit_the_variant_is_the_log() -> None:
    out, v = run(history())
    base = fold(history())
    assert (out.partition_windows, out.partition_states, out.findings) == \
        (base.partition_windows, base.partition_states, base.findings)
    assert (v.counts.dropped, v.counts.injected, v.counts.edited) == (0, 0, 0)


def test_broker_1_fenced_at_10s_and_held_dead() -> None:
    """The variant's fence of 1 is the records of `handleBrokerFenced` at offsets 12-15
    (after the last record folded, 11); p2 has no other ISR member: offline from its own
    record of the fence's batch (offset 14, 10 s) to the end. The log's fence of 1 (20-23)
    and its unfence with p2's
    election (30-31) are broker 1's own operations while it is dead: dropped. p1's ISR
    change at 40 names broker 1: it no longer applies."""
    out, v = run(history(), Injected(FENCE, 1, 10 * S))
    assert offline(out) == [(2, 14, 10 * S, None, None, FENCED, 1)]
    assert leaders(out) == {0: (2, (2, 3)), 1: (2, (2,)), 2: (-1, (1,))}
    assert (v.counts.dropped, v.counts.injected, v.counts.edited) == (6, 4, 0)
    [late] = [f for f in out.findings if f.kind == NO_LONGER_APPLIES]
    # The log's offset 40 comes after the 4 records the variant inserted: 44.
    assert (late.seq, late.partition) == (44, 1)


def test_broker_1_back_after_25s() -> None:
    """`for`: the unfence at 35 s (before the log's batch at 40 s) writes the unfence and
    p2's election of 1 (offsets 34-35: after the quorum leader change, 29 + 4 = 33): p2 is
    offline 25 s, from its own record of the fence (14) to its own election (35); the log's
    ISR change at 40 applies again (its leader 2 is in it)."""
    out, v = run(history(), Injected(FENCE, 1, 10 * S), Injected(UNFENCE, 1, 35 * S))
    assert offline(out) == [(2, 14, 10 * S, 35, 35 * S, FENCED, 1)]
    assert leaders(out) == {0: (2, (2, 3)), 1: (2, (2, 1)), 2: (1, (1,))}
    assert not [f for f in out.findings if f.kind == NO_LONGER_APPLIES]
    assert (v.counts.dropped, v.counts.injected) == (6, 6)


def test_the_log_s_own_fence_is_re_decided_on_the_variant_s_image() -> None:
    """Broker 3 fenced at 10 s: p0's ISR is [1, 2]. The log's fence of 1 at 20 s is then
    re-decided: p0's target ISR is [2] (the log wrote [2, 3]); p2 loses its leader as in
    the log, and the log's unfence of 1 at 30 s is re-decided too. Their partition changes
    (20-22 and 31) are replaced (edited); the re-decided
    records take the offsets after the last one folded (the variant's fence of 3, 12-13):
    the fence of 1 is at 17, p2's own record of it at 16, where its window opens."""
    out, v = run(history(), Injected(FENCE, 3, 10 * S))
    assert leaders(out)[0] == (2, (2,))
    assert [(p, start) for p, start, *_ in offline(out)] == [(2, 16)]
    assert (v.counts.edited, v.counts.dropped) == (4, 0)


def test_unclean_election_keeps_p2_online() -> None:
    out, _ = run(history(), Injected(FENCE, 1, 10 * S),
                 settings=Settings(V37, topic_unclean={"orders": True}))
    assert offline(out) == []
    assert leaders(out)[2] == (3, (3,))
    assert [f.partition for f in out.findings if f.kind == "unclean_leader_election"] == [2]


def test_eligible_leader_replicas_bring_p1_back_with_broker_2() -> None:
    """Broker 2 fenced at 10 s and back at 30 s, broker 1 fenced at 20 s, on the 4.0
    profile. With ELR: p1 [2, 1] keeps 2 in its ELR when its ISR shrinks to [1] below
    min.insync.replicas 2, so 2 back is a clean leader: p1 offline 20-30 s. Without:
    p1's ISR stays [1] and 2 is not in it: offline to the end."""
    ops = (Injected(FENCE, 2, 10 * S), Injected(FENCE, 1, 20 * S),
           Injected(UNFENCE, 2, 30 * S))
    with_elr, _ = run(setup(), *ops, settings=Settings(V40, elr=True))
    without, _ = run(setup(), *ops, settings=Settings(V40, elr=False))
    assert [(p, s, e) for p, _, s, _, e, *_ in offline(with_elr)] == [
        (1, 20 * S, 30 * S), (2, 20 * S, None)]
    assert [(p, s, e) for p, _, s, _, e, *_ in offline(without)] == [
        (1, 20 * S, None), (2, 20 * S, None)]
    assert leaders(with_elr)[1] == (2, (2,))


def test_a_dropped_record_and_a_partition_created_on_a_dead_broker() -> None:
    """Dropping the log's fence of 1 (offset 23) drops the operation: its partition
    changes (20-22) go with it, broker 1 stays up and leads p0 and p2, and the log's
    unfence of 1 (re-decided: 1 is not fenced) writes nothing, its election of 1 (31)
    replaced by nothing. A partition the log
    creates while the variant holds its first ISR member dead gets the active ones only
    (`createTopic`)."""
    created = batch(50, 2, (K.PARTITION, dict(topic_id="orders-id", partition=3,
                                             replicas=(3, 2), isr=(3, 2), leader=3,
                                             leader_epoch=0, partition_epoch=0)))
    out, v = run([*history(), *created], Injected(FENCE, 3, 45 * S))
    assert leaders(out)[3] == (2, (2,))
    assert v.counts.edited == 1
    dropped, v = run(history(), dropped=frozenset({23}))
    assert leaders(dropped) == {0: (1, (1, 2, 3)), 1: (2, (2, 1)), 2: (1, (1,))}
    assert offline(dropped) == []
    assert (v.counts.dropped, v.counts.edited, v.counts.injected) == (4, 1, 0)
