"""`PartitionChangeBuilder`: the partition change a KRaft controller writes when a broker
leaves or rejoins, re-executed for a what-if on the image (`statemachine.kraft.image`).

What the broker operations, the reassignments and the elections of a what-if use: a
target ISR and a target assignment (replicas, adding, removing), the leader election
(`Election.ONLINE`, `UNCLEAN` when the topic allows it or the operator asks, `PREFERRED`),
the eligible leader replicas (KIP-966) when enabled, the completion of a reassignment, and
the leader epoch bumps. Directories and unclean-shutdown replicas are not modelled. Cited
at 3.7.0 `PartitionChangeBuilder.java` (the trunk of 2024-10 has the same rules, only
moved: `electAnyLeader` `:262-290`, `isValidNewLeader` `:323-327`,
`tryElection` `:329-363`, `build` `:432-475`, `maybePopulateTargetElr` `:540-568`):

* `build` (`:427-474`): a reassignment completed first (`completeReassignmentIfNeeded`,
  `:406-425`, with `PartitionReassignmentReplicas.maybeCompleteReassignment`, 3.7.0
  `PartitionReassignmentReplicas.java:98-134`): when one is in progress, the target ISR
  less the removing replicas is not empty and holds every adding replica, the target
  replicas lose the removing ones, the ISR is that, and adding and removing empty;
* the target ELR (`maybePopulateTargetElr`, `:525-555`): with
  ELR enabled and a target ISR below the topic's effective min ISR, the current ISR and ELR
  less the target ISR (ascending, as Java's `HashSet` of small integers iterates), and the
  last known ELR the rest; at or above it, both empty;
* the election (`electAnyLeader`, `:263-291`): the current leader when still valid, else the
  first valid replica in assignment order, valid meaning in the target ISR (or, the target
  ISR empty, in the target ELR) and acceptable to the caller (`isValidNewLeader`,
  `:326-330`), the replicas in the target assignment's order; else the last known leader
  when the ISR and ELR are empty and ELR is enabled (`canElectLastKnownLeader`,
  `:293-324`, elected whether or not it is alive); else, with
  unclean election, the first acceptable replica, which becomes the whole ISR and
  RECOVERING (`tryElection`, `:332-366`); else no leader;
* a `PREFERRED` election (`electPreferredLeader`, `:234-261`): the first target replica
  when valid, else the current leader when valid, else the first other valid replica,
  else the last known leader as above (no unclean election);
* a leader from the ELR becomes the ISR alone and leaves the ELR (`tryElection`);
* without a leader change, a target assignment that drops a replica names the current
  leader, a leader epoch bump (`triggerLeaderEpochBumpIfNeeded`, `:392-404`), and so does
  an ISR shrink on 3.3-3.5 (3.5.0 `:264-271`);
* the ELR lists are emptied by an unclean election or with ELR off
  (`maybeUpdateRecordElr`, `:499-523`); the ISR is written when it changed and is not
  empty, or may be empty because ELR is on (`build`, `:446-453`); the last known leader is
  kept when the ISR empties (`maybeUpdateLastKnownLeader`, `:490-497`);
* the replicas, adding and removing lists are written when they changed
  (`setAssignmentChanges`, `:467-488`);
* a change with nothing in it is not written (`changeRecordIsNoOp`, `:52-63`).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from statemachine.kraft import records as K
from statemachine.kraft.image import KraftPart
from statemachine.kraft.records import Ints

NO_LEADER = K.NO_LEADER


class Rules(NamedTuple):
    """What the controller reads for one partition's change."""

    acceptable: Callable[[int], bool]  # `isAcceptableLeader`
    unclean: bool  # the topic's unclean.leader.election.enable
    elr: bool  # `ReplicationControlManager.isElrEnabled`
    min_isr: int  # `getTopicEffectiveMinIsr`
    bump_on_shrink: bool  # a 3.3-3.5 controller (profile `isr_shrink_bumps_leader_epoch`)


class Change(NamedTuple):
    """The fields of a `PartitionChangeRecord` (None: not in the record)."""

    leader: int = K.NO_LEADER_CHANGE
    isr: Ints | None = None
    elr: Ints | None = None
    last_known_elr: Ints | None = None
    leader_recovery_state: int | None = None
    replicas: Ints | None = None
    adding: Ints | None = None
    removing: Ints | None = None

    def is_noop(self) -> bool:
        return self == Change()


class Target(NamedTuple):
    """A target assignment (`setTargetReplicas` / `setTargetAdding` / `setTargetRemoving`)."""

    replicas: Ints
    adding: Ints = ()
    removing: Ints = ()


