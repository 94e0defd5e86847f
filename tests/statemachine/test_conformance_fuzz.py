"""Random controller logs (fixed seeds): Kafka's invariants hold after every event, the
requests go only to registered brokers, and replaying event by event (state saved and
resumed after each one) gives exactly what one replay of the whole log gives.

The generator reads the replayed state to write plausible events (an ISR change by the
current leader with its current leader epoch, StopReplica responses for replicas whose
deletion started), as a real controller log would contain.
"""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest

from statemachine.cluster import build_timeline
from statemachine.context import Outputs, ReplayConfig
from statemachine.model import BucketState
from statemachine.replay import replay
from tests.helpers.core import Log, split

BROKERS = range(5)
TOPICS = ("t0", "t1", "t2")


class World:
    """The log so far, and the state replayed event by event."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        # Seeds 6 and 7 run with unclean.leader.election.enable=true as the broker default.
        self.config = ReplayConfig(unclean_leader_election_enable=seed >= 6)
        self.log = Log()
        self.state: BucketState | None = None
        self.rows: dict[str, list[Any]] = {k: [] for k in (
            "state_changes", "leader_and_isr", "update_metadata", "stop_replica",
            "findings", "partition_state_writes")}
        self.parts: dict[tuple[str, int], Any] = {}
        self.replicas: dict[tuple[str, int, int], str] = {}
        self.epochs: dict[tuple[str, int], int] = {}
        self.log.failover(0, BROKERS)
        self._step()

    @property
    def timeline(self):  # type: ignore[no-untyped-def]
        return build_timeline(split(self.log.events)[0])

    def _step(self) -> None:
        seq = self.log.seq
        new = [e for e in self.log.events if e.seq == seq]
        _, other = split(new)
        state = BucketState.from_bytes(self.state.to_bytes()) if self.state else None
        self.state, out = replay(state, other, self.timeline, self.config)
        # Thawing every saved topic up front gives the same state and rows as thawing the
        # topics the event and the cluster steps touch.
        assert replay(state, other, self.timeline, self.config, eager=True) == (self.state, out)
        assert out.late == []
        for k, rows in self.rows.items():
            rows.extend(getattr(out, k))
        self._check(out, seq)

    def _check(self, out: Outputs, seq: int) -> None:
        cluster = self.timeline.state_at(seq)
        registered = cluster.live | cluster.shutting_down
        for r in out.leader_and_isr:
            assert r.broker_id in registered, r
        for r in out.stop_replica:
            assert r.broker_id in registered, r
        before = self.parts
        # A replay lists the partitions whose state it changed, each with all its replicas.
        changed = {(r.topic, r.partition): r for r in out.partition_states}
        self.parts = dict(sorted({**before, **changed}.items()))  # the generator's order
        # Every controller write of a partition not queued for deletion is propagated in
        # the same event: the last UpdateMetadata row carries the new state.
        last_um = {(u.topic, u.partition): u for u in out.update_metadata}
        for key, r in changed.items():
            old = before.get(key)
            state = (r.leader, r.isr, r.leader_epoch, r.zk_version)
            if r.leader is None or r.queued_for_deletion or (
                    old is not None and state == (old.leader, old.isr, old.leader_epoch,
                                                  old.zk_version)):
                continue
            u = last_um.get(key)
            assert u is not None and (u.leader, u.isr, u.leader_epoch, u.zk_version) == state, (
                r, u)
        replicas = {k: v for k, v in self.replicas.items() if k[:2] not in changed}
        replicas.update({(r.topic, r.partition, r.broker_id): r.state
                         for r in out.replica_states})
        self.replicas = dict(sorted(replicas.items()))
        for key, r in self.parts.items():
            if r.leader is None:
                assert r.isr is None and r.state in ("NewPartition", "NonExistentPartition")
                self.epochs.pop(key, None)
                continue
            assert r.isr, r  # the ISR is never emptied
            assert r.leader == -1 or r.leader in r.isr, r
            assert r.zk_version >= r.leader_epoch, r
            assert r.leader_epoch >= self.epochs.get(key, 0), r  # never goes back
            self.epochs[key] = r.leader_epoch
            if r.state == "OnlinePartition" and not r.queued_for_deletion:
                assert r.leader >= 0, r
            if not r.adding_replicas and not r.removing_replicas and not r.queued_for_deletion:
                # Replica states exist exactly for the assigned replicas.
                mine = {b for (t, p, b) in self.replicas if (t, p) == key}
                assert mine == set(r.replicas), (r, mine)

    # -- event generation -------------------------------------------------------------

    def _live(self) -> list[int]:
        return sorted(self.timeline.state_at(self.log.seq).live)

    def _known(self) -> list[int]:
        s = self.timeline.state_at(self.log.seq)
        return sorted(s.live | s.shutting_down)

    def _existing(self) -> list[Any]:
        return [r for r in self.parts.values() if r.replicas]

    def event(self) -> None:
        rng, log = self.rng, self.log
        live, known = self._live(), self._known()
        existing = self._existing()
        kind = rng.choices(
            ["create", "isr", "cs", "fail", "start", "reassign", "preferred", "unclean",
             "config", "delete", "srr", "failover"],
            [14, 24, 7, 7, 10, 8, 8, 3, 3, 3, 10, 3])[0]
        if kind == "create":
            topic = rng.choice(TOPICS)
            p = sum(1 for (t, _) in self.parts if t == topic)
            rf = rng.randint(1, 3)
            log.create(topic, p, rng.sample(list(BROKERS), rf),
                       unclean=rng.choice([None, None, True, False]))
        elif kind == "isr" and existing:
            r = rng.choice(existing)
            if r.leader is None or r.leader < 0:
                return
            others = [b for b in r.replicas if b != r.leader]
            isr = [r.leader, *rng.sample(others, rng.randint(0, len(others)))]
            if rng.random() < 0.8:  # mostly replicas that are live
                isr = [b for b in isr if b in live or b == r.leader]
            epoch = r.leader_epoch if rng.random() < 0.9 else r.leader_epoch - 1
            log.isr(r.topic, r.partition, isr, leader_epoch=epoch)
        elif kind == "cs" and live:
            b = rng.choice(live)
            log.controlled_shutdown(b)
            self._step()
            log.failure(b)
        elif kind == "fail" and known:
            log.failure(*sorted(rng.sample(known, rng.randint(1, min(2, len(known))))))
        elif kind == "start":
            dead = [b for b in BROKERS if b not in known]
            log.startup(rng.choice(dead if dead and rng.random() < 0.9 else list(BROKERS)))
        elif kind == "reassign" and existing:
            r = rng.choice(existing)
            log.reassign(r.topic, r.partition, rng.sample(list(BROKERS), rng.randint(1, 3)))
        elif kind == "preferred" and existing:
            r = rng.choice(existing)
            log.preferred(r.topic, r.partition)
        elif kind == "unclean" and existing:
            r = rng.choice(existing)
            log.unclean(r.topic, r.partition)
        elif kind == "config":
            log.config(rng.choice(TOPICS), rng.choice([True, False]))
        elif kind == "delete":
            log.delete(rng.choice(TOPICS))
        elif kind == "srr":
            started = [k for k, s in self.replicas.items() if s == "ReplicaDeletionStarted"]
            if not started:
                return
            t, p, b = rng.choice(started)
            log.stop_replica_response(t, p, b,
                                      error="KAFKA_STORAGE_ERROR" if rng.random() < 0.1 else None)
        elif kind == "failover":
            log.failover(rng.choice(live or [0]), live)
        else:
            return
        self._step()


@functools.cache
def _world(seed: int) -> World:
    world = World(seed)
    for _ in range(150):
        world.event()
    return world


@pytest.mark.parametrize("seed", range(8))
def test_random_logs_keep_kafka_invariants_and_resume_exactly(seed: int) -> None:
    world = _world(seed)
    # One replay of the whole log gives the same state and rows as the event-by-event run.
    cluster, other = split(world.log.events)
    state, out = replay(None, other, build_timeline(cluster), world.config)
    assert state == world.state
    for k, rows in world.rows.items():
        assert getattr(out, k) == rows, k
    assert {(r.topic, r.partition): r for r in out.partition_states} == world.parts


def test_fuzz_reaches_the_interesting_paths() -> None:
    """The generator is not trivial: across the seeds, the logs hit elections, unclean
    elections, completed reassignments and completed deletions."""
    seen: set[str] = set()
    for seed in range(8):
        world = _world(seed)
        seen |= {f.kind for f in world.rows["findings"]}
        seen |= {"reassigned" for r in world.rows["state_changes"]
                 if r.to_state == "NonExistentReplica" and r.outcome == "applied"}
    assert {"topic_deleted", "unclean_leader_election", "reassigned",
            "election_failed"} <= seen, seen
