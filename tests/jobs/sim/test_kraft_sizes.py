"""The sizes of the KRaft simulator (`jobs.sim.kraft_history.SIZES`): a size adds its
topics on its brokers, and every fence then writes a record for each partition the
fenced broker held in an ISR (pure, no I/O)."""

from __future__ import annotations

from jobs.sim.kraft_history import SIZES, KraftSize, simulate


def test_a_size_adds_its_topics_and_brokers() -> None:
    size = KraftSize("t", brokers=4, topics=3, partitions=5)
    sim = simulate(30, seed=2, size=size)
    added = {k for k in sim.parts if sim.names[k[0]].startswith("t0")}
    assert len(added) == 15 and size.total_partitions == 24 + 15
    assert sorted(sim.epochs) == [1, 2, 3, 4]
    assert all(len(sim.parts[k].replicas) == 3 for k in added)


def test_every_later_operation_writes_the_records_of_the_added_partitions() -> None:
    # The schedule does not depend on the size: after the creations (one batch more per
    # added topic), the batches pair up, and the sized history's hold more records.
    plain = simulate(30, seed=2)
    sized = simulate(30, seed=2, size=KraftSize("t", brokers=6, topics=4, partitions=10))
    created = 15  # quorum leader, feature level, 6 x (register, unfence), 3 topics
    later = list(zip(plain.batches[created:], sized.batches[created + 4:], strict=True))
    assert later  # the history fences a broker in its first 30 minutes
    assert all(len(s[1]) >= len(p[1]) for p, s in later)
    assert sum(len(s[1]) for _, s in later) > sum(len(p[1]) for p, _ in later)


def test_the_sizes_grow_to_a_million_partitions() -> None:
    totals = [SIZES[s].total_partitions for s in ("sample", "small", "bench", "large")]
    assert totals == sorted(totals) and totals[0] == 24 and totals[-1] >= 1_000_000
