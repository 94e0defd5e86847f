"""The core bench does the job's work: every output row of the fold becomes a row of an
Arrow batch of its table, as the job's group function builds them."""

from __future__ import annotations

from pathlib import Path

from jobs.bench.core import fold_groups, group_log, read_log, run_core, sort_log
from jobs.engine.group_fn import EVENT_TABLES, STATE_TABLES
from jobs.sim.cli import write_log


def test_every_output_row_is_converted_to_arrow(tmp_path: Path) -> None:
    write_log(str(tmp_path), preset="tiny", seed=3)
    fig = run_core(tmp_path, buckets=4)
    folded = fold_groups(group_log(sort_log(read_log(tmp_path)), buckets=4), keep_outputs=True)
    every_row = sum(len(getattr(out, attr)) for out in folded.outputs.values()
                    for attr, _ in STATE_TABLES + EVENT_TABLES)
    assert fig["rows_out"] == every_row
    assert fig["rows_out"] > 0 and fig["stages_s"]["arrow"] > 0
    assert fig["core_events_per_s"] <= fig["core_fold_only_events_per_s"]
