"""Time the Spark replay job against the pure core on the same simulated log (`make bench`).

    python -m jobs.bench --preset bench|large [--seed N] [--buckets N] [--skip-spark]

1. the preset's log, simulated once and cached (`jobs.bench.core.cached_log`);
2. the pure core in a subprocess (`python -m jobs.bench.core --json`: read, sort, group, fold);
3. the Spark job end to end (`python -m jobs.replay`, local[*]) in a subprocess, with the
   memory of the driver (python + JVM) and of the Python workers sampled with `ps`;
4. prints the figures, writes `bench.json` (this run at the top level, every preset measured
   so far under `runs`) and rewrites the generated part of `BENCHMARKS.md` (the machine,
   bench and large side by side), keeping its dated log (`LOG_MARKER` and below) as it is.

Figures, never assertions: nothing here fails because a number is low.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow.parquet as pq

from jobs.bench.core import BENCH_JSON, BENCH_MARKDOWN, REPO_ROOT, bench_file, cached_log
from jobs.bench.kraft_report import kraft_table
from jobs.bench.month_report import month_table
from jobs.bench.process_tree import ResourceUsage, TreeSampler
from jobs.common.cli import command_parser
from jobs.common.command import run_job

RUN_ID = "bench"
# The sections of bench.json other commands than `make bench` write: kept across runs, not
# this run's.
SECTIONS = ("runs", "nightly", "whatif", "core_runs", "month", "kraft")


def run_spark(events_dir: Path, out_dir: Path, buckets: int | None, run_id: str = RUN_ID,
              extra: Sequence[str] = (), clear: bool = True) -> dict[str, Any]:
    """The replay job in a subprocess (`extra`: more arguments, e.g. a checkpoint), timed,
    its memory and CPU sampled per role (`jobs.bench.process_tree`); its stages from its
    `run_summary`."""
    if clear:
        shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [sys.executable, "-m", "jobs.replay", "--events", str(events_dir),
           "--out", str(out_dir), "--run-id", run_id, *extra]  # fmt: skip
    if buckets:
        cmd += ["--buckets", str(buckets)]
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable)  # fmt: skip
    log_path = out_dir.parent / f"{out_dir.name}-{run_id}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    usage = ResourceUsage()
    with log_path.open("w") as log:
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT)  # fmt: skip
        sampler = TreeSampler(proc.pid)
        sampler.start()
        rc = proc.wait()
        sampler.stop()
    seconds = time.perf_counter() - t0
    fig: dict[str, Any] = {"rc": rc, "spark_seconds": round(seconds, 2), "log": str(log_path),
                           **process_figures(sampler, usage)}  # fmt: skip
    if rc != 0:
        tail = log_path.read_text().splitlines()[-15:]
        print("Spark job failed:\n  " + "\n  ".join(tail), file=sys.stderr)
        return fig
    summary = pq.read_table(out_dir / "run_summary").to_pylist()
    mine = [r for r in summary if str(r.get("run_id")) == run_id] or summary
    stages = run_stages(mine)
    fig["spark_stages_s"] = stages
    fig["rows_read"] = sum(r["rows_read"] for r in mine)
    fig["rows_applied"] = sum(r["rows_applied"] for r in mine)
    fig["batches"] = max((r["batches"] for r in mine), default=0)
    fig["spark_job_seconds"] = stages.get("total", seconds)
    return fig


def process_figures(sampler: TreeSampler, usage: ResourceUsage) -> dict[str, Any]:
    """A finished job's peaks and CPU seconds per role. `cpu_s.total` is the larger of the
    sampled sum and the CPU of the reaped processes (`jobs.bench.process_tree`)."""
    cpu = sampler.figures.cpu_s()
    reaped = usage.seconds()
    return {"memory_mb": {k: round(v) for k, v in sampler.figures.peak_mb.items()},
            "python_workers_max": sampler.figures.max_workers,
            "cpu_s": {**cpu, "sampled": cpu["total"], "reaped": reaped,
                      "total": max(cpu["total"], reaped)}}


def run_core(events_dir: Path, buckets: int | None) -> dict[str, Any]:
    """`jobs.bench.core --json` in a subprocess; `core_cpu_s`: that whole process's CPU
    seconds (imports and the read included, as the Spark job's figure includes its start)."""
    cmd = [sys.executable, "-m", "jobs.bench.core", "--events", str(events_dir), "--json"]
    if buckets:
        cmd += ["--buckets", str(buckets)]
    usage = ResourceUsage()
    out = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "core_cpu_s": usage.seconds()}


