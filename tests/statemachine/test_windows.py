"""Windows of unavailability (`partition_windows`): hand-derived logs, the saved-state and
chunked-flush round trips, and a brute-force check on simulated logs that evaluating only
the touched partitions misses nothing."""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Iterable
from pathlib import Path

import pytest

from schemas import event_types as ET
from statemachine.cluster import FAILOVER, ClusterStep, ClusterTimeline, build_timeline
from statemachine.context import ControllerContext, Outputs, ReplayConfig
from statemachine.events import Event
from statemachine.flows import apply_cluster_step, apply_event
from statemachine.model import BucketState, Part, frozen_topic
from statemachine.replay import apply_order, replay
from statemachine.rows import PartitionWindowRow
from statemachine.states import PartitionState as P
from statemachine.windows import step_cause
from tests.helpers.core import Log, final, replay_log, split

SECOND = 1_000_000  # ts are microseconds


def windows(out: Outputs, kind: str | None = None,
            topic: str | None = None) -> list[PartitionWindowRow]:
    return [w for w in out.partition_windows
            if (kind is None or w.kind == kind) and (topic is None or w.topic == topic)]


def closed(out: Outputs) -> list[PartitionWindowRow]:
    return [w for w in out.partition_windows if w.end_seq is not None]


def still_open(out: Outputs) -> list[PartitionWindowRow]:
    return [w for w in out.partition_windows if w.end_seq is None]


# -- 1. a sole-ISR partition is offline from the failure to the restart ------------------------


def test_sole_isr_partition_offline_from_failure_to_restart() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2])
    log.create("t", 0, [1])  # RF 1
    log.create("t", 1, [1, 2])
    log.isr("t", 1, [1])  # ISR [1]: the only eligible leader is 1
    fail = log.failure(1)
    log.isr("t", 0, [1])  # rejected (no leader): no window change
    start = log.startup(1)
    _, out = replay_log(log)

    offline = windows(out, "offline")
    assert [(w.partition, w.start_seq, w.end_seq) for w in offline] == [
        (0, fail, start), (1, fail, start)]
    for w in offline:
        assert w.seconds == (start - fail) * 1.0
        assert w.start_ts == fail * SECOND and w.end_ts == start * SECOND
        assert (w.cause_event, w.cause_broker, w.end_event) == (
            ET.BROKER_FAILURE, 1, ET.BROKER_STARTUP)
    # No leader is also under min ISR (min.insync.replicas 1), for the same span.
    assert [(w.partition, w.start_seq, w.end_seq) for w in windows(out, "under_min_isr")] == [
        (0, fail, start), (1, fail, start)]
    # t-1 has been under-replicated since its ISR shrank, and still is (ISR [1] of [1, 2]).
    assert [(w.partition, w.start_seq, w.end_seq, w.cause_event)
            for w in windows(out, "under_replicated")] == [(1, 4, None, ET.ISR_CHANGED)]


# -- 2. RF 3, min.insync.replicas 2, two failures ---------------------------------------------


def test_two_failures_open_under_replicated_then_under_min_isr() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    log.create("t", 0, [1, 2, 3])
    log.create("u", 0, [1, 2, 3])  # default min.insync.replicas 1
    first = log.failure(3)
    second = log.failure(2)
    config = ReplayConfig(min_insync_replicas=1, topic_min_insync_replicas=(("t", 2),))
    assert config.min_insync_replicas_of("t") == 2 and config.min_insync_replicas_of("u") == 1
    _, out = replay_log(log, config)

    assert closed(out) == []
    got = [(w.topic, w.kind, w.start_seq, w.cause_event, w.cause_broker) for w in still_open(out)]
    assert got == [
        ("t", "under_min_isr", second, ET.BROKER_FAILURE, 2),
        ("t", "under_replicated", first, ET.BROKER_FAILURE, 3),
        ("u", "under_replicated", first, ET.BROKER_FAILURE, 3),
    ]
    assert all(w.end_ts is None and w.seconds is None and w.end_event is None
               for w in still_open(out))


# -- 3. a window open at the end of day 1, closed on day 2 -------------------------------------


