"""`ReplicationControlManager`'s answers to the requests behind a log's partition changes
that no broker operation explains, re-executed on a what-if variant's image: a
reassignment started, changed or cancelled (`AlterPartitionReassignments`), a preferred or
unclean election (`ElectLeaders`, the auto leader balancer), and the leader's ISR
expansion that completes a reassignment (`AlterPartition`). Cited at 3.7.0
`ReplicationControlManager.java`:

* `changePartitionReassignment` (`:2021-2053`): the target replicas must all be registered
  brokers (`validateManualPartitionAssignment`, `:1776-1806`; a fenced broker is
  registered, so a reassignment onto one starts); the builder's target assignment is
  `PartitionReassignmentReplicas(current, target)` (3.7.0
  `PartitionReassignmentReplicas.java:55-64`): removing the current replicas not in the
  target, adding the target's not in the current ones (both ascending), replicas the
  target then the removing ones; a list left empty keeps the partition's own. An
  `ONLINE` election, the ISR the partition's: it completes at once when the adding
  replicas are already in the ISR;
* `cancelPartitionReassignment` (`:1957-1991`, `PartitionReassignmentRevert`): the
  replicas less the adding ones, the ISR less the adding ones; an ISR left empty becomes
  the first remaining replica, which needs the topic's unclean leader election (else the
  request is refused); `UNCLEAN` election when the topic allows it;
* `electLeader` (`:1470-1518`): nothing to do for a `PREFERRED` election when the first
  replica leads, nor for an `UNCLEAN` one when the partition has a leader; else the
  builder's election of that type, refused when it writes nothing. The auto leader
  balancer (`maybeBalancePartitionLeaders`, `:1615-1654`) is the same `PREFERRED` build;
* `alterPartition` (`:1009-1139`): the leader's new ISR as the target, `UNCLEAN` when the
  topic allows it; the builder completes the reassignment when the adding replicas are in
  it. A fenced broker or one in controlled shutdown is not an eligible ISR member
  (KIP-841, `validateAlterPartitionData`,
  `:1152-1256`, `ineligibleReplicasForIsr`): the variant's leader does not add it.

Leaders are acceptable when active (`LeaderAcceptor`, `ClusterControlManager.isActive`).
Pure.
"""

from __future__ import annotations

from typing import NamedTuple

from statemachine.kraft.controller import Settings, active, min_isr_for, unclean_for
from statemachine.kraft.election import Change, Rules, Target, build
from statemachine.kraft.image import KraftPart, MetadataImage
from statemachine.kraft.records import Ints


class Decision(NamedTuple):
    """The change the controller writes (None: nothing), or why it refuses the request."""

    change: Change | None = None
    refused: str | None = None


def _rules(image: MetadataImage, part: KraftPart, s: Settings, unclean: bool) -> Rules:
    return Rules(lambda r: active(image, r), unclean, s.elr, min_isr_for(image, part.topic, s),
                 s.profile.isr_shrink_bumps_leader_epoch)


def in_progress(part: KraftPart) -> bool:
    """`PartitionReassignmentReplicas.isReassignmentInProgress`."""
    return bool(part.adding or part.removing)


def reassign(image: MetadataImage, part: KraftPart, target: Ints, s: Settings) -> Decision:
    """`changePartitionReassignment` of `part` to the `target` replicas."""
    unknown = sorted(b for b in target if b not in image.brokers)
    if not target or unknown:
        return Decision(refused=f"reassigns to broker(s) {unknown} not registered in the "
                                "variant" if unknown else "reassigns to no replica")
    return Decision(build(part, part.isr, _rules(image, part, s, False),
                          reassignment(part, target)))


def reassignment(part: KraftPart, target: Ints) -> Target:
    """The builder's target assignment for a reassignment of `part` to `target`
    (`PartitionReassignmentReplicas(current, target)`; an empty list keeps the partition's)."""
    removing = tuple(sorted(set(part.replicas) - set(target)))
    adding = tuple(sorted(set(target) - set(part.replicas)))
    return Target(tuple(target) + removing, adding or part.adding, removing or part.removing)


def cancel(image: MetadataImage, part: KraftPart, s: Settings) -> Decision:
    """`cancelPartitionReassignment` of `part` (`PartitionReassignmentRevert`)."""
    if not in_progress(part):
        return Decision(refused="cancels a reassignment not in progress in the variant")
    replicas = tuple(r for r in part.replicas if r not in part.adding)
    isr = tuple(r for r in part.isr if r not in part.adding)
    unclean = unclean_for(image, part.topic, s)
    if not isr:
        if not replicas or not unclean:
            return Decision(refused="cancelling would need an unclean leader election")
        isr = replicas[:1]
    return Decision(build(part, isr, _rules(image, part, s, unclean), Target(replicas)))


def elect_leader(image: MetadataImage, part: KraftPart, preferred: bool,
                 s: Settings) -> Decision:
    """`electLeader` with `PREFERRED` (or the leader balancer) or `UNCLEAN`."""
    if preferred and part.replicas and part.leader == part.replicas[0]:
        return Decision(refused="the preferred replica already leads in the variant")
    if not preferred and part.leader >= 0:
        return Decision(refused=f"the partition has a leader ({part.leader}) in the variant")
    change = build(part, part.isr, _rules(image, part, s, not preferred), preferred=preferred)
    if change is None:
        return Decision(refused="no eligible leader in the variant" if not preferred else
                        "the preferred replica is not in the variant's ISR or not active")
    return Decision(change)


def alter_partition(image: MetadataImage, part: KraftPart, isr: Ints, s: Settings) -> Decision:
    """`alterPartition`: the leader's new ISR `isr` (members the variant would not admit
    left out by the caller)."""
    return Decision(build(part, isr, _rules(image, part, s, unclean_for(image, part.topic, s))))
