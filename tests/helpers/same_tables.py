"""Two outputs' tables compared row for row with pyarrow, for tests where the tables are the
evidence but not what is under test (a rerun, a killed run, another file layout): reading a
few small partitions with pyarrow costs milliseconds where a Spark comparison costs a job
per table. Rows are compared as sorted lists of canonical tuples (map entries sorted), so a
failure shows the rows that differ."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jobs.bench.same_tables import canonical
from jobs.store.tables import file_schema, parquet_dataset

# Clocks differ from run to run; everything else must not.
CLOCKS = {"run_summary": ("started_at", "finished_at", "stage_seconds")}


def run_rows(out: Path, table: str, run_id: str, drop: Iterable[str] = ()) -> list[tuple[Any, ...]]:
    """The rows `run_id` wrote to `table` under `out` (clocks and `drop` left out), sorted;
    a table the run never wrote has none."""
    data = parquet_dataset(str(out / table / f"run_id={run_id}"), file_schema(table))
    if data is None:
        return []
    leave = {*CLOCKS.get(table, ()), *drop}
    names = [n for n in data.schema.names if n not in leave]
    found = data.to_table(columns=names)
    rows = zip(*(found.column(n).to_pylist() for n in names), strict=True)
    return sorted((tuple(canonical(v) for v in row) for row in rows), key=repr)


def assert_same_tables(got: Path, want: Path, tables: Iterable[str],
                       run_ids: Iterable[str] | None = None,
                       want_run_ids: Iterable[str] | None = None) -> None:
    """Every table of `tables` holds the same rows in `got` as in `want`, run by run
    (`want_run_ids` names the reference's runs when they are called otherwise). Some table
    must hold rows: two empty outputs are not evidence."""
    got_ids = list(run_ids) if run_ids is not None else ["full"]
    want_ids = list(want_run_ids) if want_run_ids is not None else got_ids
    seen = 0
    for table in tables:
        for mine, theirs in zip(got_ids, want_ids, strict=True):
            rows = run_rows(want, table, theirs)
            assert run_rows(got, table, mine) == rows, (table, mine)
            seen += len(rows)
    assert seen > 0, f"no rows in {want}"