def _two_days() -> tuple[Log, int]:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    log.create("t", 0, [1])
    log.create("t", 1, [2, 3])
    log.create("v", 0, [3, 1])
    log.failure(1)  # t-0 offline; v-0 under-replicated
    log.reassign("t", 1, [3, 2, 1])  # adding 1, which is down: stuck
    cut = log.seq
    log.isr("t", 1, [2, 3])
    log.startup(1)  # t-0 back
    log.isr("t", 1, [2, 3, 1])  # the reassignment completes
    log.isr("v", 0, [3, 1])
    log.failure(2)
    return log, cut


def _one_and_two_days(log: Log, cut: int) -> tuple[Outputs, Outputs, Outputs]:
    """The log replayed at once, and as two days cut after `cut` (the state of day one
    saved and restored as a checkpoint would)."""
    cluster, other = split(log.events)
    _, one = replay(None, other, build_timeline(cluster))
    s1, day1 = replay(None, [e for e in other if e.seq <= cut],
                      build_timeline([e for e in cluster if e.seq <= cut]))
    _, day2 = replay(BucketState.from_bytes(s1.to_bytes()),
                     [e for e in other if e.seq > cut], build_timeline(cluster))
    return one, day1, day2


def test_window_open_at_the_end_of_day_one_is_closed_on_day_two() -> None:
    log, cut = _two_days()
    cluster, other = split(log.events)
    _, one = replay(None, other, build_timeline(cluster))

    day1_cluster = [e for e in cluster if e.seq <= cut]
    s1, day1 = replay(None, [e for e in other if e.seq <= cut], build_timeline(day1_cluster))
    assert {(w.topic, w.partition, w.kind) for w in still_open(day1)} >= {
        ("t", 0, "offline"), ("t", 1, "reassigning")}
    resumed = BucketState.from_bytes(s1.to_bytes())
    _, day2 = replay(resumed, [e for e in other if e.seq > cut], build_timeline(cluster))

    assert closed(day1) + closed(day2) + still_open(day2) == closed(one) + still_open(one)
    offline = windows(day2, "offline", "t")[0]
    assert (offline.start_seq, offline.end_event, offline.seconds) == (
        5, ET.BROKER_STARTUP, float(cut + 2 - 5))


@pytest.mark.parametrize("cut", range(1, 12))
def test_any_cut_gives_the_rows_of_one_replay(cut: int) -> None:
    log, _ = _two_days()
    one, day1, day2 = _one_and_two_days(log, cut)
    assert closed(day1) + closed(day2) + still_open(day2) == one.partition_windows


# -- 4. a controlled shutdown moves leadership away: no offline window ------------------------


def test_controlled_shutdown_then_failure_opens_no_offline_window() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2])
    log.create("t", 0, [1, 2])  # leader 1, ISR [1, 2]
    cs = log.controlled_shutdown(1)
    log.failure(1)
    _, out = replay_log(log)
    assert windows(out, "offline") == []
    assert windows(out, "under_min_isr") == []
    # Leadership went to 2 and 1 left the ISR at the shutdown request.
    assert [(w.kind, w.start_seq, w.end_seq, w.cause_event, w.cause_broker)
            for w in out.partition_windows] == [
        ("under_replicated", cs, None, ET.CONTROLLED_SHUTDOWN, 1)]


def test_a_failed_leader_without_a_controlled_shutdown_is_offline_until_reelection() -> None:
    """The contrast to the test above: without the shutdown request the failure itself
    moves leadership (2 is in the ISR), so the partition is never offline after an event
    either; only a sole-ISR leader leaves a window."""
    log = Log(tick=SECOND)
    log.failover(0, [1, 2])
    log.create("t", 0, [1, 2])
    fail = log.failure(1)
    _, out = replay_log(log)
    assert windows(out, "offline") == []
    assert [(w.kind, w.start_seq, w.cause_event) for w in out.partition_windows] == [
        ("under_replicated", fail, ET.BROKER_FAILURE)]


# -- 5. reassignment and deletion windows ------------------------------------------------------


def test_reassignment_window_opens_and_closes() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    log.create("t", 0, [1, 2])
    req = log.reassign("t", 0, [2, 3])  # adding 3, removing 1
    done = log.isr("t", 0, [1, 2, 3])
    _, out = replay_log(log)
    assert [(w.kind, w.start_seq, w.end_seq, w.cause_event, w.end_event, w.seconds)
            for w in windows(out, "reassigning")] == [
        ("reassigning", req, done, ET.REASSIGNMENT_REQUESTED, ET.ISR_CHANGED,
         float(done - req))]
    # During the reassignment the replication factor is the target's (2), which ISR [1, 2]
    # meets: never under-replicated.
    assert windows(out, "under_replicated") == []


