"""A month of nights on one checkpoint: does a night's cost stay flat (`make bench-month`)?

    python -m jobs.bench.month --preset bench [--nights 30] [--seed N] [--no-full]
                               [--stop-after K] [--config FILE]

1. the preset's cached log (`jobs.bench.core.cached_log`), sorted by `seq` and cut into
   `--nights` parts of (nearly) equal rows, each cut at a `seq` boundary (one controller
   event never spans two nights), one Parquet file per night;
2. night after night, the night's file is moved into the log and `jobs.replay` runs on
   the same `--checkpoint` and `--out` (run ids `n01`, `n02`, ...), each in its own
   process started by `jobs.bench.proc_io`, which accounts for the whole process tree:
   wall time, CPU seconds, bytes read and written (`/proc/self/io` of the reaper, which
   holds every reaped descendant's);
3. around each night, every file under `--checkpoint` and `--out` is listed: the bytes of
   the files a night created or rewrote (by component: `history.json`, `query/state`,
   `query/sources`, each table ...) and the size of each component after it;
4. then (unless `--no-full`) a full replay of the whole log without a checkpoint: the state
   after the last night (`jobs.store.latest_state_arrow.arrow_state`) must equal it, row for
   row, or the bench exits 1;
5. the figures go to `bench.json` under `month.<preset>`, and BENCHMARKS.md's generated
   part shows them (`jobs.bench.month_report`).

The ratios compared are the last night's over the second's (the first night starts the
checkpoint). Figures are measurements: the only assertion is the state's equality.

`--stop-after K` replays only the first K nights of the same cut (nights of the same size,
the full replay then over those K nights' log): a shorter experiment that shows what a
night writes, component by component. `--config FILE` hands the replay another job
settings file (its `spark_conf` names the Spark settings), to compare two settings on the
same nights.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
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
from jobs.bench.job import record_section, run_stages
from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.store.latest_state_arrow import arrow_state
from schemas.tables import STATE_TABLES

WORK = REPO_ROOT / "out" / "bench-month"
# What a night's figures are compared by: the last night's over the second's.
RATIO_KEYS = ("seconds", "cpu_s", "rchar", "wchar", "files_written")


def cut_points(seqs: pa.Array, nights: int) -> list[int]:
    """The first row of each night in `seqs` (sorted): every n/nights rows, moved on to
    the next seq's first row so that no seq spans two nights."""
    values = seqs.to_pylist()
    n = len(values)
    starts = [0]
    for i in range(1, nights):
        at = max(i * n // nights, starts[-1] + 1)
        while 0 < at < n and values[at] == values[at - 1]:
            at += 1
        if at >= n:
            break
        starts.append(at)
    return starts


def cut_log(events_dir: Path, work: Path, nights: int) -> list[tuple[Path, int]]:
    """The log as one file per night under `work/nights/`; (file, rows) per night."""
    table = read_log(events_dir).sort_by([("seq", "ascending")])
    starts = cut_points(table.column("seq").combine_chunks(), nights)
    target = work / "nights"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    files = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else table.num_rows
        path = target / f"night-{i + 1:02d}.parquet"
        pq.write_table(table.slice(start, end - start), path)
        files.append((path, end - start))
    return files


Inventory = dict[str, tuple[int, int]]  # relative path -> (size, mtime_ns)


def inventory(root: Path) -> Inventory:
    found: Inventory = {}
    if not root.is_dir():
        return found
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            found[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return found


def component(relative: str) -> str:
    """What a file belongs to: a checkpoint entry (`query/<part>` for Spark's, the
    generation's own inside a generation) or a table of `--out`."""
    parts = relative.split("/")
    if parts[0].startswith("generation-") and len(parts) > 1:
        parts = parts[1:]
    if parts[0] == "query" and len(parts) > 1:
        return f"query/{parts[1]}"
    return parts[0]


def written(before: Inventory, after: Inventory) -> dict[str, int]:
    """Bytes of the files created or rewritten between the two listings, by component."""
    out: dict[str, int] = {}
    for path, (size, mtime) in after.items():
        if before.get(path) != (size, mtime):
            key = component(path)
            out[key] = out.get(key, 0) + size
    return dict(sorted(out.items()))


def sizes(listing: Inventory) -> dict[str, int]:
    out: dict[str, int] = {}
    for path, (size, _) in listing.items():
        key = component(path)
        out[key] = out.get(key, 0) + size
    return dict(sorted(out.items()))


def run_night(events: Path, out: Path, checkpoint: Path | None, run_id: str,
              buckets: int | None, logs: Path, config: str | None = None) -> dict[str, Any]:
    """One `jobs.replay` process tree, measured by `jobs.bench.proc_io`."""
    result_file = logs / f"{run_id}{'' if checkpoint else '-full'}.json"
    cmd = [sys.executable, "-m", "jobs.bench.proc_io", str(result_file), "--",
           sys.executable, "-m", "jobs.replay", "--events", str(events), "--out", str(out),
           "--run-id", run_id, "--quiet"]
    if checkpoint is not None:
        cmd += ["--checkpoint", str(checkpoint)]
    if buckets:
        cmd += ["--buckets", str(buckets)]
    if config:
        cmd += ["--config", config]
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable)
    log_path = logs / f"{run_id}{'' if checkpoint else '-full'}.log"
    with log_path.open("w") as log:
        subprocess.run(cmd, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                       check=False)
    fig: dict[str, Any] = json.loads(result_file.read_text())
    fig["log"] = str(log_path)
    if fig["rc"] != 0:
        tail = log_path.read_text().splitlines()[-15:]
        print("replay failed:\n  " + "\n  ".join(tail), file=sys.stderr)
        return fig
    summary = pq.read_table(out / "run_summary" / f"run_id={run_id}").to_pylist()
    fig["stages_s"] = run_stages(summary)
    fig["rows_read"] = sum(r["rows_read"] for r in summary)
    fig["state_runs"] = max((len(r["state_runs"] or []) for r in summary), default=0)
    return fig


def state_rows(out_dir: Path, table: str, run_id: str) -> list[str]:
    rows = arrow_state(out_dir, table, run_id).drop_columns(["run_id"])
    return sorted(map(repr, rows.to_pylist()))


def night_figures(fig: dict[str, Any], rows: int, ckpt: tuple[Inventory, Inventory],
                  out: tuple[Inventory, Inventory], load: tuple[float, float]
                  ) -> dict[str, Any]:
    wrote_ckpt, wrote_out = written(*ckpt), written(*out)
    io = fig.get("io", {})
    return {
        "rows": rows, "rc": fig["rc"], "seconds": fig["seconds"], "cpu_s": fig.get("cpu_s"),
        "rchar": io.get("rchar"), "wchar": io.get("wchar"),
        "read_bytes": io.get("read_bytes"), "write_bytes": io.get("write_bytes"),
        "files_written": sum(wrote_ckpt.values()) + sum(wrote_out.values()),
        "checkpoint_written": wrote_ckpt, "out_written": wrote_out,
        "checkpoint_sizes": sizes(ckpt[1]), "out_sizes": sizes(out[1]),
        "stages_s": fig.get("stages_s", {}), "state_runs": fig.get("state_runs"),
        "peak_rss_mb": fig.get("peak_rss_mb"),
        "load_avg_1m": {"start": round(load[0], 2), "end": round(load[1], 2)},
    }  # fmt: skip


def run_month(preset: str, seed: int, nights: int, buckets: int | None, full: bool,
              work: Path, cache: Path, stop_after: int | None = None,
              config: str | None = None) -> dict[str, Any]:
    events_dir, _ = cached_log(preset, seed, cache)
    load_before = os.getloadavg()[0]
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    shutil.rmtree(work, ignore_errors=True)
    files = cut_log(events_dir, work, nights)[:stop_after]
    events, out, checkpoint, logs = (work / "events", work / "tables", work / "checkpoint",
                                     work / "logs")
    for d in (events, logs):
        d.mkdir(parents=True)
    per_night: list[dict[str, Any]] = []
    for i, (path, rows) in enumerate(files, start=1):
        run_id = f"n{i:02d}"
        path.rename(events / path.name)
        ckpt_before, out_before = inventory(checkpoint), inventory(out)
        load = os.getloadavg()[0]
        fig = run_night(events, out, checkpoint, run_id, buckets, logs, config)
        night = night_figures(fig, rows, (ckpt_before, inventory(checkpoint)),
                              (out_before, inventory(out)), (load, os.getloadavg()[0]))
        per_night.append(night)
        print(f"[month] {run_id}: {rows:,} rows, {night['seconds']} s, cpu {night['cpu_s']} s,"
              f" read {_mb(night['rchar'])}, wrote {_mb(night['wchar'])} "
              f"(files {_mb(night['files_written'])}), state_runs {night['state_runs']}, "
              f"load {night['load_avg_1m']['end']}", flush=True)
        if fig["rc"] != 0:
            break
    result: dict[str, Any] = {
        "preset": preset, "seed": seed, "nights": len(per_night), "measured_at": started,
        "cut_into": nights, "config": config,
        "per_night": per_night,
        "load_avg_1m": {"start": round(load_before, 2), "end": round(os.getloadavg()[0], 2)},
    }
    if len(per_night) >= 2:
        second, last = per_night[1], per_night[-1]
        result["last_over_second"] = {
            k: round(last[k] / second[k], 3) if second.get(k) else None for k in RATIO_KEYS}
    if full and per_night and per_night[-1]["rc"] == 0:
        run_id = f"n{len(per_night):02d}"
        fig = run_night(events, work / "full", None, run_id, buckets, logs, config)
        result["full"] = {"seconds": fig["seconds"], "cpu_s": fig.get("cpu_s"), "rc": fig["rc"]}
        if fig["rc"] == 0:
            result["state_tables_equal_full_replay"] = {
                t: state_rows(out, t, run_id) == state_rows(work / "full", t, run_id)
                for t in STATE_TABLES}
    return result


def _mb(n: int | None) -> str:
    return "-" if n is None else f"{n / 1e6:.1f} MB"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = command_parser("python -m jobs.bench.month", __doc__)
    ap.add_argument("--preset", default="bench")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nights", type=int, default=30)
    ap.add_argument("--buckets", type=int, help="replay groups (default: the job's config)")
    ap.add_argument("--stop-after", type=int, metavar="K",
                    help="replay only the first K nights of the cut")
    ap.add_argument("--config", help="job settings TOML handed to each replay (default: "
                    "the replay's own)")
    ap.add_argument("--no-full", action="store_true",
                    help="skip the full replay the last night's state is compared with")
    ap.add_argument("--json", default=str(BENCH_JSON))
    ap.add_argument("--markdown", default=str(BENCH_MARKDOWN))
    ap.add_argument("--work", default=str(WORK), help="where the nights, checkpoint and "
                    "tables go")
    ap.add_argument("--cache", default=str(CACHE), help="where simulated logs are cached")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return run_job("bench-month", None if argv is None else list(argv), run_bench_month)


def run_bench_month(argv: list[str], _spark: object) -> int:
    args = parse_args(argv)
    result = run_month(args.preset, args.seed, args.nights, args.buckets, not args.no_full,
                       Path(args.work) / args.preset, Path(args.cache), args.stop_after,
                       args.config)
    record_section("month", args.preset, result, bench_file(args.json),
                   bench_file(args.markdown))
    ratios = result.get("last_over_second", {})
    print(f"[month] {result['nights']} nights; last night over the second: {ratios}; "
          f"state equals a full replay: {result.get('state_tables_equal_full_replay')}")
    ok = all(n["rc"] == 0 for n in result["per_night"])
    equal = result.get("state_tables_equal_full_replay")
    if equal is not None and not all(equal.values()):
        print("[month] ERROR: the last night's state differs from a full replay's",
              file=sys.stderr)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
