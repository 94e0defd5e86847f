"""The roll-ups written after the stream, `incidents` and `changes`, from the run's own
rows and the carry of the runs before it (`jobs.engine.rollup_carry`); then the carry after
the run, for the next one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from jobs.engine.changes_table import write_changes
from jobs.engine.incidents_table import (
    incident_batches,
    read_elections,
    read_windows,
    run_incidents,
)
from jobs.engine.log_checks import SeqFacts
from jobs.engine.log_history import History
from jobs.engine.rollup_carry import (
    Carry,
    carry_after,
    carry_of_runs,
    load_carry,
    save_carry,
)
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
                  timelines: Mapping[str, ClusterTimeline]) -> None:
    """Write the run's `incidents` and `changes`, then the carry after the run."""
    carry = start.carry
    reads = [(c, "", w) for c, w in carry.windows] + read_windows(out_dir, [run_id])
    elections = [*carry.elections, *read_elections(out_dir, [run_id])]
    found = run_incidents(reads, elections, run_id, as_of)
    write_arrow(incident_batches(found, run_id), out_dir, "incidents", run_id)
    write_changes(out_dir, run_id, carry, facts, timelines)
    save_carry(checkpoint, run_id, carry_after(carry, out_dir, run_id, reads, elections))