def test_deletion_window_and_no_offline_window_while_deleting() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2])
    log.create("d", 0, [1])
    log.create("s", 0, [2])
    fail = log.failure(2)  # s-0 offline
    req_d = log.delete("d")
    req_s = log.delete("s")  # its replica is on the dead broker: the deletion is stuck
    gone = log.stop_replica_response("d", 0, 1)
    _, out = replay_log(log)

    assert [(w.topic, w.kind, w.start_seq, w.end_seq, w.cause_event, w.end_event)
            for w in windows(out, "deleting")] == [
        ("d", "deleting", req_d, gone, ET.TOPIC_DELETION_REQUESTED, ET.STOP_REPLICA_RESPONSE),
        ("s", "deleting", req_s, None, ET.TOPIC_DELETION_REQUESTED, None),
    ]
    # s-0's outage ends when its deletion is requested; none opens while it is queued.
    assert [(w.kind, w.start_seq, w.end_seq, w.end_event) for w in windows(out, topic="s")
            if w.kind != "deleting"] == [
        ("offline", fail, req_s, ET.TOPIC_DELETION_REQUESTED),
        ("under_min_isr", fail, req_s, ET.TOPIC_DELETION_REQUESTED),
    ]
    assert [w for w in windows(out, topic="d") if w.kind != "deleting"] == []


def test_a_shutting_down_leader_still_serves_until_it_fails() -> None:
    """The controller marks a partition led by a shutting-down broker OfflinePartition when
    another broker fails, but that broker is still registered and serving: an admin client
    sees a leader, so the offline window opens only when the broker itself goes."""
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3])
    log.create("t", 0, [1, 2])
    log.isr("t", 0, [1])  # ISR [1]: the shutdown cannot move leadership
    log.controlled_shutdown(1)
    other = log.failure(3)
    gone = log.failure(1)
    _, out = replay_log(log)
    offline_rows = [r.seq for r in out.state_changes
                    if r.machine == "partition" and r.to_state == "OfflinePartition"]
    assert offline_rows == [other, gone]
    assert [(w.start_seq, w.cause_event, w.cause_broker) for w in windows(out, "offline")] == [
        (gone, ET.BROKER_FAILURE, 1)]


def test_several_brokers_failing_in_one_event_blame_the_lost_leader() -> None:
    log = Log(tick=SECOND)
    log.failover(0, [1, 2, 3, 4])
    log.create("t", 0, [3, 4])  # leader 3
    log.create("t", 1, [4, 1])  # leader 4
    log.create("t", 2, [2])  # leader 2
    fail = log.failure(1, 2, 3, 4)
    _, out = replay_log(log)
    assert [(w.partition, w.cause_event, w.cause_broker) for w in windows(out, "offline")] == [
        (0, ET.BROKER_FAILURE, 3), (1, ET.BROKER_FAILURE, 4), (2, ET.BROKER_FAILURE, 2)]
    assert all(w.start_seq == fail for w in out.partition_windows)


# -- 6. the controller's broker dies: the failover names it ------------------------------------


def test_the_dead_controller_broker_is_named_by_the_windows_its_failover_opens() -> None:
    """Broker 1 is the controller and dies; broker 2 wins the election and reads brokers
    [2, 3] from /brokers/ids. No BrokerChange ever reports 1: the failover is the event
    that finds it gone, and 1, not the new controller, is the cause of what it led."""
    log = Log(tick=SECOND)
    log.failover(1, [1, 2, 3])
    log.create("t", 0, [1])  # led by 1 alone: offline
    log.create("t", 1, [1, 2])  # led by 1: the failover elects 2, ISR [2]
    log.create("t", 2, [2, 1])  # led by 2, which survives: never offline
    log.create("t", 3, [3])  # nothing on 1: no window
    moved = log.failover(2, [2, 3])
    _, out = replay_log(log)

    assert [(w.partition, w.kind, w.start_seq, w.cause_event, w.cause_broker)
            for w in out.partition_windows] == [
        (0, "offline", moved, ET.CONTROLLER_FAILOVER, 1),
        (0, "under_min_isr", moved, ET.CONTROLLER_FAILOVER, 1),
        (1, "under_replicated", moved, ET.CONTROLLER_FAILOVER, 1),
        # `ZkReplicaStateMachine.startup` moves the dead follower to OfflineReplica, which
        # takes it out of the ISR: under-replicated, by the loss of its replica on 1.
        (2, "under_replicated", moved, ET.CONTROLLER_FAILOVER, 1),
    ]
    assert (final(out, "t", 1).leader, final(out, "t", 1).isr) == (2, (2,))
    assert (final(out, "t", 2).leader, final(out, "t", 2).isr) == (2, (2,))


