"""The state tables as they stand after a run, read with pyarrow alone (no Spark: the
report and the benchmarks use it). The rule is `jobs.store.latest_state`'s."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from jobs.store.layout import RUN_PARTITIONING

STATE_KEY = ["cluster", "topic", "partition"]
_AT = "_state_run"


def chain_of(chains: list[list[str] | None], run_id: str) -> list[str]:
    """The run's `state_runs` from its `run_summary` rows (one per cluster, the same list);
    none: the run holds its whole state itself."""
    found = [c for c in chains if c]
    return max(found, key=len) if found else [run_id]


def _dataset(out_dir: str | Path, table: str) -> ds.Dataset:
    return ds.dataset(str(Path(out_dir) / table), format="parquet",
                      partitioning=RUN_PARTITIONING)


def arrow_state_runs(out_dir: str | Path, run_id: str) -> list[str]:
    """`state_runs` read with pyarrow (a local `--out`): from the run's own partition of
    `run_summary`, whose files all have the run's schema."""
    partition = Path(out_dir) / "run_summary" / f"run_id={run_id}"
    if not partition.is_dir():
        return [run_id]
    summary = ds.dataset(str(partition), format="parquet")
    if "state_runs" not in summary.schema.names:
        return [run_id]
    rows = summary.to_table(columns=["state_runs"])
    return chain_of(rows.column("state_runs").to_pylist(), run_id)


def _latest_rows(out_dir: str | Path, rows: pa.Table, runs: list[str]) -> pa.Array:
    """The indices of `rows` written by the last of `runs` that wrote their partition (the
    join keeps to the key columns: Arrow's hash join carries no list columns)."""
    states = _dataset(out_dir, "partition_states").to_table(
        columns=[*STATE_KEY, "run_id"], filter=pc.field("run_id").isin(runs))
    at = pc.index_in(states.column("run_id"), pa.array(runs))
    latest = states.select(STATE_KEY).append_column(_AT, at).group_by(STATE_KEY) \
        .aggregate([(_AT, "max")])
    latest = latest.rename_columns([_AT if n == f"{_AT}_max" else n for n in latest.schema.names])
    keys = rows.select(STATE_KEY).append_column(
        _AT, pc.index_in(rows.column("run_id"), pa.array(runs))).append_column(
        "_row", pa.array(range(rows.num_rows), pa.int64()))
    kept = keys.join(latest, [*STATE_KEY, _AT], join_type="inner").column("_row")
    return pc.take(kept, pc.sort_indices(kept)).combine_chunks()  # in the rows' order


def arrow_state(out_dir: str | Path, table: str, run_id: str) -> pa.Table:
    """`read_state` with pyarrow: `table` after `run_id`, every partition's rows."""
    runs = arrow_state_runs(out_dir, run_id)
    rows = _dataset(out_dir, table).to_table(filter=pc.field("run_id").isin(runs))
    if len(runs) > 1:
        rows = rows.take(_latest_rows(out_dir, rows, runs))
    names = rows.schema.names
    return rows.set_column(names.index("run_id"), "run_id",
                           pa.array([run_id] * rows.num_rows, pa.string()))
