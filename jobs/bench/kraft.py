"""Time the KRaft replay job against the single-process KRaft fold on the same simulated
history (`make bench-kraft`).

    python -m jobs.bench.kraft --size sample|small|bench|large [--minutes N] [--seed N]
                               [--skip-spark]

1. the size's history (`jobs.sim.kraft_history.SIZES`), simulated, written as segments and
   ingested (`python -m jobs.ingest`) once, cached under out/bench-logs/kraft-<size>-<seed>;
2. the single-process fold in a subprocess (`--core-json`): the records read with pyarrow
   (`metadata_source.read_clusters`), each cluster folded (`jobs.engine.kraft.fold`), its
   continuity checked, and every table's rows made Arrow batches, as the replay writes
   them; stage by stage, wall and CPU seconds; then, in a second process, the same records
   folded by topic bucket (`jobs.bench.kraft_split`, `--split N` buckets, 0: none);
3. the replay job end to end (`python -m jobs.replay`, local[*]) in a subprocess, its CPU
   and peaks sampled per role (`jobs.bench.job.run_spark`);
4. with `--spark-split`, the by-topic fold on Spark (`jobs.bench.kraft_spark_split`), its
   whole process tree's wall and CPU seconds (`jobs.bench.proc_io`);
5. prints them and writes bench.json's `kraft.<size>` section (BENCHMARKS.md shows it).

Figures, never assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jobs.bench.core import BENCH_JSON, BENCH_MARKDOWN, CACHE, REPO_ROOT, bench_file, peak_rss_mb
from jobs.bench.job import record_section, run_spark
from jobs.bench.process_tree import ResourceUsage
from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.common.exitcodes import BadInput
from jobs.engine.kraft.fold import ClusterRun

RUN_ID = "bench-kraft"
CLUSTER = "sim"


def cached_history(size: str, minutes: int, seed: int,
                   cache: Path = CACHE) -> tuple[Path, dict[str, Any]]:
    """The ingest output folder of the size's history, simulated and ingested on first
    use; `_counts.json` marks it complete."""
    from jobs.sim.kraft_history import SIZES, simulate, write_log

    d = cache / f"kraft-{size}-{minutes}m-{seed}"
    done = d / "_counts.json"
    if done.is_file():
        return d / "ingest", json.loads(done.read_text())
    t0 = time.perf_counter()
    counts: dict[str, Any] = dict(write_log(d / "logs", simulate(
        minutes, seed=seed, size=SIZES[size]), minutes))
    counts["simulate_s"] = round(time.perf_counter() - t0, 1)
    t0 = time.perf_counter()
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    subprocess.run([sys.executable, "-m", "jobs.ingest", "--logs", str(d / "logs"),
                    "--out", str(d / "ingest"), "--cluster", CLUSTER],
                   cwd=REPO_ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    counts["ingest_s"] = round(time.perf_counter() - t0, 1)
    counts["partitions"] = SIZES[size].total_partitions
    done.write_text(json.dumps(counts))
    return d / "ingest", counts


def fold_figures(events: Path, buckets: int = 0) -> dict[str, Any]:
    """The single-process fold of the replay's driver, stage by stage (module docstring);
    with `buckets`, the split figures of each cluster instead (`jobs.bench.kraft_split`)."""
    from jobs.bench.kraft_split import split_figures
    from jobs.engine.kraft.continuity import offset_facts, with_offset_facts
    from jobs.engine.kraft.fold import fold_cluster
    from jobs.engine.kraft.metadata_source import (
        find_kraft_input,
        ingest_noops,
        read_clusters,
        segment_ranges,
    )
    from statemachine.kraft.profiles import kraft_profile_for

    stages: dict[str, float] = {}
    cpu: dict[str, float] = {}

    @contextmanager
    def timed(name: str) -> Iterator[None]:
        t0, c0 = time.perf_counter(), time.process_time()
        yield
        stages[name] = round(time.perf_counter() - t0, 3)
        cpu[name] = round(time.process_time() - c0, 3)

    kraft = find_kraft_input(str(events))
    if kraft is None:
        raise BadInput(f"{events} holds no metadata_records table")
    with timed("read"):
        clusters = read_clusters(kraft)
        noops = ingest_noops(kraft)
    profile = kraft_profile_for("3.7")
    with timed("fold"):
        runs = {c: fold_cluster(c, log, profile, 1, RUN_ID, noops.get(c, 0))
                for c, log in clusters.items()}
    if buckets > 0:  # its own process: the fold's figures stay the replay's work alone
        return {c: split_figures(clusters[c].records, profile, r.outputs, buckets)
                for c, r in runs.items()}
    with timed("continuity"):
        segments = segment_ranges(kraft)
        for c, run in runs.items():
            with_offset_facts(run, offset_facts(
                clusters[c], None if segments is None else segments.get(c, []), None))
    with timed("arrow"):
        rows_out = arrow_outputs(runs)
    return {"records": sum(log.rows_read for log in clusters.values()),
            "applied": sum(r.counts.rows_applied for r in runs.values()),
            "partitions": sum(len(r.outputs.partition_states) for r in runs.values()),
            "rows_out": rows_out, "stages_s": stages, "stages_cpu_s": cpu,
            "seconds": round(sum(stages.values()), 3), "peak_rss_mb": round(peak_rss_mb(), 1)}


def arrow_outputs(runs: dict[str, ClusterRun]) -> int:
    """Every table's rows as the Arrow batches the replay writes; how many rows."""
    import pyarrow as pa

    from jobs.engine.changes_table import change_batches
    from jobs.engine.codec import rows_batch, rows_to_record_batch
    from jobs.engine.incidents_table import incident_batches
    from jobs.engine.kraft.pipeline import FOLD_TABLES
    from jobs.store.tables import file_schema

    rows = 0
    for table in FOLD_TABLES:
        rows += sum(rows_to_record_batch(table, c, RUN_ID, getattr(r.outputs, table)).num_rows
                    for c, r in runs.items())
    rows += sum(b.num_rows for b in incident_batches(
        {c: r.incidents for c, r in runs.items() if r.incidents}, RUN_ID))
    rows += sum(b.num_rows for b in change_batches({c: r.changes for c, r in runs.items()},
                                                   RUN_ID))
    writes = pa.schema(list(file_schema("metadata_writes"))[1:])
    rows += sum(rows_batch(writes, r.writes).num_rows for r in runs.values())
    return int(rows)