def test_brokers_lost_at_one_failover_are_named_per_partition() -> None:
    """Brokers 1 (the controller) and 3 vanish at once: each window names the broker that
    partition lost, its leader first."""
    log = Log(tick=SECOND)
    log.failover(1, [1, 2, 3, 4])
    log.create("t", 0, [3, 1])  # leader 3, ISR [3, 1]: both lost, the leader is named
    log.create("t", 1, [1, 3])  # leader 1
    log.create("t", 2, [3, 4])  # leader 3; 4 takes over
    log.create("t", 3, [4, 2])  # lost nothing
    moved = log.failover(2, [2, 4])
    _, out = replay_log(log)
    assert sorted({(w.partition, w.start_seq, w.cause_event, w.cause_broker)
                   for w in out.partition_windows}) == [
        (0, moved, ET.CONTROLLER_FAILOVER, 3),
        (1, moved, ET.CONTROLLER_FAILOVER, 1),
        (2, moved, ET.CONTROLLER_FAILOVER, 3),
    ]


def test_a_failover_cause_without_a_lost_broker_is_the_new_controller() -> None:
    """The rule's fallbacks, on the step itself: a replica lost while the leader survives,
    a partition that lost nothing, and a failover that lost no broker (a controller move)."""
    part = Part(0, "t")
    part.replicas = (2, 1, 3)
    lost = ClusterStep(9, None, FAILOVER, broker=2, live_before=frozenset({1, 2}),
                       shutting_down_before=frozenset({3}), live_after=frozenset({2}))
    cause = step_cause(lost, {})
    assert callable(cause)
    assert cause(part) == (ET.CONTROLLER_FAILOVER, 1)  # the lowest id of its lost replicas
    other = Part(1, "t")
    other.replicas = (2,)
    assert cause(other) == (ET.CONTROLLER_FAILOVER, 2)
    moved = ClusterStep(9, None, FAILOVER, broker=2, live_before=frozenset({1, 2}),
                        live_after=frozenset({1, 2}))
    assert step_cause(moved, {}) == (ET.CONTROLLER_FAILOVER, 2)


def test_a_dead_controller_window_spanning_two_days_is_the_one_of_one_replay() -> None:
    log = Log(tick=SECOND)
    log.failover(1, [1, 2, 3])
    log.create("t", 0, [1])
    log.create("t", 1, [1, 2])
    log.failover(2, [2, 3])
    cut = log.seq
    log.isr("t", 1, [2])
    log.startup(1)
    one, day1, day2 = _one_and_two_days(log, cut)
    assert closed(day1) + closed(day2) + still_open(day2) == one.partition_windows
    assert {w.cause_broker for w in one.partition_windows} == {1}


def test_windows_of_a_topic_do_not_depend_on_the_other_topics_of_the_group() -> None:
    log, _ = _two_days()
    alone = [e for e in log.events if e.topic in (None, "t")]
    _, both = replay_log(log)
    _, only = replay_log(alone)
    assert windows(both, topic="t") == only.partition_windows


# -- the saved state ----------------------------------------------------------------------------


