"""The fold pauses Python's cyclic collector (it only rescanned the live heap, 40% of the
time); that is safe only because the fold creates no reference cycles. Check it."""

from __future__ import annotations

import gc

from statemachine.cluster import build_timeline
from statemachine.events import Event
from statemachine.replay import replay


def _log() -> tuple[list[Event], list[Event]]:
    cluster = [
        Event(1, None, "ControllerFailover", broker_id=0, brokers=(0, 1, 2)),
        Event(20, None, "ControlledShutdown", broker_id=1),
        Event(21, None, "BrokerFailure", broker_id=1),
        Event(30, None, "BrokerStartup", broker_id=1),
        Event(40, None, "ControllerFailover", broker_id=2, brokers=(0, 1, 2)),
    ]
    events = [Event(2 + p, None, "PartitionCreated", topic="t", partition=p,
                     replicas=(p % 3, (p + 1) % 3)) for p in range(6)]
    events += [
        Event(31, None, "IsrChanged", topic="t", partition=0, isr=(0, 1)),
        Event(32, None, "ReassignmentRequested", topic="t", partition=1, replicas=(2, 0)),
        Event(33, None, "IsrChanged", topic="t", partition=1, isr=(1, 2, 0)),
        Event(41, None, "TopicDeletionRequested", topic="t"),
    ]
    return cluster, events


def test_replay_leaves_no_reference_cycles() -> None:
    cluster, events = _log()
    timeline = build_timeline(cluster)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        state, out = replay(None, events, timeline)
        assert out.leader_and_isr and out.stop_replica  # the log exercised the batches
        del state, out
        assert gc.collect() == 0  # nothing the fold left behind needed the collector
    finally:
        if was_enabled:
            gc.enable()


def test_replay_restores_the_collector() -> None:
    cluster, events = _log()
    assert gc.isenabled()
    replay(None, events, build_timeline(cluster))
    assert gc.isenabled()
