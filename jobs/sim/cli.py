"""Simulate a ZooKeeper-mode Kafka cluster and write its controller event log (docs/tables.md).

    python -m jobs.sim --out DIR --preset NAME [--seed N] [--bad-rows RATE] [--quiet]

Deterministic: the same preset, seed and bad-row rate give the same rows. The log is written
as `part-NNNNN.parquet` files of bounded size, in seq order, streamed out while the
simulation runs (memory grows with the number of partitions, not of events). The simulator
keeps its own truth (leader, ISR, leader epoch per partition): see `jobs/sim/`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.sim.driver import TOPIC_SIZES, Simulator
from jobs.sim.presets import PRESETS
from jobs.sim.writer import ParquetSink
from schemas.event_types import DEFAULT_CLUSTER


def simulate(
    out_dir: str,
    preset: str = "sample",
    seed: int = 1,
    bad_rows: float = 0.0,
    cluster: str = DEFAULT_CLUSTER,
    progress: bool = False,
) -> tuple[dict[str, Any], Simulator]:
    """Write the log and return its counts and the finished simulator (its `.truth` is the
    cluster as the simulator believes it is at the end of the log)."""
    p = PRESETS[preset]
    sink = ParquetSink(out_dir, p.rows_per_file)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=p.events,
            unit="ev",
            unit_scale=True,
            file=sys.stderr,
            desc=f"simulate {preset}",
            mininterval=1.0,
        )
    sim = Simulator(
        p,
        sink,
        seed=seed,
        bad_rows=bad_rows,
        cluster=cluster,
        progress=bar.update if bar is not None else None,
    )
    sim.run()
    files = sink.close()
    if bar is not None:
        bar.close()
    t = sim.truth
    counts: dict[str, Any] = {
        "preset": preset,
        "seed": seed,
        "events": sink.rows,
        "good_rows": sim.good_rows,
        "bad_rows": sim.bad.total if sim.bad else 0,
        "bad_by_kind": dict(sim.bad.counts) if sim.bad else {},
        "partitions": sim.created,
        "partitions_at_end": sum(p is not None for p in t.parts),
        "topics_at_end": len(t.topics),
        "files": files,
        "max_seq": sim.seq,
        "brokers": len(t.brokers),
        "stories": list(sim.story_log),
        "by_type": dict(sorted(sim.by_type.items())),
    }
    return counts, sim


def write_log(
    out_dir: str,
    preset: str = "sample",
    seed: int = 1,
    bad_rows: float = 0.0,
    cluster: str = DEFAULT_CLUSTER,
) -> dict[str, Any]:
    """Write a simulated log to `out_dir`; returns counts (events, partitions, files, ...)."""
    counts, _ = simulate(out_dir, preset, seed, bad_rows, cluster)
    return counts


def preset_sizes() -> str:
    """One line per preset: its brokers, topics, partitions and events (from PRESETS)."""
    width = max(len(name) for name in PRESETS)
    lines = ["presets (--preset), each a target the log reaches:"]
    for p in sorted(PRESETS.values(), key=lambda p: p.events):
        largest = min(max(TOPIC_SIZES), p.max_topic_partitions)
        lines.append(f"  {p.name:<{width}}  {p.brokers} brokers, {p.partitions:,} partitions in "
                     f"topics of {min(TOPIC_SIZES)} to {largest:,}, {p.events:,} events")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    ap = command_parser("python -m jobs.sim", __doc__, more=preset_sizes())
    ap.add_argument("--out", required=True, help="directory for the Parquet files")
    ap.add_argument("--preset", default="sample", choices=sorted(PRESETS),
                    help="the log's size, one of the presets above")
    ap.add_argument("--seed", type=int, default=1,
                    help="the random seed: the same preset, seed and rate give the same rows")
    ap.add_argument(
        "--bad-rows",
        type=float,
        default=0.0,
        help="rate of contract-breaking rows per good row (e.g. 0.01)",
    )
    ap.add_argument("--cluster", default=DEFAULT_CLUSTER, help="the cluster column of every row")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    return run_job("sim", None if argv is None else list(argv), sim)


def sim(argv: list[str], _spark: object) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if not 0.0 <= args.bad_rows < 1.0:
        ap.error("--bad-rows must be in [0, 1)")
    started = time.perf_counter()
    counts, _ = simulate(
        args.out,
        args.preset,
        args.seed,
        args.bad_rows,
        args.cluster,
        progress=not args.quiet and sys.stderr.isatty(),
    )
    counts["seconds"] = round(time.perf_counter() - started, 2)
    print(json.dumps(counts))
    return 0

