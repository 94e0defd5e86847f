"""Release profiles: which Kafka release line the replay re-executes.

The core is written against Kafka 3.7.1. The ZooKeeper-mode controller of older release
lines differs in a few places; each difference is one named switch of `KafkaProfile`, read
where the code branches (the places marked "Version note"). Every switch is taken from the
controller source at the release tags; docs/core.md ("Version notes") has the table and
`tests/statemachine/test_profiles*.py` cite file and line at the tags for each.

`profile_for("2.0")` maps a release line ("X.Y", "X.Y.Z" accepted, the patch ignored) to the
nearest modelled profile; every line from 0.8 to 3.9 is supported. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from statemachine.frozen import rebuilt

DEFAULT_KAFKA_VERSION: Final = "3.7"
# Release lines a profile is offered for (0.8 .. 3.9).
_LINES: Final[dict[int, range]] = {0: range(8, 11 + 1), 1: range(0, 1 + 1), 2: range(0, 8 + 1),
                                   3: range(0, 9 + 1)}
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class KafkaProfile:
    """The behaviour switches of one modelled release line (True = the 3.7.1 behaviour)."""

    name: str  # the modelled line, e.g. "2.0"
    # Scala binary version of the release's default build (the hash order of its sets and
    # maps): the pre-2.13 collections up to the 2.x line, 2.13 from 3.0.
    scala_binary: str
    # KAFKA-6835 (2.1): enabling unclean.leader.election.enable on a topic triggers elections
    # of its leaderless partitions; before, only the broker-level setting did (the topic's
    # setting is read at the next election).
    topic_unclean_trigger: bool
    # KAFKA-6753 (2.1): the partitions of a topic being deleted move Offline and
    # NonExistentPartition when its deletion starts (`onTopicDeletion`); before, when it
    # completes (`completeDeleteTopic`).
    deletion_start_non_existent: bool
    # KAFKA-6753 (2.1): a controlled shutdown leaves the partitions of topics queued for
    # deletion alone; before, it moved their leadership and stopped their followers too.
    shutdown_skips_deleted_topics: bool
    # KAFKA-7482 (2.1): controlled-shutdown elections send the LeaderAndIsr to the
    # shutting-down broker too; before, only to live replicas that are not shutting down.
    shutdown_notifies_shutting_down: bool
    # KAFKA-5692 (2.2): a preferred election of a partition its preferred replica already
    # leads is not needed; before, it was elected again (a new leader epoch).
    preferred_skips_elected: bool
    # KIP-380 (KAFKA-7235, 2.2): the broker change handler finds bounced brokers (a newer
    # registration of a known id) and runs their failure and startup, updating liveness per
    # phase; before, it found only new and dead brokers and set the live brokers to ZK's
    # at once, so a bounce went unseen and dead brokers were gone already at the startup.
    broker_bounce: bool
    # KAFKA-8237 (2.3): OfflineReplica is a valid previous state of
    # ReplicaDeletionIneligible; before, only ReplicaDeletionStarted.
    ineligible_from_offline: bool
    # KAFKA-3143 (2.3): controller failover moves replicas on dead brokers to
    # OfflineReplica (shrinking ISRs, dropping dead leaders); before, they stay as ZK has them.
    failover_offline_transition: bool
    # KIP-455 (2.4): reassignment keeps adding/removing replicas in ZK and starts from the
    # origin replicas; before, ZK holds OAR + RAR and /admin/reassign_partitions the target,
    # and `maybeTriggerPartitionReassignment` ignores a target equal to the assignment and
    # forgets the reassignments of topics queued for deletion.
    kip455_reassignment: bool
    # KIP-570 (IBP 2.6): StopReplica (v3) carries each partition's leader epoch, and one
    # request per broker holds both kinds; before, v0-v2 carry none.
    stop_replica_leader_epoch: bool
    # KIP-497 (2.7): an ISR change reaches the controller as an AlterIsr request, which it
    # validates (leader epoch); before, the leader wrote ZK and the controller only
    # reloaded its cache on the IsrChangeNotification.
    alter_isr: bool
    # KIP-841 (3.3): AlterPartition also rejects an ahead epoch (NOT_CONTROLLER), a
    # leaderless partition and non-live ISR members (INELIGIBLE_REPLICA); before, an ahead
    # epoch is written as the request (or the leader's own write) carries it.
    alter_partition_kip841: bool
    # KIP-704 (IBP 3.2): an unclean election leaves the leader RECOVERING.
    leader_recovery_state: bool

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt(self)


def _profile(name: str, scala: str, since: tuple[int, int]) -> KafkaProfile:
    """The profile of the line `since`: every switch whose release is at or below it."""
    return KafkaProfile(
        name=name, scala_binary=scala,
        topic_unclean_trigger=since >= (2, 1),
        deletion_start_non_existent=since >= (2, 1),
        shutdown_skips_deleted_topics=since >= (2, 1),
        shutdown_notifies_shutting_down=since >= (2, 1),
        broker_bounce=since >= (2, 2),
        preferred_skips_elected=since >= (2, 2),
        ineligible_from_offline=since >= (2, 3),
        failover_offline_transition=since >= (2, 3),
        kip455_reassignment=since >= (2, 4),
        stop_replica_leader_epoch=since >= (2, 6),
        alter_isr=since >= (2, 7),
        alter_partition_kip841=since >= (3, 3),
        leader_recovery_state=since >= (3, 2),
    )


# The modelled profiles, by the first release line each stands for (newest first). A line
# maps to the newest profile at or below it; lines below 2.0 map to "2.0".
PROFILES: Final[tuple[tuple[tuple[int, int], KafkaProfile], ...]] = (
    ((3, 3), _profile("3.7", "2.13", (3, 3))),
    ((3, 2), _profile("3.2", "2.13", (3, 2))),
    ((3, 0), _profile("3.1", "2.13", (3, 0))),
    ((2, 7), _profile("2.8", "2.12", (2, 7))),
    ((2, 6), _profile("2.6", "2.12", (2, 6))),
    ((2, 4), _profile("2.5", "2.12", (2, 4))),
    ((2, 3), _profile("2.3", "2.12", (2, 3))),
    ((2, 2), _profile("2.2", "2.12", (2, 2))),
    ((2, 1), _profile("2.1", "2.12", (2, 1))),
    ((0, 0), _profile("2.0", "2.12", (2, 0))),
)


def parse_version(version: str) -> tuple[int, int]:
    """(major, minor) of "X.Y" or "X.Y.Z"; ValueError when malformed or not supported."""
    m = _VERSION.fullmatch(version.strip())
    if m is None:
        raise ValueError(f"malformed Kafka version {version!r}: expected X.Y, e.g. 2.0")
    major, minor = int(m.group(1)), int(m.group(2))
    if minor not in _LINES.get(major, range(0)):
        raise ValueError(f"unsupported Kafka version {version!r}: supported are the release "
                         "lines 0.8 to 3.9")
    return major, minor


@lru_cache(maxsize=64)
def profile_for(version: str) -> KafkaProfile:
    """The modelled profile nearest to release line `version` (ValueError when malformed
    or unsupported)."""
    line = parse_version(version)
    for since, profile in PROFILES:
        if line >= since:
            return profile
    raise AssertionError("unreachable: PROFILES ends at (0, 0)")


def supported_lines() -> list[str]:
    """Every release line `profile_for` accepts, oldest first."""
    return [f"{major}.{minor}" for major, minors in sorted(_LINES.items()) for minor in minors]