def test_open_windows_are_saved_with_the_part() -> None:
    log, cut = _two_days()
    state, _ = replay_log([e for e in log.events if e.seq <= cut])
    frozen = [frozen_topic(saved) for _, saved in state.topics]
    parts = {(t[0], p[0]): p for t in frozen for p in t[5]}
    # (start seq, start time, cause event, cause broker, event seq: None when the
    # window opened at its event's seq, as every ZooKeeper-mode window does)
    assert parts[("t", 0)][15] == (
        ("offline", (5, 5 * SECOND, ET.BROKER_FAILURE, 1, None)),
        ("under_min_isr", (5, 5 * SECOND, ET.BROKER_FAILURE, 1, None)),
    )
    assert parts[("t", 1)][15] == (("reassigning", (cut, cut * SECOND,
                                                    ET.REASSIGNMENT_REQUESTED, None, None)),)
    # A healthy partition saves no windows.
    log2 = Log()
    log2.failover(0, [1])
    log2.create("h", 0, [1])
    healthy, _ = replay_log(log2)
    assert frozen_topic(healthy.topics[0][1])[5][0][15] is None
    # The saved topic lists its open windows as rows, so that a night that does not thaw
    # it still writes them.
    saved = dict(state.topics)["t"]
    assert [w[:5] for w in saved.windows] == [
        ("t", 0, "offline", 5, 5 * SECOND), ("t", 0, "under_min_isr", 5, 5 * SECOND),
        ("t", 1, "reassigning", cut, cut * SECOND)]


def test_a_format_one_state_still_loads() -> None:
    log, cut = _two_days()
    state, _ = replay_log([e for e in log.events if e.seq <= cut])
    frozen = [frozen_topic(saved) for _, saved in state.topics]
    old_topics = tuple((*t[:5], tuple(p[:15] for p in t[5])) for t in frozen)
    data = zlib.compress(pickle.dumps((1, state.watermark, old_topics), 5), 1)

    loaded = BucketState.from_bytes(data)
    topics = loaded.thaw()
    part = topics["t"].parts[0]
    assert part.windows is None and part.window_mask == 0 and part.topic == "t"
    assert (part.replicas, part.leader, part.isr) == ((1,), -1, (1,))
    # Everything but the windows is what format 2 saved.
    again = BucketState.freeze(loaded.watermark, topics)
    assert again.watermark == state.watermark
    refrozen = [frozen_topic(saved) for _, saved in again.topics]
    assert [tuple(p[:15] for p in t[5]) for t in refrozen] == [
        tuple(p[:15] for p in t[5]) for t in frozen]
    assert all(p[15] is None for t in refrozen for p in t[5])


# -- 7. flushing in chunks -----------------------------------------------------------------------


@pytest.mark.parametrize("flush_rows", [1, 3, 50])
def test_flush_in_chunks_gives_the_rows_of_one_replay(flush_rows: int) -> None:
    log, _ = _two_days()
    cluster, other = split(log.events)
    _, one = replay(None, other, build_timeline(cluster))
    taken: list[PartitionWindowRow] = []
    _, rest = replay(None, other, build_timeline(cluster),
                     flush=lambda o: taken.extend(o.partition_windows), flush_rows=flush_rows)
    assert taken, "nothing was flushed"
    assert taken + rest.partition_windows == one.partition_windows


# -- 6. brute force: every event, every partition ----------------------------------------------


Key = tuple[str, int, str]


def _truth(ctx: ControllerContext) -> set[Key]:
    """The kinds every partition meets, from the definitions, for every partition."""
    found: set[Key] = set()
    available = ctx.live | ctx.shutting_down
    for name, topic in ctx.topics.items():
        for part in topic.parts.values():
            if not part.replicas:
                continue
            key = (name, part.partition)
            if part.adding or part.removing:
                found.add((*key, "reassigning"))
            if topic.queued_for_deletion:
                found.add((*key, "deleting"))
                continue
            leader = part.leader if part.has_leadership else -1
            isr = part.isr if part.has_leadership else ()
            rf = len([r for r in part.replicas if r not in part.adding])
            if leader < 0 or leader not in available:
                found |= {(*key, "offline"), (*key, "under_min_isr")}
            if len(isr) < ctx.config.min_insync_replicas_of(name):
                found.add((*key, "under_min_isr"))
            if len(isr) < rf:
                found.add((*key, "under_replicated"))
    return found


