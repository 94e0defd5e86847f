"""What a nightly run costs against the first run (`make bench-nightly`).

    python -m jobs.bench.nightly --preset bench [--seed N] [--share 0.01]

1. the preset's cached log (`jobs.bench.core.cached_log`), split at a `seq` boundary into
   the first 99% and the last 1% (`--share`) of its rows, as two files;
2. the first run (`day1`) over the 99% with a checkpoint, then the night (`day2`) over the
   1% with the same checkpoint, each in its own process, timed, memory sampled;
3. a full replay of both files without a checkpoint (`full`): the night's state tables
   (`partition_states`, `replica_states`) must equal the full replay's, row for row; the
   bench exits 1 when they do not;
4. the figures go to `bench.json` under `nightly.<preset>`.

Figures are measurements; the only assertion is the equality of the state tables.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from jobs.bench.core import (
    BENCH_JSON,
    BENCH_MARKDOWN,
    CACHE,
    REPO_ROOT,
    bench_file,
    cached_log,
    read_log,
)
from jobs.bench.job import record_section, run_spark
from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.store.latest_state_arrow import arrow_state
from schemas.tables import STATE_TABLES

WORK = REPO_ROOT / "out" / "bench-nightly"


def split_log(events_dir: Path, target: Path, share: float) -> tuple[Path, Path, int, int]:
    """The log as two files: rows with seq below the cut, then the rest (the night). The
    cut is a seq, so one controller event never spans both."""
    table = read_log(events_dir).sort_by([("seq", "ascending")])
    cut = table.column("seq")[int(table.num_rows * (1 - share))].as_py()
    first = table.filter(pc.less(table.column("seq"), cut))
    night = table.filter(pc.greater_equal(table.column("seq"), cut))
    shutil.rmtree(target, ignore_errors=True)
    (target / "events").mkdir(parents=True)
    pq.write_table(first, target / "events" / "part-00000.parquet")
    night_file = target / "night.parquet"  # moved into events/ before the night
    pq.write_table(night, night_file)
    return target / "events", night_file, first.num_rows, night.num_rows


def state_rows(out_dir: Path, table: str, run_id: str) -> list[str]:
    """The whole state after `run_id` (a night's own rows plus its earlier runs')."""
    rows = arrow_state(out_dir, table, run_id).drop_columns(["run_id"])
    return sorted(map(repr, rows.to_pylist()))


def run_nightly(preset: str, seed: int, share: float, buckets: int | None,
                work_root: Path = WORK, cache: Path = CACHE) -> dict[str, Any]:
    """Day 1, the night and the full replay, each a `jobs.replay` process (`run_spark`)."""
    events_dir, _ = cached_log(preset, seed, cache)
    load_before = os.getloadavg()[0]
    work = work_root / preset
    events, night_file, first_rows, night_rows = split_log(events_dir, work, share)
    checkpoint = ["--checkpoint", str(work / "checkpoint")]
    shutil.rmtree(work / "checkpoint", ignore_errors=True)
    print(f"[nightly] day1: {first_rows:,} rows", flush=True)
    day1 = run_spark(events, work / "tables", buckets, "day1", checkpoint)
    night_file.rename(events / "part-00001.parquet")
    print(f"[nightly] day2: {night_rows:,} rows", flush=True)
    day2 = run_spark(events, work / "tables", buckets, "day2", checkpoint, clear=False)
    print("[nightly] full replay", flush=True)
    full = run_spark(events, work / "full", buckets, "day2")
    equal = {t: state_rows(work / "tables", t, "day2") == state_rows(work / "full", t, "day2")
             for t in STATE_TABLES}
    return {
        "preset": preset, "first_rows": first_rows, "night_rows": night_rows,
        "first_seconds": day1.get("spark_seconds"), "night_seconds": day2.get("spark_seconds"),
        "full_seconds": full.get("spark_seconds"),
        "night_share_of_first": round(day2["spark_seconds"] / day1["spark_seconds"], 3),
        "state_tables_equal_full_replay": equal,
        "load_avg_1m": {"start": round(load_before, 2), "end": round(os.getloadavg()[0], 2)},
        "first": day1, "night": day2, "full": full,
    }  # fmt: skip


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = command_parser("python -m jobs.bench.nightly", __doc__)
    ap.add_argument("--preset", default="bench")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--share", type=float, default=0.01, help="the night's share of the log")
    ap.add_argument("--buckets", type=int, help="replay groups (default: the job's config)")
    ap.add_argument("--json", default=str(BENCH_JSON))
    ap.add_argument("--markdown", default=str(BENCH_MARKDOWN))
    ap.add_argument("--work", default=str(WORK), help="where the split log and tables go")
    ap.add_argument("--cache", default=str(CACHE), help="where simulated logs are cached")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return run_job("bench-nightly", None if argv is None else list(argv), run_bench_nightly)


def run_bench_nightly(argv: list[str], _spark: object) -> int:
    args = parse_args(argv)
    result = run_nightly(args.preset, args.seed, args.share, args.buckets, Path(args.work),
                         Path(args.cache))
    # BENCHMARKS.md's nightly table comes from bench.json's `nightly` section.
    record_section("nightly", args.preset, result, bench_file(args.json),
                   bench_file(args.markdown))
    print(f"[nightly] first run {result['first_seconds']} s ({result['first_rows']:,} rows), "
          f"night {result['night_seconds']} s ({result['night_rows']:,} rows): "
          f"{result['night_share_of_first']:.1%} of the first run; memory "
          f"{result['night'].get('memory_mb')}; state tables equal a full replay: "
          f"{result['state_tables_equal_full_replay']}")
    ok = all(r.get("rc") == 0 for r in (result["first"], result["night"], result["full"]))
    if not all(result["state_tables_equal_full_replay"].values()):
        print("[nightly] ERROR: the night's state tables differ from a full replay's",
              file=sys.stderr)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