def run_fold(events: Path, buckets: int = 0) -> dict[str, Any]:
    """`fold_figures` in a subprocess; `cpu_s`: that whole process's CPU seconds (imports
    and the read included, as the job's figure includes its start)."""
    usage = ResourceUsage()
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "jobs.bench.kraft", "--core-json", str(events),
                          "--split", str(buckets)],
                         cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return {**json.loads(out.stdout.strip().splitlines()[-1]),
            "process_s": round(time.perf_counter() - t0, 2), "cpu_s": usage.seconds()}


def run_spark_split(events: Path, buckets: int, work: Path) -> dict[str, Any]:
    """`jobs.bench.kraft_spark_split` under `jobs.bench.proc_io`: its figures, with the
    wall and CPU seconds of its whole process tree (JVM and Python workers included)."""
    result = work / "spark-split.json"
    cmd = [sys.executable, "-m", "jobs.bench.proc_io", str(result), "--", sys.executable,
           "-m", "jobs.bench.kraft_spark_split", str(events), "--buckets", str(buckets),
           "--out", str(work / "spark-split"), "--quiet"]
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    out = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                         check=True)
    tree = json.loads(result.read_text())
    return {**json.loads(out.stdout.strip().splitlines()[-1]),
            "process_s": tree["seconds"], "cpu_s": round(tree["cpu_s"], 2)}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    from jobs.sim.kraft_history import SIZES

    ap = command_parser("python -m jobs.bench.kraft", __doc__)
    ap.add_argument("--size", default="bench", choices=sorted(SIZES))
    ap.add_argument("--minutes", type=int, default=120, help="the history's length")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--split", type=int, default=16, metavar="N",
                    help="topic buckets of the split figures (jobs.bench.kraft_split)")
    ap.add_argument("--skip-spark", action="store_true", help="the single-process fold only")
    ap.add_argument("--job-fold", choices=("driver", "executors", "both"), default="both",
                    help="the replay job's --kraft-fold; both: one run each, side by side, "
                    "and whether they wrote the same tables")
    ap.add_argument("--job-buckets", type=int, metavar="N",
                    help="the replay job's --buckets (executors: its tasks per cluster; "
                    "default: the session's parallelism)")
    ap.add_argument("--spark-split", action="store_true",
                    help="also the by-topic fold on Spark (jobs.bench.kraft_spark_split)")
    ap.add_argument("--core-json", metavar="EVENTS", help=argparse.SUPPRESS)
    ap.add_argument("--json", default=str(BENCH_JSON), help="figures file (bench.json)")
    ap.add_argument("--markdown", default=str(BENCH_MARKDOWN), help="BENCHMARKS.md to rewrite")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return run_job("bench-kraft", None if argv is None else list(argv), run_bench_kraft)


