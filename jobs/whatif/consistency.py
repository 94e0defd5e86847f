"""A variant's failure kept consistent with the rest of the log.

A broker a variant fails stays dead until the variant restarts it (an injected
`BrokerStartup`, e.g. from `for`). The log, written by a cluster where the broker lived,
goes on as if it did; the events that contradict the variant are edited here, on the
driver, from the log's broker events (`ClusterFacts.broker_events`):

* the broker's own later `BrokerStartup`, `BrokerFailure` and `ControlledShutdown` are
  dropped while it is dead: its ZooKeeper registration (`/brokers/ids/<id>`) is gone, so
  the controller's `BrokerChange` never sees it come or go, and a `ControlledShutdown`
  request from it cannot arrive; so is its `StopReplicaResponse` (a dead broker answers
  no request);
* a later `ControllerFailover` reads the live brokers from ZooKeeper
  (`initializeControllerContext`): the dead broker leaves its `brokers`; when the log's
  new controller is the dead broker itself, another broker won the election (the
  lowest-numbered live one is taken; the `/controller` race has no other rule), and a
  failover with no live broker left is dropped.

What only the replay knows (the partition's leader when an `IsrChanged` arrives) is left to
the core: the variant's config names the brokers it holds dead
(`ReplayConfig.held_dead`), see `statemachine.flows`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jobs.whatif.facts import BROKER_OWN_EVENTS, ClusterFacts
from jobs.whatif.scenario import Drop
from schemas import event_types as ET
from statemachine.events import Event

FOREVER = 2**62


@dataclass(frozen=True)
class DeadInterval:
    """Broker `broker` is dead in the variant after log seq `after` up to and including
    log seq `until` (the point its restart follows; FOREVER: never restarted)."""

    broker: int
    after: int
    until: int = FOREVER

    def holds(self, seq: int) -> bool:
        return self.after < seq <= self.until


@dataclass
class Consistency:
    """The edits of one cluster of a variant: drops of the log's events and its failovers
    as the variant has them (by the log's seq)."""

    drops: list[Drop] = field(default_factory=list)
    failovers: dict[int, Event] = field(default_factory=dict)
    held_dead: tuple[int, ...] = ()


def dead_intervals(injected: list[Event], points: list[int]) -> list[DeadInterval]:
    """The intervals the variant's injected failures open, closed by its next injected
    startup of the same broker. `injected` is in seq order; `points[i]` is the log seq
    `injected[i]` follows."""
    intervals: list[DeadInterval] = []
    open_at: dict[int, int] = {}
    for e, point in zip(injected, points, strict=True):
        if e.broker_id is None:
            continue
        if e.event_type == ET.BROKER_FAILURE and e.broker_id not in open_at:
            open_at[e.broker_id] = point
        elif e.event_type == ET.BROKER_STARTUP and e.broker_id in open_at:
            intervals.append(DeadInterval(e.broker_id, open_at.pop(e.broker_id), point))
    intervals += [DeadInterval(b, after) for b, after in sorted(open_at.items())]
    return intervals


def _failover(e: Event, dead: set[int]) -> Event | None:
    """The log's failover without the dead brokers; None when none is left."""
    brokers = tuple(b for b in e.brokers or () if b not in dead)
    if not brokers:
        return None
    controller = e.broker_id if e.broker_id not in dead else min(brokers)
    return e._replace(broker_id=controller, brokers=brokers)


def consistency(cluster: str, facts: ClusterFacts, injected: list[Event],
                points: list[int]) -> Consistency:
    """The edits that keep the log's events from undoing the variant's failures."""
    intervals = dead_intervals(injected, points)
    edits = Consistency(held_dead=tuple(sorted({i.broker for i in intervals})))
    dropped: set[tuple[int, str, int]] = set()
    for e in facts.broker_events:
        dead = {i.broker for i in intervals if i.holds(e.seq)}
        if not dead:
            continue
        if e.event_type in BROKER_OWN_EVENTS and e.broker_id in dead:
            dropped.add((e.seq, e.event_type, e.broker_id))
        elif e.event_type == ET.CONTROLLER_FAILOVER and e.brokers is not None \
                and dead & set(e.brokers):
            edited = _failover(e, dead)
            if edited is None:
                dropped.add((e.seq, e.event_type, -1))
            else:
                edits.failovers[e.seq] = edited
    for seq, event_type, broker in sorted(dropped):
        fields = [("cluster", cluster), ("event_type", event_type), ("seq", seq)]
        if broker >= 0:
            fields.append(("broker_id", broker))
        edits.drops.append(Drop(tuple(sorted(fields))))
    return edits