class _Checker:
    """Replays one group like `Fold`, and after every event and cluster step recomputes the
    windows from scratch: the fold's rows must be exactly the brute-force ones."""

    def __init__(self, timeline: ClusterTimeline, config: ReplayConfig) -> None:
        self.ctx = ControllerContext(config, timeline, {})
        self.ctx.set_cluster(timeline.state_at(-1))
        self.open: dict[Key, int] = {}  # key -> start seq
        self.expected: list[tuple[str, int, str, int, int | None]] = []
        self.changes_seen = 0
        self.offline_checked = 0  # OfflinePartition rows checked against a window

    def check(self) -> None:
        ctx = self.ctx
        now = _truth(ctx)
        for key in sorted(set(self.open) - now):
            self.expected.append((*key, self.open.pop(key), ctx.seq))
        for key in sorted(now - set(self.open)):
            self.open[key] = ctx.seq
        # The fold's view agrees at this very point, for every partition.
        fold_open = {(n, p.partition, k) for n, t in ctx.topics.items()
                     for p in t.parts.values() for k in (p.windows or ())}
        assert fold_open == now, (ctx.seq, fold_open ^ now)
        self._offline_rows_inside_windows(now)

    def _offline_rows_inside_windows(self, now: set[Key]) -> None:
        """Every valid OfflinePartition row of this event lies inside an offline window,
        unless the same event got the partition out of OfflinePartition again (a
        re-election), its topic is queued for deletion (the partition machine takes a
        deleted topic's partitions through OfflinePartition), or its leader is a
        shutting-down broker (registered, so available to an admin client)."""
        ctx = self.ctx
        rows = ctx.out.state_changes[self.changes_seen:]
        self.changes_seen = len(ctx.out.state_changes)
        for r in rows:
            if not (r.machine == "partition" and r.outcome == "applied"
                    and r.to_state == "OfflinePartition"):
                continue
            topic = ctx.topics[r.topic]
            part = topic.parts[r.partition]
            if (part.partition_state != P.OfflinePartition or topic.queued_for_deletion
                    or part.leader in ctx.shutting_down):
                continue
            assert (r.topic, r.partition, "offline") in now, (ctx.seq, r)
            self.offline_checked += 1

    def run(self, events: list[Event], until: int | None = None) -> None:
        steps = self.ctx.timeline.steps
        i = 0
        for e in sorted(events, key=apply_order):
            while i < len(steps) and steps[i].seq <= e.seq:
                apply_cluster_step(self.ctx, steps[i])
                self.check()
                i += 1
            apply_event(self.ctx, e)
            self.check()
        for step in steps[i:]:
            apply_cluster_step(self.ctx, step)
            self.check()


def _simulated_groups(tmp: Path, preset: str, seed: int) -> Iterable[
        tuple[ClusterTimeline, list[Event]]]:
    from jobs.bench.core import group_log, read_log, sort_log
    from jobs.sim.cli import simulate

    simulate(str(tmp), preset, seed)
    groups = group_log(sort_log(read_log(tmp)))
    timelines = {cl: build_timeline(evs) for cl, evs in groups.cluster_events.items()}
    empty = build_timeline(())
    for key in sorted(groups.buckets):
        yield timelines.get(key[0], empty), groups.buckets[key]


@pytest.mark.parametrize(("preset", "seed", "min_isr"), [
    ("tiny", 1, 1), ("tiny", 2, 2), ("tiny", 3, 2), ("sample", 1, 1), ("sample", 1, 2)])
def test_windows_match_a_brute_force_evaluation_after_every_event(
        tmp_path: Path, preset: str, seed: int, min_isr: int) -> None:
    config = ReplayConfig(min_insync_replicas=min_isr)
    kinds_seen: set[str] = set()
    offline_checked = 0
    for timeline, events in _simulated_groups(tmp_path, preset, seed):
        checker = _Checker(timeline, config)
        checker.run(events)
        _, out = replay(None, events, timeline, config)
        got = [(w.topic, w.partition, w.kind, w.start_seq, w.end_seq) for w in closed(out)]
        assert sorted(got) == sorted(checker.expected)
        assert {(w.topic, w.partition, w.kind, w.start_seq) for w in still_open(out)} == {
            (*k, s) for k, s in checker.open.items()}
        assert all(w.end_seq is None or w.start_seq < w.end_seq for w in out.partition_windows)
        kinds_seen |= {w.kind for w in out.partition_windows}
        offline_checked += checker.offline_checked
    # The check means something only if the log exercises the kinds.
    assert {"under_replicated", "under_min_isr"} <= kinds_seen, kinds_seen
    if preset == "sample":
        assert {"offline", "reassigning", "deleting"} <= kinds_seen, kinds_seen
        assert offline_checked > 0
