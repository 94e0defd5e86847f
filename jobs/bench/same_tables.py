"""Whether two replays wrote the same tables, row for row (a speed-up must not change them).

    python -m jobs.bench.same_tables --expected DIR --actual DIR --run-id ID

Every table under `--expected` is read with pyarrow from both directories (the run's
partition, `run_id` dropped) and compared as a multiset of rows: each row becomes a digest of
its values (map entries sorted), and the sorted digests must be equal. `run_summary`'s
clocks (`started_at`, `finished_at`, `stage_seconds`) are left out: they differ every run.
Prints one line per table; exit 0 when all are equal, 1 when one differs, 2 when a
directory or table is missing.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds

from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.common.exitcodes import BAD_INPUT, CHECK_FAILED, OK
from jobs.store.layout import RUN_PARTITIONING

CLOCKS = {"run_summary": ("started_at", "finished_at", "stage_seconds")}


def canonical(value: Any) -> Any:
    """A value as a comparable form: maps (lists of pairs) sorted, lists as tuples."""
    if isinstance(value, list):
        items = tuple(canonical(v) for v in value)
        if items and all(isinstance(v, tuple) and len(v) == 2 for v in items):
            return tuple(sorted(items, key=repr))
        return items
    if isinstance(value, dict):
        return tuple(sorted((k, canonical(v)) for k, v in value.items()))
    return value


def row_digests(directory: Path, table: str, run_id: str) -> list[bytes]:
    """The sorted digests of the rows of `table`'s run `run_id` under `directory`."""
    data = ds.dataset(str(directory / table), format="parquet", partitioning=RUN_PARTITIONING)
    names = [n for n in data.schema.names if n != "run_id" and n not in CLOCKS.get(table, ())]
    scanner = data.scanner(columns=names, filter=ds.field("run_id") == run_id)
    digests: list[bytes] = []
    for batch in scanner.to_batches():
        columns = [batch.column(n).to_pylist() for n in names]
        for row in zip(*columns, strict=True):
            text = repr(tuple(canonical(v) for v in row)).encode()
            digests.append(hashlib.blake2b(text, digest_size=16).digest())
    digests.sort()
    return digests


def compare(expected: Path, actual: Path, run_id: str) -> list[tuple[str, int, int, bool]]:
    """(table, expected rows, actual rows, equal) for every table of `expected`."""
    results = []
    for table in sorted(p.name for p in expected.iterdir() if p.is_dir()):
        if not (actual / table).is_dir():
            raise FileNotFoundError(f"{actual / table} is missing")
        want, got = row_digests(expected, table, run_id), row_digests(actual, table, run_id)
        results.append((table, len(want), len(got), want == got))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    return run_job("same-tables", None if argv is None else list(argv), run_same_tables)


def run_same_tables(argv: list[str], _spark: object) -> int:
    ap = command_parser("python -m jobs.bench.same_tables", __doc__)
    ap.add_argument("--expected", required=True, help="tables of the reference replay")
    ap.add_argument("--actual", required=True, help="tables of the replay to check")
    ap.add_argument("--run-id", required=True, help="the run to compare")
    args = ap.parse_args(argv)
    expected, actual = Path(args.expected), Path(args.actual)
    for d in (expected, actual):
        if not (d / "run_summary").is_dir():
            print(f"same_tables: {d} holds no replay's tables (no run_summary)", file=sys.stderr)
            return BAD_INPUT
    run_id = args.run_id
    try:
        results = compare(expected, actual, run_id)
    except FileNotFoundError as exc:
        print(f"same_tables: {exc}", file=sys.stderr)
        return BAD_INPUT
    for table, want, got, equal in results:
        print(f"{table:28} {want:>10,} {got:>10,}  {'same' if equal else 'DIFFERENT'}")
    return OK if all(r[3] for r in results) else CHECK_FAILED


if __name__ == "__main__":
    sys.exit(main())
