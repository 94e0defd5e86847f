"""Reading the replay's (and the audit's and the what-if's) Parquet tables with pyarrow.

Every table is a directory `<root>/<table>/run_id=<id>/`. The partitioning is declared with
`run_id` as a string, so a run id such as `20240101` stays the text it was written as; every
read filters on one run id and selects only the columns it needs. Large tables are never
read whole: `grouped_count` and `first_rows` fold one record batch at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from jobs.common.exitcodes import BadInput
from jobs.store.layout import RUN_PARTITIONING


class ReportInputError(BadInput):
    """An input the report cannot read: the message is the one line the command prints."""


def open_table(root: Path, name: str) -> ds.Dataset:
    """The table `name` under `root`, or ReportInputError when it is missing or unreadable."""
    path = root / name
    if not path.is_dir():
        raise ReportInputError(f"missing table {name!r}: no directory {path}")
    try:
        return ds.dataset(str(path), format="parquet", partitioning=RUN_PARTITIONING)
    except (OSError, pa.ArrowException) as error:
        raise ReportInputError(f"unreadable table {name!r} at {path}: {error}") from error


def run_filter(run_id: str) -> pc.Expression:
    return pc.field("run_id") == run_id


def _present(dataset: ds.Dataset, columns: Sequence[str]) -> list[str]:
    names = set(dataset.schema.names)
    return [c for c in columns if c in names]


def scanner(
    dataset: ds.Dataset,
    run_id: str,
    columns: Sequence[str],
    where: pc.Expression | None = None,
) -> ds.Scanner:
    """A scan of one run's rows, `columns` only (those the table has), optionally filtered."""
    condition = run_filter(run_id) if where is None else run_filter(run_id) & where
    return dataset.scanner(columns=_present(dataset, columns), filter=condition)


def read(
    dataset: ds.Dataset,
    run_id: str,
    columns: Sequence[str],
    where: pc.Expression | None = None,
) -> pa.Table:
    """One run's rows of a small table (or a filtered slice of a large one)."""
    try:
        return scanner(dataset, run_id, columns, where).to_table()
    except (OSError, pa.ArrowException) as error:
        raise ReportInputError(f"unreadable table: {error}") from error


def batches(scan: ds.Scanner) -> Iterator[pa.Table]:
    """The scan's non-empty record batches, each as a Table."""
    try:
        for batch in scan.to_batches():
            if batch.num_rows:
                yield pa.Table.from_batches([batch])
    except (OSError, pa.ArrowException) as error:
        raise ReportInputError(f"unreadable table: {error}") from error


def grouped_count(scan: ds.Scanner, keys: Sequence[str]) -> pa.Table:
    """Rows per distinct `keys` (column `rows`), folded one batch at a time."""
    partials = [
        batch.group_by(list(keys)).aggregate([([], "count_all")]) for batch in batches(scan)
    ]
    if not partials:
        empty = {k: pa.array([], scan.projected_schema.field(k).type) for k in keys}
        return pa.table({**empty, "rows": pa.array([], pa.int64())})
    merged = pa.concat_tables(partials).group_by(list(keys)).aggregate(
        [("count_all", "sum")]
    )
    return merged.rename_columns([*keys, "rows"]).select([*keys, "rows"])


def first_rows(scan: ds.Scanner, sort_keys: Sequence[str], limit: int) -> pa.Table:
    """The first `limit` rows of the scan in `sort_keys` order (ascending), kept to `limit`
    rows per batch so a large table is never held whole."""
    kept: pa.Table | None = None
    order = [(k, "ascending") for k in sort_keys]
    for batch in batches(scan):
        merged = batch if kept is None else pa.concat_tables([kept, batch])
        kept = merged.sort_by(order).slice(0, limit)
    if kept is None:
        return scan.projected_schema.empty_table()
    return kept


def newest_run_id(run_summary: ds.Dataset) -> str:
    """The run id of the run that finished last (ties: the greatest run id)."""
    table = run_summary.to_table(columns=["run_id", "finished_at"])
    if table.num_rows == 0:
        raise ReportInputError("run_summary holds no run")
    ordered = table.sort_by([("finished_at", "descending"), ("run_id", "descending")])
    return str(ordered.column("run_id")[0].as_py())


def microseconds(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """A timestamp column as int64 microseconds since the epoch (nulls kept)."""
    return pc.cast(pc.cast(column, pa.timestamp("us"), safe=False), pa.int64())


def refuse_variants(root: Path, names: Sequence[str], flag: str, hint: str) -> None:
    """ReportInputError when a table under `root` has a `variant` column: a what-if output
    (`jobs.whatif` writes every replay table once per variant), whose rows the page would
    add up as one cluster, so an outage of one variant would read as the cluster's."""
    for name in names:
        if (root / name).is_dir() and "variant" in open_table(root, name).schema.names:
            raise ReportInputError(
                f"{flag} {root} is a what-if output (table {name!r} has a 'variant' column); "
                f"{hint}")


def _finished_at(root: Path) -> dict[str, int]:
    """Each run's latest `finished_at` in `root`'s run_summary (none if it has none)."""
    if not (root / "run_summary").is_dir():
        return {}
    table = open_table(root, "run_summary").to_table(columns=["run_id", "finished_at"])
    table = table.filter(pc.is_valid(table.column("finished_at")))
    latest = pa.table({"run_id": table.column("run_id"),
                       "at": microseconds(table.column("finished_at"))})
    latest = latest.group_by(["run_id"]).aggregate([("at", "max")])
    return dict(zip(latest.column("run_id").to_pylist(), latest.column("at_max").to_pylist(),
                    strict=True))


def latest_run_id(root: Path, name: str) -> str:
    """The run of table `name` that finished last by `root`'s run_summary; a run with no
    summary row ranks by when its files were written (ties: the greatest run id)."""
    dataset = open_table(root, name)
    written: dict[str, int] = {}
    for fragment in dataset.get_fragments():
        keys = ds.get_partition_keys(fragment.partition_expression)
        run = str(keys.get("run_id"))
        written[run] = max(written.get(run, 0), Path(fragment.path).stat().st_mtime_ns)
    if not written:
        raise ReportInputError(f"{root / name} holds no run")
    finished = _finished_at(root)
    return max(written, key=lambda run: (run in finished, finished.get(run, 0),
                                         written[run], run))
