"""The roll-ups written after the stream, `incidents` and `changes`, from the run's own
rows and the carry of the runs before it (`jobs.engine.rollup_carry`); then the carry after
the run, for the next one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pyspark.sql import SparkSession

from jobs.engine.changes_query import leaders_after_on_executors
from jobs.engine.changes_table import DRIVER_ROWS, on_executors, write_changes
from jobs.engine.incidents_query import incidents_on_executors
from jobs.engine.incidents_table import (
    incident_batches,
    read_elections,
    read_windows,
    run_incidents,
)
from jobs.engine.log_checks import SeqFacts
from jobs.engine.log_history import History
from jobs.engine.rollup_carry import (
    LEADER_CAUSES,
    Carry,
    carry_after,
    carry_of_runs,
    load_carry,
    save_carry,
)
from jobs.store.run_reads import run_row_count
from jobs.store.tables import write_arrow
from statemachine.cluster import ClusterTimeline


@dataclass(frozen=True)
class CarryIn:
    """The carry a run starts from, and the run that wrote it (None: none was read)."""

    carry: Carry
    written_by: str | None


def carry_in(checkpoint: str, out_dir: str, run_id: str, history: History | None,
             committed: Callable[[], list[str]]) -> CarryIn:
    """The carry of the run the history names (a rerun of the saving run: the one that run
    read). Without one (a checkpoint from before carries), built from every committed
    run's tables but this one's; none: an empty carry."""
    if history is not None:
        source = history.rollup_from if history.run_id == run_id else (
            history.run_id if history.carried else None)
        if source is not None:
            found = load_carry(checkpoint, source)
            if found is not None:
                return CarryIn(found, source)
    earlier = [r for r in committed() if r != run_id] if history is not None else []
    return CarryIn(carry_of_runs(out_dir, earlier) if earlier else Carry(), None)


def write_rollups(checkpoint: str, out_dir: str, run_id: str, start: CarryIn,
                  as_of: dict[str, int | None], facts: Mapping[str, SeqFacts],
                  timelines: Mapping[str, ClusterTimeline], spark: SparkSession | None = None,
                  driver_rows: int = DRIVER_ROWS) -> None:
    """Write the run's `incidents` and `changes`, then the carry after the run. With
    `spark`, a run that wrote more than `driver_rows` rows to a table rolls it up on the
    executors (`incidents_query`, `changes_query`): the driver then holds the incidents'
    rows and the open ones' windows, not every window."""
    carry = start.carry
    elections = [*carry.elections, *read_elections(out_dir, [run_id])]
    if spark is not None and run_row_count(out_dir, "partition_windows", run_id) > driver_rows:
        found, still_open = incidents_on_executors(spark, out_dir, run_id, carry.windows,
                                                   elections, as_of)
        # The open incidents' windows are all `carry_after` keeps of the windows read.
        reads = [(c, "", w) for c, w in still_open]
    else:
        reads = [(c, "", w) for c, w in carry.windows] + read_windows(out_dir, [run_id])
        found = run_incidents(reads, elections, run_id, as_of)
    write_arrow(incident_batches(found, run_id), out_dir, "incidents", run_id)
    write_changes(out_dir, run_id, carry, facts, timelines, spark, driver_rows)
    leaders = leaders_after_on_executors(spark, out_dir, run_id, carry.leaders, LEADER_CAUSES) \
        if spark is not None and on_executors(out_dir, run_id, driver_rows) else None
    save_carry(checkpoint, run_id, carry_after(carry, out_dir, run_id, reads, elections, leaders))
