"""The story teller: decides what happens in the cluster next and emits it as the controller
events Kafka's ZooKeeper controller would log (the event-log contract, docs/tables.md), in
`seq` order.

Time is counted in ticks. Each tick fires the follower catch-ups that are due, advances the
current broker story (crash, rolling restart, controller crash, ...) and runs one filler
action, most often an ISR flap (a leader drops a slow follower and takes it back later).

A few rules keep every emitted event one a real controller would accept, without a copy of
the controller's bookkeeping:

* partitions are only assigned to live brokers, reassignments only target live brokers
  and start only when the partition is fully in sync;
* no cluster event happens while a reassignment is in flight (a broker startup would resume
  it: `KafkaController.onBrokerStartup`, Kafka 3.7.1), and no failure, shutdown or failover
  while a topic deletion waits for a dead broker to come back (it would restart the deletion:
  `onControllerFailover` calls `TopicDeletionManager.tryTopicDeletion`);
* a controlled shutdown is followed at once by the broker's failure (or, for the
  controller's own broker, by the failover), as in a rolling restart;
* an `IsrChanged` names only live brokers and carries the current leader epoch.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from jobs.sim.assign import assign_replicas
from jobs.sim.badrows import BadRows
from jobs.sim.presets import Preset
from jobs.sim.truth import NO_LEADER, Part, Truth
from jobs.sim.writer import ParquetSink, Row
from schemas import event_types as ET

START_US = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1_000_000)
TOPIC_WORDS = ("orders", "payments", "clicks", "logs", "metrics", "users", "audit", "events")
# Partition counts of new topics: most are small, a few have hundreds or thousands.
TOPIC_SIZES = (1, 1, 2, 3, 4, 6, 8, 8, 12, 12, 16, 24, 32, 50, 64, 100, 128, 256, 500, 1000, 2000)
SIZE_WEIGHTS = (6, 4, 3, 5, 5, 6, 8, 6, 8, 5, 6, 4, 4, 3, 3, 2, 2, 1, 1, 0.5, 0.3)

Story = Iterator[int]  # yields the number of ticks to wait before it is resumed


def ev(
    et: str,
    broker: int | None = None,
    topic: str | None = None,
    partition: int | None = None,
    replicas: tuple[int, ...] | None = None,
    isr: tuple[int, ...] | None = None,
    epoch: int | None = None,
    brokers: tuple[int, ...] | None = None,
    error: str | None = None,
    unclean: bool | None = None,
) -> tuple[object, ...]:
    """One event row without cluster, seq, ts and source (added by `Simulator.emit`)."""
    return (et, broker, topic, partition, replicas, isr, epoch, brokers, error, unclean)


class Simulator:
    def __init__(
        self,
        preset: Preset,
        sink: ParquetSink,
        seed: int = 1,
        bad_rows: float = 0.0,
        cluster: str = ET.DEFAULT_CLUSTER,
        progress: Callable[[int], object] | None = None,
    ) -> None:
        self.p = preset
        self.sink = sink
        self.rng = random.Random(seed)
        self.bad = BadRows(seed, bad_rows) if bad_rows > 0 else None
        self.cluster = cluster
        self.source = f"sim:{preset.name}:seed{seed}"
        self.progress = progress
        self.truth = Truth(list(range(1, preset.brokers + 1)))
        self.seq = 0
        self.ts = START_US
        self.gap_us = preset.mean_gap_ms * 1000.0
        self.tick = 0
        self.heap: list[tuple[int, int, int, int]] = []  # (tick, n, pid, broker): catch-ups
        self.counter = itertools.count()
        self.pending_expand: set[tuple[int, int]] = set()
        # topic -> dead broker -> partitions whose StopReplica waits for that broker
        self.pending_deletes: dict[str, dict[int, list[int]]] = {}
        self.topic_names: list[str] = []
        self.topic_counter = 0
        self.created = 0
        self.deleted = 0
        self.good_rows = 0
        self.by_type: Counter[str] = Counter()
        self.story: Story | None = None
        self.story_wake = 0
        self.stories_started = 0
        self.story_log: list[str] = []

    # ------------------------------------------------------------------ output
    def emit(self, rows: list[tuple[object, ...]]) -> None:
        """Write one controller event: rows sharing a fresh seq and ts."""
        self.seq += 1
        self.ts += 1 + int(self.rng.expovariate(1.0) * self.gap_us)
        head = (self.cluster, self.seq, self.ts)
        out: list[Row] = [(*head, *r, self.source) for r in rows]
        if self.bad is not None:
            out += self.bad.rows_for(out)
        self.sink.write_group(out)
        self.good_rows += len(rows)
        self.by_type[str(rows[0][0])] += len(rows)
        if self.progress is not None:
            self.progress(len(out))

    # ------------------------------------------------------------------ main loop
    def run(self) -> None:
        t = self.truth
        first = self.rng.choice(t.brokers)
        self.emit([ev(ET.CONTROLLER_FAILOVER, first, brokers=tuple(t.brokers))])
        t.failover(first, t.brokers)
        while self.created < max(1, self.p.partitions // 4):
            self.create_topic()
        target, idle = self.p.events, 0
        while self.good_rows < target:
            self.tick += 1
            before = self.good_rows
            self.fire_due()
            self.step_story()
            self.filler()
            idle = 0 if self.good_rows > before else idle + 1
            if idle >= 50:
                # Nothing left to flap (every topic deleted, or all RF 1): a new topic.
                self.create_topic()

    def fire_due(self) -> None:
        heap = self.heap
        while heap and heap[0][0] <= self.tick:
            _, _, pid, f = heapq.heappop(heap)
            self.pending_expand.discard((pid, f))
            self.expand(pid, f)

    def step_story(self) -> None:
        if self.story is None:
            due = (self.stories_started + 1) * self.p.events // (self.p.stories + 1)
            if self.stories_started < self.p.stories and self.good_rows >= due:
                self.story = self.new_story()
                self.stories_started += 1
                self.story_wake = self.tick
        if self.story is not None and self.tick >= self.story_wake:
            try:
                self.story_wake = self.tick + next(self.story)
            except StopIteration:
                self.story = None

    def filler(self) -> None:
        p, r = self.p, self.rng.random()
        goal = self.p.partitions * min(1.0, 0.25 + self.good_rows / (0.6 * self.p.events))
        if self.created < goal:
            self.create_topic()
        elif r < p.p_reassign:
            self.reassign_some()
        elif (r := r - p.p_reassign) < p.p_delete:
            self.delete_random_topic()
        elif (r := r - p.p_delete) < p.p_grow:
            self.grow_topic()
        elif (r := r - p.p_grow) < p.p_config:
            self.change_config()
        elif (r := r - p.p_config) < p.p_preferred:
            self.admin_preferred()
        elif (r := r - p.p_preferred) < p.p_unclean:
            self.admin_unclean()
        else:
            self.flap()

    # ------------------------------------------------------------------ helpers
    def random_part(self, ok: Callable[[Part], bool], tries: int = 6) -> Part | None:
        parts = self.truth.parts
        for _ in range(tries):
            p = parts[self.rng.randrange(len(parts))]
            if p is not None and ok(p):
                return p
        return None

    def settled(self, p: Part) -> bool:
        """A partition a leader or an admin can act on right now."""
        t = self.truth
        return p.leader in t.live and not t.topics[p.topic].queued and p.pid not in t.reassigning

    def schedule_catchup(self, pid: int, spread: int | None = None) -> None:
        """Live assigned replicas outside the ISR rejoin it after a while (IsrChanged)."""
        t = self.truth
        p = t.parts[pid]
        if p is None:
            return
        spread = spread or self.p.catchup_ticks
        for r in p.replicas:
            if r in t.live and r not in p.isr and (pid, r) not in self.pending_expand:
                self.pending_expand.add((pid, r))
                when = self.tick + self.rng.randint(1, spread)
                heapq.heappush(self.heap, (when, next(self.counter), pid, r))

    def expand(self, pid: int, f: int) -> None:
        t = self.truth
        p = t.parts[pid]
        if (
            p is None
            or t.topics[p.topic].queued
            or f not in t.live
            or f in p.isr
            or f not in p.replicas
            or p.leader == NO_LEADER
            or p.leader not in t.live
        ):
            return
        isr = (*p.isr, f)
        self.emit(
            [ev(ET.ISR_CHANGED, topic=p.topic, partition=p.partition, isr=isr, epoch=p.epoch)]
        )
        t.isr_changed(p, isr)

    # ------------------------------------------------------------------ filler actions
    def flap(self) -> None:
        p = self.random_part(lambda p: len(p.isr) > 1 and self.settled(p))
        if p is None:
            return
        f = self.rng.choice([r for r in p.isr if r != p.leader])
        isr = tuple(r for r in p.isr if r != f)
        self.emit(
            [ev(ET.ISR_CHANGED, topic=p.topic, partition=p.partition, isr=isr, epoch=p.epoch)]
        )
        self.truth.isr_changed(p, isr)
        if (p.pid, f) not in self.pending_expand:
            self.pending_expand.add((p.pid, f))
            when = self.tick + self.rng.randint(*self.p.flap_ticks)
            heapq.heappush(self.heap, (when, next(self.counter), p.pid, f))

    def create_topic(self) -> None:
        t, rng = self.truth, self.rng
        live = sorted(t.live)
        left = max(1, self.p.partitions - self.created)
        n = min(rng.choices(TOPIC_SIZES, SIZE_WEIGHTS)[0], self.p.max_topic_partitions, left)
        rf = min(rng.choices((1, 2, 3), (15, 25, 60))[0], len(live))
        unclean = rng.choices((None, True, False), (80, 12, 8))[0]
        self.topic_counter += 1
        name = f"{rng.choice(TOPIC_WORDS)}-{self.topic_counter:05d}"
        assignment = assign_replicas(live, n, rf, rng)
        self.emit(
            [
                ev(ET.PARTITION_CREATED, topic=name, partition=i, replicas=reps, unclean=unclean)
                for i, reps in enumerate(assignment)
            ]
        )
        t.create(name, list(enumerate(assignment)), unclean)
        self.topic_names.append(name)
        self.created += n

    def grow_topic(self) -> None:
        t, rng = self.truth, self.rng
        if not self.topic_names:
            return
        topic = t.topics[rng.choice(self.topic_names)]
        if topic.queued or self.created >= self.p.partitions:
            return
        live = sorted(t.live)
        p0 = t.parts[topic.pids[0]]
        assert p0 is not None
        rf = min(len(p0.target or p0.replicas), len(live))
        have = len(topic.pids)
        n = min(
            rng.randint(1, max(1, have)),
            self.p.max_topic_partitions,
            self.p.partitions - self.created,
        )
        # AdminZkClient.addPartitions starts where partition 0's first replica sits.
        start = next((i for i, b in enumerate(live) if b >= p0.replicas[0]), 0)
        assignment = assign_replicas(live, n, rf, rng, start_index=start, start_partition=have)
        parts = list(enumerate(assignment, start=have))
        self.emit(
            [
                ev(ET.PARTITION_CREATED, topic=topic.name, partition=i, replicas=reps)
                for i, reps in parts
            ]
        )
        t.create(topic.name, parts, None)
        self.created += n

    def reassign_some(self) -> bool:
        """An admin moves one replica of a few partitions of a topic to another broker."""
        t, rng = self.truth, self.rng
        if not self.topic_names or t.shutting_down:
            return False
        topic = t.topics[rng.choice(self.topic_names)]
        if topic.queued:
            return False
        live = sorted(t.live)
        pids = topic.pids if len(topic.pids) <= 8 else rng.sample(topic.pids, 8)
        rows, moves = [], []
        for pid in sorted(pids):
            p = t.parts[pid]
            assert p is not None
            if (
                not self.settled(p)
                or set(p.isr) != set(p.replicas)
                or any(r not in t.live for r in p.replicas)
            ):
                continue
            spare = [b for b in live if b not in p.replicas]
            if not spare:
                continue
            moved = list(p.replicas)
            moved[rng.randrange(len(moved))] = rng.choice(spare)
            target = tuple(moved)
            rows.append(
                ev(
                    ET.REASSIGNMENT_REQUESTED,
                    topic=p.topic,
                    partition=p.partition,
                    replicas=target,
                )
            )
            moves.append((p, target))
        if not rows:
            return False
        self.emit(rows)
        for p, tgt in moves:
            t.reassign(p, tgt)
            self.schedule_catchup(p.pid, spread=max(2, self.p.flap_ticks[0]))
        return True

    def deletable(self, name: str) -> bool:
        """Keep the cluster populated: delete small topics, never the last few."""
        alive = self.created - self.deleted
        return len(self.topic_names) > 2 and len(self.truth.topics[name].pids) <= max(
            8, alive // 10
        )

    def delete_random_topic(self) -> None:
        name = self.rng.choice(self.topic_names) if self.topic_names else None
        if name is not None and self.deletable(name):
            self.delete_topic(name)

    def delete_topic(self, name: str) -> None:
        """TopicDeletionRequested, one StopReplicaResponse per live broker, and the
        completion line once every replica is gone; replicas on dead brokers wait for them
        to come back (`TopicDeletionManager.onTopicDeletion` marks them
        ReplicaDeletionIneligible until then)."""
        t, rng = self.truth, self.rng
        topic = t.topics[name]
        if topic.queued or t.shutting_down or any(pid in t.reassigning for pid in topic.pids):
            return
        self.emit([ev(ET.TOPIC_DELETION_REQUESTED, topic=name)])
        topic.queued = True
        on_live: dict[int, list[int]] = {}
        awaited: dict[int, list[int]] = {}
        for pid in topic.pids:
            p = t.parts[pid]
            assert p is not None
            for r in p.replicas:
                (on_live if r in t.live else awaited).setdefault(r, []).append(p.partition)
        for b in rng.sample(sorted(on_live), len(on_live)):
            self.stop_replica_responses(name, b, on_live[b])
        if awaited:
            self.pending_deletes[name] = awaited
        else:
            self.complete_deletion(name)

    def stop_replica_responses(self, topic: str, broker: int, partitions: list[int]) -> None:
        self.emit(
            [
                ev(ET.STOP_REPLICA_RESPONSE, broker, topic=topic, partition=i)
                for i in sorted(partitions)
            ]
        )

    def complete_deletion(self, name: str) -> None:
        self.emit([ev(ET.TOPIC_DELETION_COMPLETED, topic=name)])
        self.deleted += len(self.truth.topics[name].pids)
        self.truth.delete_topic(name)
        self.topic_names.remove(name)
        self.pending_deletes.pop(name, None)

    def change_config(self) -> None:
        t = self.truth
        if not self.topic_names:
            return
        topic = t.topics[self.rng.choice(self.topic_names)]
        if topic.queued:
            return
        value = not topic.unclean
        self.emit([ev(ET.TOPIC_CONFIG_CHANGED, topic=topic.name, unclean=value)])
        for pid in t.config_changed(topic.name, value):
            self.schedule_catchup(pid)

    def admin_preferred(self) -> None:
        t = self.truth
        p = self.random_part(
            lambda p: (
                p.leader != p.replicas[0]
                and self.settled(p)
                and p.replicas[0] in t.live
                and p.replicas[0] in p.isr
            ),
            tries=20,
        )
        if p is not None:
            self.emit([ev(ET.PREFERRED_LEADER_ELECTION, topic=p.topic, partition=p.partition)])
            t.preferred(p)

    def admin_unclean(self) -> None:
        """An operator forces an unclean election on a leaderless partition that still has
        a live replica outside its ISR."""
        t = self.truth
        for pid in sorted(t.offline)[:50]:
            p = t.parts[pid]
            if (
                p is None
                or t.topics[p.topic].queued
                or pid in t.reassigning
                or not any(r in t.live for r in p.replicas)
            ):
                continue
            self.emit([ev(ET.UNCLEAN_LEADER_ELECTION, topic=p.topic, partition=p.partition)])
            t.unclean_election(p)
            self.schedule_catchup(pid)
            return

    # ------------------------------------------------------------------ cluster events
    def blocked(self, startup: bool = False) -> bool:
        return bool(self.truth.reassigning) or (not startup and bool(self.pending_deletes))

    def wait_clear(self, startup: bool = False) -> Story:
        while self.blocked(startup):
            yield 1

    def broker_failure(self, dead: list[int]) -> None:
        self.emit([ev(ET.BROKER_FAILURE, b) for b in sorted(dead)])
        for pid in self.truth.broker_failure(sorted(dead)):
            self.schedule_catchup(pid)

    def broker_startup(self, b: int) -> None:
        t = self.truth
        self.emit([ev(ET.BROKER_STARTUP, b)])
        for pid in t.broker_startup([b]):
            self.schedule_catchup(pid)
        for pid in sorted(t.hosted[b]):
            self.schedule_catchup(pid)
        for name in list(self.pending_deletes):
            awaited = self.pending_deletes[name]
            if b in awaited:
                self.stop_replica_responses(name, b, awaited.pop(b))
                if not awaited:
                    self.complete_deletion(name)

    def failover(self, dead_controller: bool) -> None:
        t = self.truth
        old = t.controller
        live = sorted(t.live - {old}) if dead_controller else sorted(t.live)
        new = self.rng.choice([b for b in live if b != old] or live)
        self.emit([ev(ET.CONTROLLER_FAILOVER, new, brokers=tuple(live))])
        for pid in t.failover(new, live):
            self.schedule_catchup(pid)

    def rebalance(self, brokers: list[int]) -> None:
        """The auto-rebalancer (`KafkaController.checkAndTriggerAutoLeaderRebalance`,
        `leader.imbalance.per.broker.percentage` 10): brokers whose preferred partitions are
        more than 10% led elsewhere get them back, where the preferred replica is live and in
        sync."""
        t = self.truth
        rows, moved = [], []
        for b in sorted(brokers):
            preferring = [t.parts[pid] for pid in sorted(t.hosted[b])]
            mine = [
                p
                for p in preferring
                if p is not None and p.replicas[0] == b and not t.topics[p.topic].queued
            ]
            off = [p for p in mine if p.leader != b]
            if not mine or len(off) * 10 <= len(mine) or b not in t.live:
                continue
            for p in off:
                if b in p.isr and p.pid not in t.reassigning:
                    rows.append(
                        ev(ET.PREFERRED_LEADER_ELECTION, topic=p.topic, partition=p.partition)
                    )
                    moved.append(p)
        if rows:
            self.emit(rows)
            for p in moved:
                t.preferred(p)

    def pick_broker(self, n: int = 1, controller: bool = False) -> list[int]:
        t = self.truth
        if controller:
            return [t.controller]
        cands = sorted(t.live - {t.controller})
        if len(cands) - n < 1:
            return []
        return sorted(self.rng.sample(cands, n))

    def restart_wait(self) -> int:
        return self.rng.randint(*self.p.restart_ticks)

    # ------------------------------------------------------------------ stories
    def new_story(self) -> Story:
        kinds = ("crash", "rolling", "controller_crash", "multi_crash", "controller_move")
        if self.p.scripted:
            kind = kinds[self.stories_started % len(kinds)]
        else:
            kind = self.rng.choices(kinds, (4, 2, 1, 1, 1))[0]
        self.story_log.append(kind)
        if kind == "crash":
            return self.story_crash(delete_during=self.p.scripted or self.rng.random() < 0.3)
        if kind == "rolling":
            return self.story_rolling()
        if kind == "controller_crash":
            return self.story_controller_crash()
        if kind == "multi_crash":
            return self.story_multi_crash()
        return self.story_controller_move()

    def story_crash(self, delete_during: bool) -> Story:
        yield from self.wait_clear()
        picked = self.pick_broker()
        if not picked:
            return
        b = picked[0]
        self.broker_failure([b])
        if delete_during:
            # Delete a topic with a replica on the dead broker: its deletion has to wait.
            names = [
                n
                for n in self.topic_names
                if (self.p.scripted or self.deletable(n))
                and any(pid in self.truth.hosted[b] for pid in self.truth.topics[n].pids)
            ]
            if names:
                self.delete_topic(self.rng.choice(names))
        yield self.restart_wait()
        yield from self.wait_clear(startup=True)
        self.broker_startup(b)
        yield self.p.catchup_ticks + 1
        self.rebalance([b])
        if self.p.scripted:  # small presets still show a reassignment
            any(self.reassign_some() for _ in range(20))

    def story_multi_crash(self) -> Story:
        yield from self.wait_clear()
        dead = self.pick_broker(n=2)
        if not dead:
            return
        self.broker_failure(dead)
        for b in dead:
            yield self.restart_wait()
            yield from self.wait_clear(startup=True)
            self.broker_startup(b)
        yield self.p.catchup_ticks + 1
        self.rebalance(dead)

    def story_rolling(self) -> Story:
        """Rolling restart: controlled shutdown, stop, start, wait for the ISRs, next."""
        t = self.truth
        k = min(len(t.brokers), 2 if self.p.scripted else self.rng.randint(2, 4))
        order = sorted(self.rng.sample(t.brokers, k))
        for b in order:
            yield from self.wait_clear()
            if b not in t.live or len(t.live) < 2:
                continue
            self.emit([ev(ET.CONTROLLED_SHUTDOWN, b)])
            t.controlled_shutdown(b)
            if b == t.controller:
                self.failover(dead_controller=True)
            else:
                self.broker_failure([b])
            yield self.restart_wait() // 4 + 1
            yield from self.wait_clear(startup=True)
            self.broker_startup(b)
            yield self.p.catchup_ticks + 1
            self.rebalance([b])

    def story_controller_crash(self) -> Story:
        yield from self.wait_clear()
        old = self.truth.controller
        if len(self.truth.live) < 2:
            return
        self.failover(dead_controller=True)
        yield self.restart_wait()
        yield from self.wait_clear(startup=True)
        self.broker_startup(old)
        yield self.p.catchup_ticks + 1
        self.rebalance([old])

    def story_controller_move(self) -> Story:
        yield from self.wait_clear()
        if len(self.truth.live) >= 2:
            self.failover(dead_controller=False)