def machine() -> dict[str, str]:
    def first_line(cmd: list[str]) -> str:
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=30)
            return (r.stdout or r.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "unknown"

    mem = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    import pyspark

    return {
        "cpus": str(os.cpu_count()),
        "memory": mem,
        "cpu_model": next(
            (
                ln.split(":", 1)[1].strip()
                for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")
            ),
            platform.processor() or "unknown",
        ),  # fmt: skip
        "os": platform.platform(),
        "python": platform.python_version(),
        "java": first_line(["java", "-version"]),
        "pyspark": pyspark.__version__,
    }


# BENCHMARKS.md is a generated part (above this line) and a dated log (this line and below):
# each run rewrites the generated part and copies the log as it finds it.
LOG_MARKER = "<!-- log: kept by make bench -->"
LOG_START = f"""{LOG_MARKER}
## Log

Dated figures measured by hand, kept as they were taken: `make bench` never rewrites them.
"""

INTRO = """\
# Benchmarks

Generated by `make bench` (`python -m jobs.bench`); `BENCH=large make bench` adds the
large preset. Same simulated log for both engines: (1) the Spark replay job end to end
(`python -m jobs.replay`, `local[*]`, JVM start included), (2) the pure core in one
process (pyarrow read + sort + group + fold + the output rows as Arrow batches, as the
job's workers build them before writing, `python -m jobs.bench.core`).
Events per second = input rows / seconds. Figures from one run on a shared 2-core VM
(other jobs and test suites were often running: see the load average row); expect
±20% between runs on a quiet machine. They are measurements, never test assertions.
"""

NOTES = """\
`ratio` is the Spark job's events/s over the pure core's events/s, where the core run is
pyarrow read + sort + fold + Arrow outputs in one process; the target is a ratio of at
least 1.0. The stricter ratio against the fold and its Arrow outputs alone is shown too.
A column measured before the core bench built the Arrow outputs (no "fold only" figure)
gives the fold alone in its "fold + Arrow outputs" rows.
Spark stages come from the job's `run_summary.stage_seconds` (`replay` includes the
streaming query's shuffle, grouping and Python workers, which also write the tables'
files; `write` is the driver's commit of the staged files). Peak RSS and CPU are read
from `/proc` every 0.25 s (`jobs/bench/process_tree.py`); python workers are summed (pages
shared after fork counted per process). Spark CPU seconds are the whole job's: the driver's
Python, its JVM (in local mode the executors' threads too) and the Python workers, start-up
included; core CPU seconds are the whole `jobs.bench.core` process's (imports, read, sort,
fold, Arrow outputs). The targets: Spark CPU at most 2x the core's, and the driver's peaks
(Python and JVM each) on `large` at most 1.5x those on `bench`.
"""

Run = dict[str, Any]  # one preset's figures, as stored in bench.json


def _n(v: object) -> str:
    return f"{v:,.0f}" if isinstance(v, int | float) else str(v)


def _stages(d: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in d.items())


def _cpu_roles(r: Run) -> str:
    cpu = r["spark"]["cpu_s"]
    return " / ".join(f"{cpu[k]:.1f}" for k in ("driver_jvm", "driver_python", "python_workers"))


def _peaks(memory: dict[str, float]) -> str:
    """A run's peak RSS per process role, as its table's header names them."""
    return " / ".join(_n(memory.get(k)) for k in ("driver_python", "driver_jvm",
                                                   "python_workers"))


def _streaming_events_per_s(r: Run) -> str:
    stages = r["spark"]["spark_stages_s"]
    return _n(r["events"] / (stages["replay"] + stages.get("write", 0)))


# The rows of the results table: label, and the cell of one preset's run.
RESULT_ROWS: tuple[tuple[str, Callable[[Run], str]], ...] = (
    ("measured at (UTC)", lambda r: str(r["measured_at"])),
    ("input rows", lambda r: _n(r["events"])),
    ("partitions", lambda r: _n(r["partitions"])),
    ("Spark job seconds (wall)", lambda r: _n(r["spark_seconds"])),
    ("Spark events/s", lambda r: _n(r["spark_events_per_s"])),
    ("Spark events/s (streaming query only)", _streaming_events_per_s),
    ("Spark partitions/s", lambda r: _n(r["spark_partitions_per_s"])),
    ("core events/s (read + sort + fold + Arrow outputs)",
     lambda r: _n(r["core_events_per_s"])),
    ("core events/s (fold + Arrow outputs)", lambda r: _n(r["core"]["core_events_per_s"])),
    ("core events/s (fold only, no outputs)",
     lambda r: _n(r["core"].get("core_fold_only_events_per_s", "-"))),
    ("core partitions/s", lambda r: _n(r["core"]["core_partitions_per_s"])),
    ("**ratio spark/core**", lambda r: f"**{r['ratio']:.2f}**"),
    ("ratio spark/core (fold + Arrow only)",
     lambda r: f"{r['ratio_fold_only']:.2f}" if r.get("ratio_fold_only") else "-"),
    ("Spark CPU s (driver JVM / driver python / workers)", _cpu_roles),
    ("**Spark CPU s / core CPU s**",
     lambda r: f"**{_n(r['spark_cpu_s'])} / {_n(r['core_cpu_s'])} = {r['cpu_ratio']:.2f}**"),
    ("peak RSS driver JVM (MB)", lambda r: _n(r["spark"]["memory_mb"]["driver_jvm"])),
    ("peak RSS driver python (MB)", lambda r: _n(r["spark"]["memory_mb"]["driver_python"])),
    ("peak RSS python workers (MB, sum)", lambda r: _n(r["spark"]["memory_mb"]["python_workers"])),
    ("peak RSS core process (MB)", lambda r: _n(r["core"]["peak_rss_mb"])),
    ("Spark stages (s)", lambda r: _stages(r["spark"]["spark_stages_s"])),
    ("core stages (s)", lambda r: _stages(r["core"]["stages_s"])),
    ("simulate seconds", lambda r: _n(r["simulate_seconds"])),
    ("load average (1 min) start / end",
     lambda r: f"{r['load_avg_1m']['start']} / {r['load_avg_1m']['end']}"),
)  # fmt: skip


def preset_order(runs: dict[str, Run]) -> list[str]:
    """The known presets smallest first, then any other in name order."""
    order = [p for p in ("tiny", "sample", "bench", "large") if p in runs]
    return order + [p for p in sorted(runs) if p not in order]


def results_table(runs: dict[str, Run]) -> list[str]:
    """One column per preset; a cell whose figure the run lacks (a skipped Spark run) is –."""
    order = preset_order(runs)

    def cell(fn: Callable[[Run], str], run: Run) -> str:
        try:
            return fn(run)
        except (KeyError, TypeError, ZeroDivisionError):
            return "–"

    lines = ["| | " + " | ".join(order) + " |", "|---|" + "---|" * len(order)]
    for label, fn in RESULT_ROWS:
        lines.append(f"| {label} | " + " | ".join(cell(fn, runs[p]) for p in order) + " |")
    return lines


def kept_log(markdown: Path) -> str:
    """The log part of an existing BENCHMARKS.md (from LOG_MARKER on), or a new one."""
    text = markdown.read_text() if markdown.is_file() else ""
    at = text.find(LOG_MARKER)
    return text[at:] if at >= 0 else LOG_START


def nightly_table(nightly: dict[str, Run]) -> list[str]:
    """`make bench-nightly`: one row per preset measured."""
    if not nightly:
        return []
    lines = ["## Nightly run (`make bench-nightly`)", "",
             "| preset | first run rows | seconds | night rows | seconds | night / first "
             "| state tables = full replay | peak RSS night: driver python / JVM / workers (MB) "
             "| night stages (s) | load average (1 min) start / end |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for preset in preset_order(nightly):
        r = nightly[preset]
        memory = r["night"].get("memory_mb", {})
        lines.append(
            f"| {preset} | {_n(r['first_rows'])} | {_n(r['first_seconds'])} | "
            f"{_n(r['night_rows'])} | {_n(r['night_seconds'])} | "
            f"{r['night_share_of_first']:.1%} | "
            f"{all(r['state_tables_equal_full_replay'].values())} | "
            f"{_peaks(memory)} | "
            f"{_stages(r['night'].get('spark_stages_s') or {})} | "
            f"{_load(r.get('load_avg_1m'))} |")
    return [*lines, ""]


def whatif_table(whatif: dict[str, Run]) -> list[str]:
    """`make bench-whatif`: one row per preset measured."""
    if not whatif:
        return []
    lines = ["## What-if sweep (`make bench-whatif`)", "",
             "`fail_each_broker` at the log's midpoint (one variant per broker plus the "
             "baseline) in one `jobs.whatif` run, against one plain `jobs.replay` of the same "
             "log, one after the other in one `make bench-whatif`, each its own process; a "
             "row named `<preset> fail_each_rack` fails each rack instead (`--sweep "
             "fail_each_rack --racks N`, the brokers dealt round-robin into N racks).", "",
             "| preset | measured at (UTC) | variants | one replay (s) | sweep (s) "
             "| sweep / replay | sweep stages (s) "
             "| peak RSS sweep: driver python / JVM / workers (MB) "
             "| exit codes replay / sweep |",
             "|---|---|---|---|---|---|---|---|---|"]
    for preset in preset_order(whatif):
        r = whatif[preset]
        memory = r["sweep"].get("memory_mb", {})
        lines.append(
            f"| {preset} | {r['measured_at']} | {r['variants']} | {_n(r['replay_seconds'])} | "
            f"{_n(r['sweep_seconds'])} | {r['sweep_over_replay']:.2f} | "
            f"{_stages(r['sweep'].get('stages_s', {}))} | "
            f"{_peaks(memory)} | "
            f"{r['replay'].get('rc')} / {r['sweep'].get('rc')} |")
    return [*lines, ""]


def _load(load: dict[str, float] | None) -> str:
    return f"{load['start']} / {load['end']}" if load else "-"


def render_markdown(runs: dict[str, Run], mach: dict[str, str], log: str = LOG_START,
                    nightly: dict[str, Run] | None = None,
                    whatif: dict[str, Run] | None = None,
                    month: dict[str, Run] | None = None,
                    kraft: dict[str, Run] | None = None) -> str:
    """The generated part (the machine and the results table), then `log` unchanged."""
    lines = [
        INTRO,
        "## Machine",
        "",
        *(f"- {k}: {v}" for k, v in mach.items()),
        "",
        "## Results",
        "",
        *results_table(runs),
        "",
        NOTES,
        *nightly_table(nightly or {}),
        *whatif_table(whatif or {}),
        *month_table(month or {}),
        *kraft_table(kraft or {}),
    ]
    return "\n".join(lines) + "\n" + log


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = command_parser("python -m jobs.bench", __doc__)
    ap.add_argument("--preset", default="bench", help="the simulated log's size (jobs.sim)")
    ap.add_argument("--seed", type=int, default=1, help="the simulator's seed")
    ap.add_argument("--buckets", type=int, help="replay groups (default: the job's config)")
    ap.add_argument("--skip-spark", action="store_true",
                    help="time the pure core only, not the Spark job")
    ap.add_argument("--json", default=str(BENCH_JSON),
                    help="the figures as JSON")
    ap.add_argument("--markdown", default=str(BENCH_MARKDOWN),
                    help="the Markdown file whose generated part is rewritten")
    return ap.parse_args(argv)


class Measured(NamedTuple):
    """What one `make bench` measured: the log's counts and each engine's figures."""

    counts: dict[str, Any]  # the simulator's counts of the log
    simulate_seconds: float
    core: dict[str, Any]  # `jobs.bench.core --json`
    spark: dict[str, Any]  # `run_spark`; empty with --skip-spark


def measure(args: argparse.Namespace) -> Measured:
    """The log (simulated once, then cached), the pure core, then the Spark job."""
    t0 = time.perf_counter()
    events_dir, counts = cached_log(args.preset, args.seed)
    sim_s = counts.get("seconds") or round(time.perf_counter() - t0, 1)
    print(f"[bench] log {events_dir}: {counts['events']:,} rows, "
          f"{counts['partitions']:,} partitions, {counts['files']} files", flush=True)  # fmt: skip

    print("[bench] pure core ...", flush=True)
    core = run_core(events_dir, args.buckets)
    print(f"[bench] core: {core['core_events_per_s']:,} events/s (fold + Arrow), stages "
          f"{core['stages_s']}, peak RSS {core['peak_rss_mb']} MB", flush=True)  # fmt: skip

    spark: dict[str, Any] = {}
    if not args.skip_spark:
        print("[bench] Spark replay job ...", flush=True)
        spark = run_spark(events_dir, REPO_ROOT / "out" / f"bench-{args.preset}-tables",
                          args.buckets)  # fmt: skip
        print(f"[bench] spark: {spark.get('spark_seconds')} s, memory {spark.get('memory_mb')}, "
              f"stages {spark.get('spark_stages_s')}", flush=True)  # fmt: skip
    return Measured(counts, sim_s, core, spark)


def spark_ok(m: Measured) -> bool:
    return bool(m.spark) and m.spark.get("rc") == 0


def figures(preset: str, m: Measured, load_before: float) -> Run:
    """This run's row of bench.json: rates and the ratio from the engines' figures."""
    core, spark, rows = m.core, m.spark, m.core["events"]
    ok = spark_ok(m)
    spark_eps = round(rows / spark["spark_seconds"]) if ok else None
    memory = spark.get("memory_mb", {})
    return {
        "preset": preset,
        "events": rows,
        "partitions": core["partitions"],
        "spark_events_per_s": spark_eps,
        # The core run the ratio is taken against: pyarrow read + sort + fold + the output
        # rows as Arrow batches, one process.
        "core_events_per_s": core["core_events_per_s_end_to_end"],
        "core_fold_events_per_s": core["core_events_per_s"],
        "ratio": round(spark_eps / core["core_events_per_s_end_to_end"], 3)
        if spark_eps else None,
        "ratio_fold_only": round(spark_eps / core["core_events_per_s"], 3) if spark_eps else None,
        "spark_seconds": spark.get("spark_seconds"),
        # CPU seconds of the whole Spark replay (driver JVM and Python, the workers) and of
        # the whole core process; the target: Spark at most twice the core's.
        "spark_cpu_s": spark.get("cpu_s", {}).get("total") if ok else None,
        "core_cpu_s": core.get("core_cpu_s"),
        "cpu_ratio": round(spark["cpu_s"]["total"] / core["core_cpu_s"], 2)
        if ok and core.get("core_cpu_s") else None,
        "peak_rss_mb": {
            "spark_driver_jvm": memory.get("driver_jvm"),
            "spark_driver_python": memory.get("driver_python"),
            "spark_python_workers": memory.get("python_workers"),
            "core": core["peak_rss_mb"],
        },
        "spark_partitions_per_s": round(core["partitions"] / spark["spark_seconds"])
        if ok
        else None,
        "measured_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "simulate_seconds": m.simulate_seconds,
        "load_avg_1m": {"start": round(load_before, 2), "end": round(os.getloadavg()[0], 2)},
        "core": core,
        "spark": spark,
    }  # fmt: skip


def record_section(section: str, preset: str, result: dict[str, Any], json_path: Path,
                   markdown: Path) -> None:
    """`<section>.<preset>` of bench.json replaced by `result` (the nightly, month and
    what-if benches'), then BENCHMARKS.md's generated part written again."""
    data: dict[str, Any] = json.loads(json_path.read_text()) if json_path.is_file() else {}
    data.setdefault(section, {})[preset] = result
    json_path.write_text(json.dumps(data, indent=2) + "\n")
    write_reports({}, json_path, markdown)


def run_stages(summary: list[dict[str, Any]]) -> dict[str, float]:
    """A run's stage seconds from its `run_summary` rows (one per cluster): each stage's
    longest, to the hundredth."""
    stages: dict[str, float] = {}
    for row in summary:
        for k, v in row["stage_seconds"] or []:
            stages[k] = round(max(stages.get(k, 0.0), v), 2)
    return stages


def write_reports(result: Run, json_path: Path, markdown: Path) -> None:
    """bench.json: this run at the top level, every preset measured so far under `runs`;
    BENCHMARKS.md: the generated part from `runs`, the log part kept."""
    old: dict[str, Any] = json.loads(json_path.read_text()) if json_path.is_file() else {}
    runs = dict(old.get("runs", {}))
    if result:
        runs[result["preset"]] = {k: v for k, v in result.items() if k not in SECTIONS}
    else:  # `make bench-nightly`, `bench-whatif`: the last `make bench` run stays on top
        result = {k: v for k, v in old.items() if k not in ("machine", *SECTIONS)}
    nightly, whatif = dict(old.get("nightly", {})), dict(old.get("whatif", {}))
    mach = machine()
    json_path.write_text(json.dumps({**result, "machine": mach, "runs": runs,
                                     "nightly": nightly, "whatif": whatif,
                                     "core_runs": old.get("core_runs", {}),
                                     "month": old.get("month", {}),
                                     "kraft": old.get("kraft", {})}, indent=2) + "\n")
    markdown.write_text(render_markdown(runs, mach, kept_log(markdown), nightly, whatif,
                                        old.get("month", {}), old.get("kraft", {})))


def print_summary(result: Run) -> None:
    spark_eps, core = result["spark_events_per_s"], result["core"]
    print(f"\n{'':28}{'Spark job':>14}{'pure core':>14}")
    print(f"{'events/s':28}{spark_eps or '-':>14}{result['core_events_per_s']:>14}")
    print(f"{'events/s (fold + Arrow)':28}{'':>14}{core['core_events_per_s']:>14}")
    if result["ratio"] is not None:
        print(f"{'ratio spark/core':28}{result['ratio']:>14}")
        print(f"{'ratio (fold + Arrow only)':28}{result['ratio_fold_only']:>14}")


def main(argv: Sequence[str] | None = None) -> int:
    return run_job("bench", None if argv is None else list(argv), run_bench)


def run_bench(argv: list[str], _spark: object) -> int:
    args = parse_args(argv)
    load_before = os.getloadavg()[0]
    measured = measure(args)
    result = figures(args.preset, measured, load_before)
    json_path, markdown = bench_file(args.json), bench_file(args.markdown)
    write_reports(result, json_path, markdown)
    print_summary(result)
    print(f"wrote {json_path} and {args.markdown}")
    return 0 if (spark_ok(measured) or args.skip_spark) else 1
