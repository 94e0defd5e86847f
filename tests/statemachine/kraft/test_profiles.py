"""KRaft release profiles (`statemachine.kraft.profiles`) and where the fold reads them:
records a line's controller never writes are `record_outside_profile` findings, and an
election from the eligible leader replicas (KIP-966) is clean. The ELR history is derived
by hand from `PartitionChangeBuilder` on the trunk of 2024-10 (the 4.0 line)."""

from __future__ import annotations

import pytest

from statemachine.kraft import records as K
from statemachine.kraft.fold import OUTSIDE_PROFILE, KraftOutputs, fold
from statemachine.kraft.profiles import PROFILES, kraft_profile_for
from statemachine.kraft.records import MetadataRecord
from tests.helpers.kraft_history import BRCR, UNFENCED, batch, fence_1, pcr, setup, states


@pytest.mark.parametrize(("version", "profile"), [
    ("3.3", "3.3"), ("3.5.2", "3.3"), ("3.6", "3.6"), ("3.7.1", "3.6"), ("3.9", "3.6"),
    ("4.0", "4.0"), ("4.1", "4.0"),
])
def test_release_lines_map_to_profiles(version: str, profile: str) -> None:
    assert kraft_profile_for(version) == PROFILES[profile]


@pytest.mark.parametrize("version", ["3.2", "2.8", "four", "3"])
def test_lines_without_a_kraft_profile_are_refused(version: str) -> None:
    with pytest.raises(ValueError, match="KRaft profiles cover 3.3|malformed"):
        kraft_profile_for(version)


def elr_history() -> list[MetadataRecord]:
    """ELR enabled, min.insync.replicas 2, the partitions of `setup`.

    Fence 1 (`handleBrokerFenced`, `ReplicationControlManager.java:1287-1304`). p0: ISR
    [2, 3], not below min ISR, so no ELR (`maybePopulateTargetElr` clears it, unchanged:
    not written), leader 2. p1: ISR [2] is below min ISR: the ELR takes the removed 1;
    leader 2 stays. p2: target ISR
    []; `maybePopulateTargetElr` (`PartitionChangeBuilder.java:539-570`) puts the old ISR
    {1} in the ELR, nothing in the last known ELR; `electAnyLeader` (`:261-289`) finds no
    valid leader (1 is the broker removed, 3 is in neither list) and
    `canElectLastKnownLeader` (`:291-320`) refuses with a non-empty ELR: leader -1; the
    record carries the ELR [1] (`maybeUpdateRecordElr`, `:509-537`), the empty ISR (allowed
    with ELR, `build`, `:431-471`) and, the partition becoming leaderless,
    lastKnownElr [1] (`maybeUpdateLastKnownLeader`, `:496-507`).

    Unfence 1 (`handleBrokerUnfenced`, `:1338-1350`): target ISR [], ELR {1}; 1 is valid
    (`isValidNewLeader`, `:322-326`: ISR empty, in the ELR, the broker added), so
    `tryElection` (`:328-361`) elects it from the ELR: ISR [1], ELR []; the last known ELR
    is cleared since the partition has a leader again."""
    return [*setup(), *batch(20, 1, pcr(0, leader=2, isr=(2, 3)), pcr(1, isr=(2,), elr=(1,)),
                             pcr(2, leader=-1, isr=(), elr=(1,), last_known_elr=(1,)),
                             (BRCR, dict(broker_id=1, broker_epoch=10, fenced=True))),
            *batch(30, 1, (BRCR, dict(broker_id=1, broker_epoch=10, fenced=False)),
                   pcr(2, leader=1, isr=(1,), elr=(), last_known_elr=()))]


def outside(out: KraftOutputs) -> list[int | None]:
    return [f.seq for f in out.findings if f.kind == OUTSIDE_PROFILE]


def test_elr_election_is_clean_on_4_0() -> None:
    out = fold(elr_history(), profile=PROFILES["4.0"])
    assert states(out)[2] == (2, "OnlinePartition", 1, 2, (1,), 2, 1, "RECOVERED")
    assert out.findings == []
    offline = [(w.partition, w.start_seq, w.end_seq, w.end_event)
               for w in out.partition_windows if w.kind == "offline"]
    # From p2's own record of the fence's batch (22) to its own election (31).
    assert offline == [(2, 22, 31, UNFENCED)]


def test_elr_in_a_3x_log_is_outside_the_profile() -> None:
    out = fold(elr_history(), profile=PROFILES["3.6"])
    assert outside(out) == [21, 22, 31]
    # Folded all the same: the image merges the lists alike.
    assert states(out)[2][:5] == (2, "OnlinePartition", 1, 2, (1,))
    clear = fold([*setup(), *batch(20, 1, (K.CLEAR_ELR, {}))], profile=PROFILES["3.6"])
    assert outside(clear) == [20]


def test_isr_shrink_without_epoch_bump_is_outside_3_3() -> None:
    """Up to 3.5 every ISR shrink names the leader (3.5.0
    `PartitionChangeBuilder.java:264-271`); the 3.7 fence of `fence_1` shrinks p1's ISR
    without one (offset 21)."""
    assert outside(fold([*setup(), *fence_1(20)], profile=PROFILES["3.3"])) == [21]
    assert outside(fold([*setup(), *fence_1(20)], profile=PROFILES["3.6"])) == []
    bumped = [*setup(), *batch(20, 1, pcr(1, leader=2, isr=(2,)))]
    assert outside(fold(bumped, profile=PROFILES["3.3"])) == []
