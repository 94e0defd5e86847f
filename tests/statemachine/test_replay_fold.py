"""The fold itself: the saved state round-trips, a log replayed in two halves (state saved
and resumed in between) gives exactly what one replay gives, late events come back
unapplied, and the result does not depend on input order or on which other topics share
the replay group.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from statemachine.cluster import build_timeline
from statemachine.context import Outputs
from statemachine.events import Event
from statemachine.model import BucketState
from statemachine.replay import Fold, apply_order, bucket_of, replay
from tests.helpers.core import Log, final, merged_states, replay_log, split, state_rows


def _scenario() -> Log:
    """Creation, a follower and a leader shutdown, a restart with ISR growth, a preferred
    election, a reassignment, an unclean election and a topic deletion, over three topics."""
    log = Log()
    log.failover(0, [0, 1, 2, 3])
    for p in range(3):
        log.create("a", p, [p % 4, (p + 1) % 4, (p + 2) % 4])
    log.create("b", 0, [3, 2])
    log.create("c", 0, [1])
    log.create("c", 1, [2, 3])
    log.controlled_shutdown(1)
    log.failure(1)
    log.reassign("a", 0, [2, 3, 0])
    log.isr("a", 0, [0, 2, 3], leader_epoch=2)
    log.startup(1)
    log.isr("a", 1, [2, 1], leader_epoch=1)
    log.preferred("a", 1)
    log.failover(2, [0, 1, 2, 3])
    log.isr("b", 0, [3], leader_epoch=0)
    log.config("b", True)
    log.failure(3)
    log.delete("c")
    for p, bs in ((0, (1,)), (1, (2,))):
        for b in bs:
            log.stop_replica_response("c", p, b)
    log.startup(3)
    log.stop_replica_response("c", 1, 3)
    log.deleted("c")
    log.shutdown(2)
    return log


def _rows(out: Outputs) -> dict[str, list[Any]]:
    return {
        "state_changes": out.state_changes,
        "leader_and_isr": out.leader_and_isr,
        "update_metadata": out.update_metadata,
        "stop_replica": out.stop_replica,
        "findings": out.findings,
    }


def test_scenario_sanity() -> None:
    _, out = replay_log(_scenario())
    assert final(out, "a", 0)[:2] == ("OnlinePartition", 0)
    assert final(out, "c", 0).state == "NonExistentPartition"
    assert [f.kind for f in out.findings].count("topic_deleted") == 1
    assert out.applied == len(split(_scenario().events)[1])


def test_bucket_state_round_trip() -> None:
    state, _ = replay_log(_scenario())
    data = state.to_bytes()
    assert isinstance(data, bytes)
    back = BucketState.from_bytes(data)
    assert back == state
    assert back.watermark == state.watermark == _scenario().seq
    # Thawing and freezing again gives the same snapshot.
    assert BucketState.freeze(back.watermark, back.thaw()) == state


def test_bucket_state_rejects_another_format() -> None:
    import pickle
    import zlib

    data = zlib.compress(pickle.dumps((999, -1, ()), 5))
    with pytest.raises(ValueError, match="format"):
        BucketState.from_bytes(data)


@pytest.mark.parametrize("cut", [1, 5, 9, 11, 14, 17, 20, 23, 25])
def test_two_halves_equal_one_replay(cut: int) -> None:
    log = _scenario()
    assert cut < log.seq
    cluster, other = split(log.events)
    one_state, one = replay(None, other, build_timeline(cluster))

    # First run: only what had arrived by `cut` (its timeline too), then save the state.
    first_cluster = [e for e in cluster if e.seq <= cut]
    s1, out1 = replay(None, [e for e in other if e.seq <= cut], build_timeline(first_cluster))
    assert s1.watermark == cut
    resumed = BucketState.from_bytes(s1.to_bytes())
    s2, out2 = replay(resumed, [e for e in other if e.seq > cut], build_timeline(cluster))

    assert s2 == one_state
    # The second run lists the partitions it changed; added to the first run's, they are
    # the whole state, as the saved state is.
    assert merged_states(out1, out2) == (one.partition_states, one.replica_states)
    assert state_rows(s2) == (one.partition_states, one.replica_states)
    for name, rows in _rows(one).items():
        assert _rows(out1)[name] + _rows(out2)[name] == rows, name
    assert out1.applied + out2.applied == one.applied
    assert out2.late == []


@pytest.mark.parametrize("cut", [3, 9, 14, 20])
def test_a_batch_capped_at_its_horizon_then_the_rest_equal_one_replay(cut: int) -> None:
    """A split run: the first batch has the events up to `cut` but the timeline of the whole
    log; capped at `until=cut`, it leaves the later cluster steps to the second batch, whose
    events are then not late."""
    log = _scenario()
    cluster, other = split(log.events)
    timeline = build_timeline(cluster)
    one_state, one = replay(None, other, timeline)

    s1, out1 = replay(None, [e for e in other if e.seq <= cut], timeline, until=cut)
    assert s1.watermark <= cut
    s2, out2 = replay(BucketState.from_bytes(s1.to_bytes()),
                      [e for e in other if e.seq > cut], timeline, until=log.seq)
    assert out2.late == []
    assert s2 == one_state
    assert merged_states(out1, out2) == (one.partition_states, one.replica_states)
    for name, rows in _rows(one).items():
        assert _rows(out1)[name] + _rows(out2)[name] == rows, name


def test_late_events_are_returned_not_applied() -> None:
    log = _scenario()
    cluster, other = split(log.events)
    state, _ = replay(None, other, build_timeline(cluster))
    late = [Event(5, None, "PreferredLeaderElection", topic="a", partition=1),
            Event(state.watermark, None, "IsrChanged", topic="a", partition=0, isr=(0,))]
    fresh = Event(state.watermark + 1, None, "PreferredLeaderElection", topic="a",
                  partition=2)
    s2, out = replay(state, [*late, fresh], build_timeline(cluster))
    assert out.late == late
    assert out.applied == 1
    assert s2.watermark == state.watermark + 1
    # The late ones changed nothing: the replay lists a-2 alone, and a-0 is as saved.
    assert [(r.topic, r.partition) for r in out.partition_states] == [("a", 2)]
    assert state_rows(s2)[0][0] == state_rows(state)[0][0]
    assert (state_rows(s2)[0][0].topic, state_rows(s2)[0][0].partition) == ("a", 0)


def test_input_order_does_not_matter() -> None:
    log = _scenario()
    cluster, other = split(log.events)
    _, out = replay(None, other, build_timeline(cluster))
    shuffled_other, shuffled_cluster = list(other), list(cluster)
    rng = random.Random(7)
    rng.shuffle(shuffled_other)
    rng.shuffle(shuffled_cluster)
    _, out2 = replay(None, shuffled_other, build_timeline(shuffled_cluster))
    assert _rows(out2) == _rows(out)
    assert out2.partition_states == out.partition_states


@pytest.mark.parametrize("flush_rows", [1, 7, 40])
def test_flushed_chunks_add_up_to_one_replay(flush_rows: int) -> None:
    """Taking the per-event tables in chunks while folding gives the same rows, in the
    same order, as taking them all at the end; no chunk is empty or over-full beyond the
    rows of one event."""
    log = _scenario()
    cluster, other = split(log.events)
    timeline = build_timeline(cluster)
    state, whole = replay(None, other, timeline)
    chunks: list[dict[str, list[Any]]] = []

    def flush(out: Outputs) -> None:
        assert out.event_rows() >= flush_rows
        chunks.append({name: list(rows) for name, rows in _rows(out).items()})

    state2, rest = replay(None, other, timeline, flush=flush, flush_rows=flush_rows)
    assert len(chunks) > 1
    joined = {name: [r for c in chunks for r in c[name]] + rows
              for name, rows in _rows(rest).items()}
    assert joined == _rows(whole)
    assert rest.partition_states == whole.partition_states
    assert state2 == state


@pytest.mark.parametrize("piece", [1, 4, 100])
def test_a_fold_fed_in_sorted_pieces_equals_one_replay(piece: int) -> None:
    """`Fold.feed` piece by piece (events in `apply_order`, output taken between pieces)
    gives the rows and state of one `replay`; a piece out of order is refused."""
    log = _scenario()
    cluster, other = split(log.events)
    timeline = build_timeline(cluster)
    state, whole = replay(None, other, timeline)

    ordered = sorted(other, key=apply_order)
    fold = Fold(None, timeline)
    taken: dict[str, list[Any]] = {name: [] for name in _rows(whole)}
    for start in range(0, len(ordered), piece):
        fold.feed(ordered[start:start + piece])
        for name, rows in _rows(fold.out).items():
            taken[name].extend(rows)
        fold.out.clear_event_rows()
    state2, rest = fold.finish()
    for name, rows in _rows(rest).items():
        taken[name].extend(rows)
    assert taken == _rows(whole)
    assert rest.partition_states == whole.partition_states
    assert state2 == state

    backwards = Fold(None, timeline)
    backwards.feed(ordered[3:4])
    with pytest.raises(ValueError, match="out of order"):
        backwards.feed(ordered[2:3])


def test_topic_rows_do_not_depend_on_group_members() -> None:
    """A topic replayed alone or with other topics in its group gives the same rows (the
    step and batch counters count per partition)."""
    log = _scenario()
    cluster, other = split(log.events)
    timeline = build_timeline(cluster)
    _, together = replay(None, other, timeline)
    for topic in ("a", "b", "c"):
        _, alone = replay(None, [e for e in other if e.topic == topic], timeline)
        for name, rows in _rows(together).items():
            mine = [r for r in rows if getattr(r, "topic", None) == topic]
            assert [r for r in _rows(alone)[name] if getattr(r, "topic", None) == topic] == (
                mine), (topic, name)
        assert [r for r in alone.partition_states] == [
            r for r in together.partition_states if r.topic == topic]


def test_bucket_of_is_stable() -> None:
    assert bucket_of("default", "a", 16) == bucket_of("default", "a", 16)
    assert 0 <= bucket_of("default", "orders", 7) < 7


def test_a_night_thaws_and_lists_only_what_it_touches() -> None:
    """A replay on a saved state thaws the topics its events touch and leaves the others'
    saved bytes as they were; its state rows are the partitions it changed; a cluster
    step thaws the topics on its broker."""
    log = Log()
    log.failover(0, [0, 1, 2])
    log.create("a", 0, [0, 1])
    log.create("a", 1, [1, 0])
    log.create("b", 0, [2])
    cluster, other = split(log.events)
    state, _ = replay(None, other, build_timeline(cluster))
    before = dict(state.topics)

    log.isr("a", 0, [0], leader_epoch=0)
    fold = Fold(state, build_timeline(cluster))
    fold.feed(split(log.events)[1][-1:])
    night, out = fold.finish()
    assert set(fold.frozen) == {"b"}
    assert dict(night.topics)["b"] is before["b"]
    assert [(r.topic, r.partition) for r in out.partition_states] == [("a", 0)]
    assert {(r.topic, r.partition) for r in out.replica_states} == {("a", 0)}
    assert night.partitions_by_state() == state.partitions_by_state()

    # Broker 2 fails: only b has a replica on it.
    log.failure(2)
    cluster, _ = split(log.events)
    fold = Fold(night, build_timeline(cluster))
    after, out = fold.finish()
    assert set(fold.frozen) == {"a"}
    assert [(r.topic, r.partition, r.state) for r in out.partition_states] == [
        ("b", 0, "OfflinePartition")]
    assert after.offline_partitions(10) == [("b", 0)]
