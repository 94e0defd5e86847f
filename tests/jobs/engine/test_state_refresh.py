"""Which replay groups a run rewrites whole (`jobs.engine.state_refresh`): every bucket is
rewritten once in any `cycle` consecutive runs, so the chain behind the state never holds
more than `cycle` runs; a rerun makes the same plan; a history without a plan (or with
another cycle) starts a new chain that rewrites everything."""

from __future__ import annotations

import pytest

from jobs.engine.state_refresh import StateRefresh, plan_refresh

BUCKETS = 10


def nights(count: int, cycle: int) -> list[StateRefresh]:
    """The plans of `count` runs in a row, each saved and read back by the next."""
    plans = [plan_refresh("n1", cycle, None, None, None, ())]
    for n in range(2, count + 1):
        last = plans[-1]
        plans.append(plan_refresh(f"n{n}", cycle, f"n{n - 1}", last.cycle, last.index,
                                  last.chain))
    return plans


def rewritten(plan: StateRefresh) -> set[int]:
    return {b for b in range(BUCKETS) if plan.covers(b)}


def test_a_first_run_rewrites_every_bucket_and_starts_the_chain() -> None:
    first = plan_refresh("n1", 3, None, None, None, ())
    assert first.chain == ("n1",) and first.index == 0
    assert rewritten(first) == set(range(BUCKETS))
    assert not first.covers(-1)  # the cluster-scope group holds no partition


def test_every_bucket_is_rewritten_within_the_chain_and_the_chain_is_bounded() -> None:
    plans = nights(20, 3)
    for n, plan in enumerate(plans, start=1):
        assert plan.chain == tuple(f"n{i}" for i in range(max(1, n - 2), n + 1))
        # The runs of the chain rewrote every bucket between them: the state is in them.
        covered = set().union(*(rewritten(plans[int(r[1:]) - 1]) for r in plan.chain))
        assert covered == set(range(BUCKETS))
    assert [len(rewritten(p)) for p in plans[1:4]] == [3, 3, 4]  # a third of them a night


def test_a_rerun_of_the_run_that_saved_the_history_makes_the_same_plan() -> None:
    plans = nights(5, 3)
    last = plans[-1]
    again = plan_refresh("n5", 3, "n5", last.cycle, last.index, last.chain)
    assert again == last


@pytest.mark.parametrize("saved_cycle, saved_index", [(None, None), (4, 7)])
def test_a_history_without_this_cycle_starts_a_new_chain(
    saved_cycle: int | None, saved_index: int | None
) -> None:
    plan = plan_refresh("n9", 3, "n8", saved_cycle, saved_index, ("n1", "n8"))
    assert plan.index == 0 and plan.chain == ("n9",)
    assert rewritten(plan) == set(range(BUCKETS))


def test_a_cycle_of_one_rewrites_everything_every_run() -> None:
    for plan in nights(4, 1):
        assert len(plan.chain) == 1 and rewritten(plan) == set(range(BUCKETS))


def test_a_cycle_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        plan_refresh("n1", 0, None, None, None, ())
