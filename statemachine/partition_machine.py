"""`ZkPartitionStateMachine.handleStateChanges` for partitions of one topic (Kafka 3.7.1,
`PartitionStateMachine.scala`).

One call is one request batch. `OnlinePartition` initialises New partitions and runs the
given election strategy for Online/Offline ones; the result says which elections
succeeded (Kafka's Right) and which failed (Left).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from statemachine import election
from statemachine.context import ControllerContext
from statemachine.election import Elected
from statemachine.model import Part, Topic
from statemachine.requests import RequestBatch
from statemachine.states import PARTITION_NAMES, PARTITION_VALID_PREVIOUS, PartitionState

P = PartitionState
MACHINE = "partition"
NAMES = PARTITION_NAMES

# A strategy picks a leader for one partition given the controller's view.
Strategy = Callable[[ControllerContext, Topic, Part], "Elected | None"]


def offline_strategy(allow_unclean: bool) -> Strategy:
    def elect(ctx: ControllerContext, topic: Topic, part: Part) -> Elected | None:
        topic_unclean = topic.unclean_leader_election_enable
        if ctx.config.topic_unclean_leader_election_enable:
            forced = ctx.config.unclean_leader_election_override(topic.name)
            topic_unclean = topic_unclean if forced is None else forced
        if topic_unclean is None:
            topic_unclean = ctx.config.unclean_leader_election_enable
        return election.offline(part.replicas, part.isr, ctx.live, allow_unclean,
                                topic_unclean)
    return elect


def reassign_strategy(ctx: ControllerContext, topic: Topic, part: Part) -> Elected | None:
    return election.reassign(part.target_replicas, part.isr, ctx.live)


def preferred_strategy(ctx: ControllerContext, topic: Topic, part: Part) -> Elected | None:
    return election.preferred(part.replicas, part.isr, ctx.live)


def controlled_shutdown_strategy(ctx: ControllerContext, topic: Topic,
                                 part: Part) -> Elected | None:
    # Version note: before 2.1 (KAFKA-7482) the candidates, hence the recipients, are the
    # live replicas only: the shutting-down broker gets no LeaderAndIsr.
    registered = (ctx.live_or_shutting_down if ctx.config.profile.shutdown_notifies_shutting_down
                  else ctx.live)
    return election.controlled_shutdown(part.replicas, part.isr, registered, ctx.shutting_down)


def handle_partition_changes(
    ctx: ControllerContext, topic: Topic, parts: Sequence[Part], target: PartitionState,
    strategy: Strategy | None = None,
) -> dict[int, bool]:
    """Returns partition -> election succeeded, for the partitions that needed an
    election (initialisations and state-only moves are not in it, as in Kafka)."""
    results: dict[int, bool] = {}
    if not parts:
        return results
    batch = RequestBatch(ctx, topic)
    valid_previous = PARTITION_VALID_PREVIOUS[target]
    for part in parts:
        current = part.partition_state
        if current not in valid_previous:
            reason = (f"Partition {topic.name}-{part.partition} should be in one of "
                      f"{', '.join(s.name for s in sorted(valid_previous))} states before "
                      f"moving to {target.name} state. Instead it is in "
                      f"{PARTITION_NAMES[current]} state")
            ctx.change(topic.name, part, None, MACHINE, PARTITION_NAMES[current], target.name,
                       False, reason)
            ctx.finding(topic.name, part.partition, None, "invalid_transition", reason)
            continue
        if target != P.OnlinePartition:
            _set(ctx, topic, part, target)
        elif current == P.NewPartition:
            _initialize(ctx, topic, batch, part)
        else:
            if strategy is None:
                raise ValueError("OnlinePartition for an elected partition needs a strategy")
            results[part.partition] = _elect(ctx, topic, batch, part, strategy)
    batch.send()
    return results


def _set(ctx: ControllerContext, topic: Topic, part: Part, target: PartitionState,
         reason: str | None = None) -> None:
    ctx.change(topic.name, part, None, MACHINE, PARTITION_NAMES[part.partition_state],
               NAMES[target], True, reason)
    part.partition_state = target


def _fail(ctx: ControllerContext, topic: Topic, part: Part, kind: str, detail: str) -> None:
    ctx.change(topic.name, part, None, MACHINE, PARTITION_NAMES[part.partition_state],
               NAMES[P.OnlinePartition], True, f"failed: {detail}")
    ctx.finding(topic.name, part.partition, None, kind, detail)


def _initialize(ctx: ControllerContext, topic: Topic, batch: RequestBatch, part: Part) -> None:
    live = ctx.live
    live_replicas = tuple(r for r in part.replicas if r in live)
    if not live_replicas:
        _fail(ctx, topic, part, "no_live_replica",
              f"Failed to transition partition {topic.name}-{part.partition} to "
              "OnlinePartition: No assigned replica is alive")
        return
    part.has_leadership = True
    part.leader = live_replicas[0]
    part.isr = live_replicas
    part.leader_epoch = 0
    part.zk_version = 0
    part.written(ctx.epoch)
    part.recovering = False
    batch.add_leader_and_isr(live_replicas, part, is_new=True)
    _set(ctx, topic, part, P.OnlinePartition)


def _elect(ctx: ControllerContext, topic: Topic, batch: RequestBatch, part: Part,
           strategy: Strategy) -> bool:
    if not part.has_leadership:
        _fail(ctx, topic, part, "election_failed",
              f"LeaderAndIsr information doesn't exist for partition "
              f"{topic.name}-{part.partition}")
        return False
    elected = strategy(ctx, topic, part)
    if elected is None:
        _fail(ctx, topic, part, "election_failed",
              f"Failed to elect leader for partition {topic.name}-{part.partition}: "
              f"assignment {list(part.replicas)}, isr {list(part.isr)}, "
              f"live {sorted(r for r in part.replicas if r in ctx.live)}")
        return False
    part.leader = elected.leader
    part.isr = elected.isr
    part.leader_epoch += 1
    part.zk_version += 1
    part.written(ctx.epoch)
    if elected.unclean:
        # Version note: RECOVERING from IBP 3.2 (KIP-704); earlier versions keep RECOVERED.
        part.recovering = ctx.config.profile.leader_recovery_state
        ctx.finding(topic.name, part.partition, elected.leader, "unclean_leader_election",
                    f"{topic.name}-{part.partition} elected {elected.leader}, which was not "
                    "in the ISR; data may be lost")
    batch.add_leader_and_isr(elected.recipients, part, is_new=False)
    _set(ctx, topic, part, P.OnlinePartition)
    return True