def run_bench_kraft(argv: list[str], _spark: object) -> int:
    args = parse_args(argv)
    if args.core_json:
        print(json.dumps(fold_figures(Path(args.core_json), args.split)))
        return 0
    load_before = os.getloadavg()[0]
    events, counts = cached_history(args.size, args.minutes, args.seed)
    fold = run_fold(events)
    if args.split:
        fold["split"] = {c: v for c, v in run_fold(events, args.split).items()
                         if c not in ("process_s", "cpu_s")}
    spark: dict[str, Any] = {}
    if not args.skip_spark:
        spark = job_figures(events, args.size, args.job_fold, args.job_buckets)
    result = {"size": args.size, "minutes": args.minutes, "history": counts,
              "measured_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
              "load_avg_1m": {"start": round(load_before, 2),
                              "end": round(os.getloadavg()[0], 2)},
              "fold": fold, "spark": spark}
    if args.spark_split:
        result["spark_split"] = run_spark_split(events, args.split or 16,
                                                CACHE / f"kraft-{args.size}-split")
    record_section("kraft", args.size, result, bench_file(args.json), bench_file(args.markdown))
    print_figures(result)
    return 0 if args.skip_spark or spark.get("rc") == 0 else 1


def job_figures(events: Path, size: str, fold: str,
                buckets: int | None = None) -> dict[str, Any]:
    """The replay job under each `--kraft-fold` asked, one after the other; with both,
    the executors' figures under `executors` and whether the tables are the same."""
    from jobs.bench.same_tables import compare

    folds = ("driver", "executors") if fold == "both" else (fold,)
    outs = {f: CACHE / (f"kraft-{size}-out" + ("" if f == "driver" else f"-{f}"))
            for f in folds}
    figures = {f: run_spark(events, outs[f], buckets, RUN_ID, ["--kraft-fold", f])
               for f in folds}
    spark = {**figures[folds[0]], "kraft_fold": folds[0]}
    if len(folds) == 2 and all(figures[f].get("rc") == 0 for f in folds):
        spark["executors"] = figures["executors"]
        spark["same_tables"] = all(ok for *_, ok in compare(outs["driver"],
                                                             outs["executors"], RUN_ID))
    return spark


def print_figures(result: dict[str, Any]) -> None:
    fold, spark, by_topic = result["fold"], result["spark"], result.get("spark_split")
    print(f"\nKRaft history '{result['size']}': {fold['records']:,} records, "
          f"{fold['partitions']:,} partitions; load {result['load_avg_1m']}")
    print(f"single-process fold: {fold['process_s']} s wall, {fold['cpu_s']} CPU-s "
          f"(stages {fold['stages_s']}), peak {fold['peak_rss_mb']} MB")
    for cluster, sp in fold.get("split", {}).items():
        print(f"  by topic ({cluster}, {sp['buckets']} buckets, not the replay's way): "
              f"cluster timeline {sp['timeline_cpu_s']} CPU-s, buckets "
              f"{sp['bucket_cpu_s_sum']} CPU-s in all, the largest {sp['bucket_cpu_s_max']}; "
              f"equal to the whole fold: {sp['equal']}")
    if spark.get("rc") == 0:
        print(f"replay job ({spark['kraft_fold']}): {spark['spark_seconds']} s wall, "
              f"{spark['cpu_s']['total']} CPU-s (stages {spark['spark_stages_s']}), "
              f"peaks {spark['memory_mb']} MB")
    if spark.get("executors", {}).get("rc") == 0:
        ex = spark["executors"]
        print(f"replay job (executors): {ex['spark_seconds']} s wall, "
              f"{ex['cpu_s']['total']} CPU-s (stages {ex['spark_stages_s']}), "
              f"peaks {ex['memory_mb']} MB; same tables as the driver's: "
              f"{spark['same_tables']}")
    if by_topic:
        print(f"by topic on Spark:   {by_topic['process_s']} s wall, {by_topic['cpu_s']} CPU-s "
              f"(session {by_topic['session_s']} s, grouped fold {by_topic['grouped_fold_s']} s;"
              f" workers' convert {by_topic['workers_convert_cpu_s']} and fold "
              f"{by_topic['workers_fold_cpu_s']} CPU-s)")


if __name__ == "__main__":
    sys.exit(main())
