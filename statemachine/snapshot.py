"""`PartitionSnapshot`: a partition that existed before the log's first line.

A log excerpt of a cluster that is years old starts from a state, not from an empty cluster.
The controller itself starts that way: `KafkaController.onControllerFailover` reads every
assignment and leadership from ZooKeeper (`initializeControllerContext`,
`updateLeaderAndIsrCache`), then `ReplicaStateMachine.startup` puts the replicas on live
brokers in OnlineReplica and the others in OfflineReplica, and
`PartitionStateMachine.startup` (`initializePartitionState`, Kafka 3.7.1) puts a partition
whose leader is alive in OnlinePartition, one whose leader is not in OfflinePartition, and
one without a leadership znode in NewPartition.

A snapshot does exactly that for one partition the replay does not know yet, with the
liveness of the moment: no request is sent and no election is tried (the controller's own
`triggerOnlinePartitionStateChange` comes from the events that follow). A snapshot of a
partition already known is never applied: identical, it is a no-op; otherwise it is a
`snapshot_contradicts` finding listing the differences.
"""

from __future__ import annotations

from statemachine.context import ControllerContext
from statemachine.events import Event
from statemachine.model import Part, Topic
from statemachine.rows import APPLIED
from statemachine.states import PARTITION_NAMES, REPLICA_NAMES, PartitionState, ReplicaState

P = PartitionState
R = ReplicaState
REASON = "initialized from PartitionSnapshot"


def partition_snapshot(ctx: ControllerContext, e: Event) -> None:
    assert e.topic is not None and e.partition is not None and e.replicas is not None
    topic = ctx.topics.get(e.topic)
    part = topic.parts.get(e.partition) if topic is not None else None
    if part is not None and part.replicas:
        differences = snapshot_differences(part, e)
        if differences:
            ctx.finding(e.topic, e.partition, None, "snapshot_contradicts",
                        f"{e.topic}-{e.partition} is known with other values: "
                        + "; ".join(differences))
        return
    topic = ctx.topic(e.topic)
    if part is None:
        part = topic.parts[e.partition] = Part(e.partition, topic.name)
    if e.unclean_leader_election is not None:
        topic.unclean_leader_election_enable = e.unclean_leader_election
    ctx.set_assignment(topic, part, tuple(e.replicas))
    if e.leader is not None:
        _load_leadership(ctx, topic, part, e)
    _initialize_replicas(ctx, topic, part)
    _initialize_partition(ctx, topic, part, e.partition_state)


def _load_leadership(ctx: ControllerContext, topic: Topic, part: Part, e: Event) -> None:
    """`updateLeaderAndIsrCache`: the leadership znode as the controller caches it."""
    assert e.leader is not None
    part.has_leadership = True
    part.leader = e.leader
    part.leader_epoch = e.leader_epoch or 0
    part.isr = tuple(e.isr or ())
    part.zk_version = e.zk_version or 0
    part.controller_epoch = part.zk_controller_epoch = e.controller_epoch or 0
    part.recovering = False
    if e.leader >= 0:
        # A leader outside the assignment must still be found when its liveness changes.
        ctx.topics_by_broker.setdefault(e.leader, set()).add(topic.name)


def _initialize_replicas(ctx: ControllerContext, topic: Topic, part: Part) -> None:
    """`ReplicaStateMachine.startup`: OnlineReplica on a live broker, else OfflineReplica
    (up to 2.2, before KAFKA-3143, ReplicaDeletionIneligible: `initializeReplicaState`
    puts it there and nothing moves it on)."""
    dead = R.OfflineReplica if ctx.config.profile.failover_offline_transition \
        else R.ReplicaDeletionIneligible
    for r in part.replicas:
        state = R.OnlineReplica if r in ctx.live else dead
        part.replica_states[r] = state
        ctx.change(topic.name, part, r, "replica", REPLICA_NAMES[R.NonExistentReplica],
                   state.name, APPLIED, REASON)


def _initialize_partition(ctx: ControllerContext, topic: Topic, part: Part,
                          logged: str | None) -> None:
    """`PartitionStateMachine.initializePartitionState`; a state the source printed that
    Kafka's rule does not give is a finding (the rule wins: it is what the controller does
    with the same ZooKeeper data and liveness)."""
    if part.has_leadership:
        state = P.OnlinePartition if part.leader in ctx.live else P.OfflinePartition
    else:
        state = P.NewPartition
    part.partition_state = state
    ctx.change(topic.name, part, None, "partition", PARTITION_NAMES[P.NonExistentPartition],
               state.name, APPLIED, REASON)
    if logged is not None and logged != state.name:
        ctx.finding(topic.name, part.partition, None, "snapshot_state_differs",
                    f"the snapshot says {logged}; with leader "
                    f"{part.leader if part.has_leadership else 'none'} and live brokers "
                    f"{sorted(ctx.live)} the controller initializes {state.name}")


def snapshot_differences(part: Part, e: Event) -> list[str]:
    """What the snapshot `e` says that the known `part` contradicts (fields the snapshot
    leaves null are not compared; the ISR is compared as a set)."""
    out: list[str] = []
    assert e.replicas is not None
    if tuple(e.replicas) != part.replicas:
        out.append(f"replicas {list(e.replicas)} vs {list(part.replicas)}")
    if e.leader is None:
        return out
    if not part.has_leadership:
        out.append(f"leader {e.leader} vs no leadership")
        return out
    pairs = (("leader", e.leader, part.leader), ("leader_epoch", e.leader_epoch, part.leader_epoch),
             ("zk_version", e.zk_version, part.zk_version),
             ("controller_epoch", e.controller_epoch, part.zk_controller_epoch))
    out += [f"{name} {given} vs {known}" for name, given, known in pairs
            if given is not None and given != known]
    if e.isr is not None and set(e.isr) != set(part.isr):
        out.append(f"isr {sorted(e.isr)} vs {sorted(part.isr)}")
    return out