def assignment_of(part: KraftPart) -> Target:
    return Target(part.replicas, part.adding, part.removing)


def complete(target: Target, target_isr: Ints) -> tuple[Target, Ints]:
    """`PartitionReassignmentReplicas.maybeCompleteReassignment`: the assignment and ISR
    once the reassignment in progress completes, or both unchanged."""
    if not target.adding and not target.removing:
        return target, target_isr
    isr, replicas = target_isr, target.replicas
    if target.removing:
        isr = tuple(r for r in target_isr if r not in target.removing)
        replicas = tuple(r for r in target.replicas if r not in target.removing)
        if not isr or not replicas:
            return target, target_isr
    if any(r not in isr for r in target.adding):
        return target, target_isr
    return Target(replicas), isr


def _target_elr(part: KraftPart, target_isr: Ints, rules: Rules) -> tuple[Ints, Ints]:
    """`maybePopulateTargetElr`: the target ELR and last known ELR."""
    elr, last = part.elr, part.last_known_elr
    if not rules.elr:
        return elr, last
    if len(target_isr) >= rules.min_isr:
        return (), ()
    candidates = set(elr) | set(part.isr)
    new_elr = tuple(sorted(r for r in candidates if r not in target_isr))
    new_last = tuple(sorted(r for r in candidates | set(last)
                            if r not in target_isr and r not in new_elr))
    return new_elr, new_last


def elect(part: KraftPart, target_isr: Ints, target_elr: Ints, rules: Rules,
          replicas: Ints | None = None, preferred: bool = False) -> tuple[int, bool]:
    """`electAnyLeader`, or `electPreferredLeader` when `preferred`: (the leader, whether
    the election is unclean), among `replicas` (the target's; the partition's by default)."""
    replicas = part.replicas if replicas is None else replicas

    def valid(r: int) -> bool:
        return (r in target_isr or (not target_isr and r in target_elr)) \
            and rules.acceptable(r)

    if preferred and replicas and valid(replicas[0]):
        return replicas[0], False
    if valid(part.leader):
        return part.leader, False
    for r in replicas[1:] if preferred else replicas:
        if valid(r):
            return r, False
    if rules.elr and not target_elr and not target_isr and len(part.last_known_elr) == 1:
        return part.last_known_elr[0], True
    if rules.unclean and not preferred:
        for r in replicas:
            if rules.acceptable(r):
                return r, True
    return NO_LEADER, False


def build(part: KraftPart, target_isr: Ints, rules: Rules, target: Target | None = None,
          preferred: bool = False) -> Change | None:
    """The change `PartitionChangeBuilder.build` writes for `part` with `target_isr` and
    the `target` assignment (the partition's own by default), or None when there is none."""
    target, target_isr = complete(target or assignment_of(part), target_isr)
    target_elr, target_last = _target_elr(part, target_isr, rules)
    leader, unclean = elect(part, target_isr, target_elr, rules, target.replicas, preferred)
    record = Change()
    if leader != part.leader:
        if leader in target_elr:
            target_isr = (leader,)
            target_elr = tuple(r for r in target_elr if r != leader)
        record = record._replace(leader=leader)
        if unclean:
            record = record._replace(isr=(leader,))
            if not part.recovering:
                record = record._replace(leader_recovery_state=K.RECOVERING)
    if record.leader == K.NO_LEADER_CHANGE and (
            not set(part.replicas) <= set(target.replicas)
            or (rules.bump_on_shrink and not set(part.isr) <= set(target_isr))):
        record = record._replace(leader=part.leader)
    if record.isr is not None or not rules.elr:
        target_elr, target_last = (), ()
    if target_elr != part.elr:
        record = record._replace(elr=target_elr)
    if len(part.last_known_elr) == 1 and (
            record.leader == NO_LEADER
            or (record.leader == K.NO_LEADER_CHANGE and part.leader == NO_LEADER)):
        target_last = part.last_known_elr
    if target_last != part.last_known_elr:
        record = record._replace(last_known_elr=target_last)
    if record.isr is None and (target_isr or rules.elr) and target_isr != part.isr:
        record = record._replace(isr=target_isr)
    if (rules.elr and record.isr == () and
            (len(part.last_known_elr) != 1 or part.last_known_elr[0] != part.leader)):
        record = record._replace(last_known_elr=(part.leader,))
    if target.replicas and target.replicas != part.replicas:
        record = record._replace(replicas=target.replicas)
    if target.removing != part.removing:
        record = record._replace(removing=target.removing)
    if target.adding != part.adding:
        record = record._replace(adding=target.adding)
    return None if record.is_noop() else record
