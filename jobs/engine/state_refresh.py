"""Which replay groups rewrite their whole state in a run, so that the state after any run
is made of its last few runs' rows (`run_summary.state_runs`), however many nights the
checkpoint has seen.

A run writes the state rows (`partition_states`, `replica_states`) of the partitions it
changed; the whole state after it is, per partition, the row of the latest run that wrote
one (`jobs.store.latest_state`). Without more, a partition nobody touches keeps its row in
the first run, and the runs behind the state grow by one every night: a year of nights
would make every read of the state a join over 365 runs.

So each run also rewrites, whole, the state of a rolling share of the buckets: run number
`index` of the chain (0 for the run that starts it) rewrites every bucket `b` with
`b % cycle == index % cycle`, and the run that starts a chain (a first run, a
`--rebuild`, the first run after the cycle changed) rewrites every bucket. After `cycle`
runs every bucket has been rewritten once, so the state after a run is in the last
`cycle` runs, and `state_runs` never names more. The rewriting is spread evenly over the
nights: each night rewrites about 1/cycle of the state (no night pays for a compaction of
everything), and the rows rewritten are the ones a fold from nothing would emit for those
partitions (`statemachine.replay.Fold`'s `every_row`), so the state read is the same row
for row.

The plan is decided from the checkpoint's history before the stream starts (a rerun of a
killed run makes the same one) and saved in the history with the chain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Runs after which every bucket has been rewritten whole (`[replay] state_refresh_runs`).
DEFAULT_CYCLE = 8


@dataclass(frozen=True)
class StateRefresh:
    """One run's share of the rewriting, and the runs whose rows make up the state after
    it (oldest first, the run itself last)."""

    cycle: int
    index: int  # the run's position in the chain's cycle; 0: it rewrites every bucket
    chain: tuple[str, ...]

    def covers(self, bucket: int) -> bool:
        """Whether the run rewrites `bucket`'s whole state (never the cluster-scope group,
        which holds no partition)."""
        return bucket >= 0 and (self.index == 0 or bucket % self.cycle == self.index % self.cycle)


def plan_refresh(run_id: str, cycle: int, saved_by: str | None, saved_cycle: int | None,
                 saved_index: int | None, saved_chain: Sequence[str]) -> StateRefresh:
    """This run's plan from what the history holds (`saved_*`: the plan of the run that
    saved it, `saved_by`). A rerun of the saving run keeps its plan; a history without a
    plan (none yet, one from before plans, another cycle) starts a new chain."""
    if cycle < 1:
        raise ValueError(f"state_refresh_runs = {cycle}: at least 1")
    if saved_cycle != cycle or saved_index is None or not saved_chain:
        return StateRefresh(cycle, 0, (run_id,))
    if saved_by == run_id:
        return StateRefresh(cycle, saved_index, tuple(saved_chain))
    chain = (*[r for r in saved_chain if r != run_id], run_id)
    return StateRefresh(cycle, saved_index + 1, chain[-cycle:])
