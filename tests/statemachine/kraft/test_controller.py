"""`ReplicationControlManager`'s broker operations re-executed on the image
(`statemachine.kraft.controller`, `statemachine.kraft.election`), against the records Kafka
3.7.0's controller writes, derived by hand in tests/helpers/kraft_history.py, and the rules
of each profile: unclean election, eligible leader replicas (KIP-966), the ISR-shrink
leader epoch bump of 3.3-3.5."""

from __future__ import annotations

from statemachine.kraft import records as K
from statemachine.kraft.controller import FENCE, SHUTDOWN, UNFENCE, Settings, operation
from statemachine.kraft.fold import KraftFold
from statemachine.kraft.profiles import kraft_profile_for
from statemachine.kraft.records import MetadataRecord
from tests.helpers.kraft_history import BRCR, fence_1, setup, topic_config, unfence_1

V37, V35, V40 = (kraft_profile_for(v) for v in ("3.7", "3.5", "4.0"))


def image_after(records: list[MetadataRecord]) -> KraftFold:
    f = KraftFold()
    f.feed(records)
    return f


def fields(records: list[MetadataRecord]) -> list[tuple[object, ...]]:
    return [(r.record_type, r.broker_id, r.partition, r.leader, r.isr, r.elr,
             r.last_known_elr, r.leader_recovery_state, r.fenced, r.in_controlled_shutdown)
            for r in records]


def test_a_fence_is_the_records_kafka_writes() -> None:
    written = operation(image_after(setup()).image, FENCE, 1, Settings(V37))
    assert fields(written) == fields(fence_1(20))


def test_an_unfence_is_the_records_kafka_writes() -> None:
    f = image_after([*setup(), *fence_1(20)])
    assert fields(operation(f.image, UNFENCE, 1, Settings(V37))) == fields(unfence_1(30, 1))


def test_fence_records_before_3_3_iv2_and_no_operation_twice() -> None:
    f = image_after(setup())
    old = operation(f.image, FENCE, 1, Settings(V37, registration_change=False))
    assert (old[-1].record_type, old[-1].broker_id, old[-1].broker_epoch) == \
        (K.FENCE_BROKER, 1, 10)
    f.feed(fence_1(20))
    assert operation(f.image, FENCE, 1, Settings(V37)) == []  # already fenced
    assert operation(f.image, UNFENCE, 9, Settings(V37)) == []  # never registered


def test_unclean_election_takes_the_first_acceptable_replica() -> None:
    """p2 [1, 3] has ISR [1]: with unclean.leader.election.enable, the fence of 1 elects 3
    from outside the ISR, which becomes the ISR alone, RECOVERING (`tryElection`)."""
    f = image_after([*setup(), *[r._replace(offset=20 + i, batch_base_offset=20) for i, r in
                                 enumerate(image_batch(topic_config(K.UNCLEAN, "true")))]])
    p2 = [r for r in operation(f.image, FENCE, 1, Settings(V37)) if r.partition == 2]
    assert fields(p2) == [(K.PARTITION_CHANGE, None, 2, 3, (3,), None, None, K.RECOVERING,
                           None, None)]
    # The variant's topic setting wins over the topic's own.
    p2 = [r for r in operation(f.image, FENCE, 1, Settings(V37, topic_unclean={"orders": False}))
          if r.partition == 2]
    assert [(r.leader, r.isr) for r in p2] == [(K.NO_LEADER, None)]
    # A cluster default does not win over the topic's own setting.
    assert operation(f.image, FENCE, 1, Settings(V37, unclean_default=False)) == \
        operation(f.image, FENCE, 1, Settings(V37))


def image_batch(*records: tuple[str, dict[str, object]]) -> list[MetadataRecord]:
    return [MetadataRecord(None, None, 1, 20 * 10**6, kind, **kw)  # type: ignore[arg-type]
            for kind, kw in records]


def test_3_5_names_the_leader_in_an_isr_shrink() -> None:
    """p1 [2, 1] led by 2 loses 1: on 3.3-3.5 the change names leader 2 (an epoch bump)."""
    written = operation(image_after(setup()).image, FENCE, 1, Settings(V35))
    assert [(r.partition, r.leader, r.isr) for r in written if r.partition == 1] == \
        [(1, 2, (2,))]


def test_eligible_leader_replicas_on_the_4_0_profile() -> None:
    """min.insync.replicas 2. p1 [2, 1] loses 1: ISR [2] is below it, so 1 joins the ELR
    (`maybePopulateTargetElr`); p2 [1, 3] loses its last ISR member 1: the ISR may be
    empty (ELR on), 1 is in the ELR and is the last known leader
    (`maybeUpdateLastKnownLeader`); no leader."""
    f = image_after(setup())
    written = operation(f.image, FENCE, 1, Settings(V40, elr=True))
    assert [(r.partition, r.leader, r.isr, r.elr, r.last_known_elr) for r in written
            if r.record_type == K.PARTITION_CHANGE] == [
        (0, 2, (2, 3), None, None), (1, K.NO_LEADER_CHANGE, (2,), (1,), None),
        (2, K.NO_LEADER, (), (1,), (1,))]
    f.feed([r._replace(offset=20 + i, batch_base_offset=20, batch_leader_epoch=1, ts=20)
            for i, r in enumerate(written)])
    # Broker 1 back: p2's ISR is empty and 1 is in its ELR: a clean election of 1, which
    # becomes the ISR and leaves the ELR (`tryElection`).
    back = operation(f.image, UNFENCE, 1, Settings(V40, elr=True))
    assert [(r.partition, r.leader, r.isr, r.elr) for r in back
            if r.record_type == K.PARTITION_CHANGE] == [(2, 1, (1,), ())]


def test_a_controlled_shutdown_is_the_registration_change_then_the_moves() -> None:
    written = operation(image_after(setup()).image, SHUTDOWN, 2, Settings(V37))
    assert fields(written) == [
        (BRCR, 2, None, None, None, None, None, None, None, True),
        (K.PARTITION_CHANGE, None, 0, K.NO_LEADER_CHANGE, (1, 3), None, None, None, None, None),
        (K.PARTITION_CHANGE, None, 1, 1, (1,), None, None, None, None, None),
    ]
