"""`make bench-whatif`: a `fail_each_broker` sweep in one what-if run against one plain
replay of the same log, side by side.

    python -m jobs.bench.whatif_sweep --preset bench [--seed N] [--buckets N]
        [--sweep fail_each_rack --racks 3]

1. the preset's cached log (`jobs.bench.core.cached_log`) and a scenario failing each
   broker at the log's midpoint (one variant per broker, plus the baseline); with
   `--sweep fail_each_rack`, each rack at once instead, the simulated brokers dealt
   round-robin into `--racks` racks (`broker.rack` r0, r1, ...: the simulator's assignment
   is rack-unaware, so a rack holds some replicas of most partitions, the worst case);
2. one plain `jobs.replay` of the log, then the sweep (`jobs.whatif`), each in its own
   process, timed, its memory sampled (`jobs.bench.process_tree.TreeSampler`), with the default
   driver memory; the sweep's stages come from its `[whatif] <stage>: ... in <s>s` lines;
3. the figures go to `bench.json` under `whatif.<preset>` and to the what-if table of
   `BENCHMARKS.md`.

Figures, never assertions: a sweep slower than its target fails nothing; a run that fails
makes the bench exit 1.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jobs.bench.core import BENCH_JSON, BENCH_MARKDOWN, CACHE, REPO_ROOT, bench_file, cached_log
from jobs.bench.job import record_section, run_spark
from jobs.bench.process_tree import TreeSampler
from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.whatif.facts import facts_from_arrow

log = logging.getLogger(__name__)
WORK = REPO_ROOT / "out" / "bench-whatif"
STAGE_LINE = re.compile(r"^\[whatif\] (\w+): .* in ([\d.]+)s$")


def sweep_scenario(events: str, path: Path, kind: str = "fail_each_broker",
                   racks: int = 3) -> tuple[int, str]:
    """A sweep halfway through the log; returns the variants it makes (one per broker or
    rack, plus the baseline) and its time."""
    facts = facts_from_arrow(events)
    assert facts is not None and facts.clusters
    cluster = next(iter(facts.clusters.values()))
    middle = int((int(cluster.times.min()) + int(cluster.times.max())) // 2)
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(middle / 1e6))
    text = f'[sweep]\n{kind} = {{ at = "{at}" }}\n'
    members = len(facts.all_brokers)
    if kind == "fail_each_rack":
        brokers = sorted(facts.all_brokers)
        text += "\n[racks]\n" + "".join(f'{b} = "r{i % racks}"\n'
                                         for i, b in enumerate(brokers))
        members = min(racks, len(brokers))
    path.write_text(text)
    return members + 1, at


def run_sweep(events: Path, scenario: Path, out: Path, buckets: int | None) -> dict[str, Any]:
    """The what-if in a subprocess, timed, its memory sampled, its stages from its log."""
    cmd = [sys.executable, "-m", "jobs.whatif", "--events", str(events), "--scenario",
           str(scenario), "--out", str(out), "--run-id", "sweep"]
    if buckets:
        cmd += ["--buckets", str(buckets)]
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable)
    log_path = out.parent / "sweep.log"
    started = time.perf_counter()
    with log_path.open("w") as log:
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
        sampler = TreeSampler(proc.pid)
        sampler.start()
        rc = proc.wait()
        sampler.stop()
    seconds = time.perf_counter() - started
    stages = {m.group(1): float(m.group(2)) for m in map(STAGE_LINE.match,
                                                         log_path.read_text().splitlines())
              if m is not None}
    stages["total"] = round(seconds, 2)
    if rc != 0:
        tail = log_path.read_text().splitlines()[-15:]
        print("the what-if failed:\n  " + "\n  ".join(tail), file=sys.stderr)
    return {"rc": rc, "seconds": round(seconds, 2), "log": str(log_path), "stages_s": stages,
            "memory_mb": {k: round(v) for k, v in sampler.figures.peak_mb.items()}}


def measure(preset: str, seed: int, buckets: int | None, work_root: Path = WORK,
            cache: Path = CACHE, kind: str = "fail_each_broker",
            racks: int = 3) -> dict[str, Any]:
    events, counts = cached_log(preset, seed, cache)
    name = preset if kind == "fail_each_broker" else f"{preset} {kind}"
    work = work_root / name.replace(" ", "-")
    work.mkdir(parents=True, exist_ok=True)
    variants, at = sweep_scenario(str(events), work / "sweep.toml", kind, racks)
    log.info(f"one replay of {preset}")
    replay = run_spark(events, work / "replay", buckets)
    log.info(f"{kind} at {at}: {variants} variants")
    sweep = run_sweep(events, work / "sweep.toml", work / "whatif", buckets)
    return {
        "preset": name, "sweep_kind": kind, "events": counts.get("events"),
        "variants": variants, "at": at,
        "measured_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "replay_seconds": replay["spark_seconds"], "sweep_seconds": sweep["seconds"],
        "sweep_over_replay": round(sweep["seconds"] / replay["spark_seconds"], 2),
        "replay": replay, "sweep": sweep,
    }


def record(result: dict[str, Any], json_path: Path, markdown: Path) -> None:
    """`whatif.<preset>` of bench.json, then BENCHMARKS.md's generated part again."""
    record_section("whatif", result["preset"], result, json_path, markdown)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = command_parser("python -m jobs.bench.whatif_sweep", __doc__)
    ap.add_argument("--preset", default="bench")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--buckets", type=int, help="replay groups (default: the job's config)")
    ap.add_argument("--sweep", choices=("fail_each_broker", "fail_each_rack"),
                    default="fail_each_broker", help="the sweep measured")
    ap.add_argument("--racks", type=int, default=3,
                    help="fail_each_rack: racks the brokers are dealt into (default 3)")
    ap.add_argument("--json", default=str(BENCH_JSON))
    ap.add_argument("--markdown", default=str(BENCH_MARKDOWN))
    ap.add_argument("--work", default=str(WORK), help="where the tables go")
    ap.add_argument("--cache", default=str(CACHE), help="where simulated logs are cached")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return run_job("bench-whatif", None if argv is None else list(argv), run_bench_whatif)


def run_bench_whatif(argv: list[str], _spark: object) -> int:
    args = parse_args(argv)
    result = measure(args.preset, args.seed, args.buckets, Path(args.work), Path(args.cache),
                     args.sweep, args.racks)
    record(result, bench_file(args.json), bench_file(args.markdown))
    log.info(f"{result['variants']} variants ({args.preset}): the sweep "
          f"{result['sweep_seconds']} s, one replay {result['replay_seconds']} s -> "
          f"{result['sweep_over_replay']:.2f}x; sweep stages {result['sweep']['stages_s']}")
    return 0 if result["replay"]["rc"] == 0 and result["sweep"]["rc"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
