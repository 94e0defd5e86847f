"""Events per second of the pure core, no Spark (`make bench-core`).

    python -m jobs.bench.core --preset NAME [--seed N] [--buckets N] [--events DIR] [--json]

Generates the preset's log once (cached under `out/bench-logs/<preset>-<seed>/`), then, in
one process: read it with pyarrow, sort by (cluster, seq), build each cluster's timeline from
its cluster-scope rows, group the other rows by (cluster, bucket_of(topic)) exactly as the
Spark job does, and fold every group through `statemachine.replay.replay`, its output rows
taken every FLUSH_ROWS rows and turned into the Arrow batches of the tables' files exactly as
the job's group function does (`jobs.engine.group_fn.GroupOutput`, `jobs.engine.codec`), but
not written. Prints rows per second (input rows / seconds of fold and Arrow conversion, and
of the fold alone), partitions per second, seconds per stage and peak RSS.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.engine.codec import file_batch
from jobs.engine.group_fn import EVENT_TABLES, FLUSH_ROWS, STATE_TABLES
from schemas import event_types as ET
from statemachine.cluster import DELETION_ACTIVITY, TIMELINE_EVENTS, ClusterTimeline, build_timeline
from statemachine.context import Outputs
from statemachine.events import Event
from statemachine.replay import gc_paused, replay

REPO_ROOT = Path(__file__).resolve().parents[2]  # jobs/bench/core.py -> the repository
# Where every bench writes its figures: a run leaves the tracked bench.json and
# BENCHMARKS.md as they are; `make bench-record` copies these over them, on purpose.
BENCH_OUT = REPO_ROOT / "out" / "bench"
BENCH_JSON, BENCH_MARKDOWN = BENCH_OUT / "bench.json", BENCH_OUT / "BENCHMARKS.md"
TRACKED = {BENCH_JSON.name: REPO_ROOT / "bench.json",
           BENCH_MARKDOWN.name: REPO_ROOT / "BENCHMARKS.md"}


def bench_file(path: str | Path) -> Path:
    """A figures file to update: under out/bench/ it starts as a copy of the tracked one
    (so the presets and sections measured earlier stay in it)."""
    target = Path(path)
    tracked = TRACKED.get(target.name)
    if not target.is_file() and target.parent == BENCH_OUT and tracked and tracked.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(tracked.read_text())
    return target


CACHE = REPO_ROOT / "out" / "bench-logs"
DEFAULT_BUCKETS = 64  # conf/replay.toml


def cached_log(preset: str, seed: int = 1, cache: Path = CACHE) -> tuple[Path, dict[str, Any]]:
    """The preset's log directory, simulated on first use; `counts.json` marks it complete."""
    from jobs.sim.cli import simulate

    d = cache / f"{preset}-{seed}"
    done = d / "_counts.json"  # leading underscore: Spark and pyarrow datasets skip it
    if done.is_file():
        return d, json.loads(done.read_text())
    t0 = time.perf_counter()
    counts, _ = simulate(str(d), preset, seed, progress=sys.stderr.isatty())
    counts["seconds"] = round(time.perf_counter() - t0, 1)
    done.write_text(json.dumps(counts))
    return d, counts


def read_log(events_dir: str | Path) -> pa.Table:
    files = sorted(Path(events_dir).glob("*.parquet"))
    return pa.concat_tables([pq.read_table(f) for f in files])


def sort_log(table: pa.Table) -> pa.Table:
    return table.sort_by([("cluster", "ascending"), ("seq", "ascending")])


@dataclass
class Groups:
    """Cluster-scope events per cluster and the other events per (cluster, bucket)."""

    cluster_events: dict[str, list[Event]] = field(default_factory=dict)
    buckets: dict[tuple[str, int], list[Event]] = field(default_factory=dict)
    skipped: int = 0  # rows a validator would quarantine (null keys, unknown types)


def group_log(table: pa.Table, buckets: int = DEFAULT_BUCKETS) -> Groups:
    """Column lists -> Events, grouped the way the Spark job keys them."""
    cols = {name: table.column(name) for name in table.column_names}
    ts = pc.cast(cols["ts"], pa.int64()).to_pylist()
    lists = {n: cols[n].to_pylist() for n in ("replicas", "isr", "brokers")}
    clusters = cols["cluster"].to_pylist()
    seqs, types = cols["seq"].to_pylist(), cols["event_type"].to_pylist()
    topics = cols["topic"].to_pylist()
    rest = [
        cols[n].to_pylist()
        for n in ("broker_id", "partition", "leader_epoch", "error", "unclean_leader_election")
    ]
    source = cols["source"].to_pylist()
    g = Groups()
    bucket_cache: dict[tuple[str, str], int] = {}
    cluster_types, all_types = ET.CLUSTER_EVENTS, ET.ALL_EVENTS
    for i, (cl, seq, et, topic) in enumerate(zip(clusters, seqs, types, topics, strict=True)):
        if seq is None or et not in all_types or ts[i] is None:
            g.skipped += 1
            continue
        cl = cl or ET.DEFAULT_CLUSTER
        rep, isr, brokers = lists["replicas"][i], lists["isr"][i], lists["brokers"][i]
        e = Event(
            seq, ts[i], et, rest[0][i], topic, rest[1][i],
            None if rep is None else tuple(rep),
            None if isr is None else tuple(isr),
            rest[2][i],
            None if brokers is None else tuple(brokers),
            rest[3][i], rest[4][i], source[i],
        )  # fmt: skip
        if et in cluster_types:
            g.cluster_events.setdefault(cl, []).append(e)
            continue
        if et in DELETION_ACTIVITY:  # in the timeline and in its topic's bucket
            g.cluster_events.setdefault(cl, []).append(e)
        if topic is None:
            g.skipped += 1
            continue
        key = (cl, topic)
        b = bucket_cache.get(key)
        if b is None:
            b = bucket_cache[key] = zlib.crc32(f"{cl}\x00{topic}".encode()) % buckets
        g.buckets.setdefault((cl, b), []).append(e)
    return g


@dataclass
class FoldResult:
    timelines: dict[str, ClusterTimeline]
    outputs: dict[tuple[str, int], Any]  # (cluster, bucket) -> Outputs (kept only on request)
    applied: int = 0
    findings: int = 0
    rows_out: int = 0
    partitions: int = 0


def fold_groups(g: Groups, keep_outputs: bool = False) -> FoldResult:
    timelines = {cl: build_timeline(evs) for cl, evs in g.cluster_events.items()}
    res = FoldResult(timelines, {})
    empty = build_timeline(())
    for key in sorted(g.buckets):
        tl = timelines.get(key[0], empty)
        _, out = replay(None, g.buckets[key], tl)
        res.applied += out.applied
        res.findings += len(out.findings)
        res.partitions += len(out.partition_states)
        res.rows_out += (
            len(out.partition_states) + len(out.replica_states) + len(out.state_changes)
            + len(out.leader_and_isr) + len(out.update_metadata) + len(out.stop_replica)
            + len(out.findings)
        )  # fmt: skip
        if keep_outputs:
            res.outputs[key] = out
    res.findings += sum(len(t.findings) for t in timelines.values())
    return res


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def bucket_plan(
    table: pa.Table, buckets: int = DEFAULT_BUCKETS
) -> tuple[pa.Table, list[tuple[tuple[str, int], np.ndarray]]]:
    """The timeline's rows (cluster scope and deletion activity), and the row indices of
    each (cluster, bucket) group in table order (seq order once sorted), computed in
    Arrow/numpy so that only one group at a time becomes Python objects: memory stays at
    the table plus one bucket."""
    cluster = pc.fill_null(table.column("cluster"), ET.DEFAULT_CLUSTER)
    types = pa.array(sorted(ET.CLUSTER_EVENTS))
    is_cluster = pc.fill_null(pc.is_in(table.column("event_type"), value_set=types), False)
    timeline_types = pa.array(sorted(TIMELINE_EVENTS))
    in_timeline = pc.fill_null(pc.is_in(table.column("event_type"), value_set=timeline_types),
                               False)
    key = pc.binary_join_element_wise(cluster, table.column("topic"), "\x00")
    enc = key.combine_chunks().dictionary_encode()
    gids: dict[tuple[str, int], int] = {}
    gid_of_key = np.empty(len(enc.dictionary), dtype=np.int64)
    for i, k in enumerate(enc.dictionary.to_pylist()):
        cl = k.split("\x00", 1)[0]
        b = zlib.crc32(k.encode()) % buckets  # = statemachine.replay.bucket_of(cl, topic)
        gid_of_key[i] = gids.setdefault((cl, b), len(gids))
    codes = pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False)
    row_gid = np.where(codes >= 0, gid_of_key[np.maximum(codes, 0)], -1)
    row_gid[is_cluster.to_numpy(zero_copy_only=False)] = -1
    order = np.argsort(row_gid, kind="stable")
    sorted_gid = row_gid[order]
    key_of_gid = {g: k for k, g in gids.items()}
    groups = []
    for g in sorted(key_of_gid, key=key_of_gid.__getitem__):
        lo, hi = np.searchsorted(sorted_gid, [g, g + 1])
        groups.append((key_of_gid[g], order[lo:hi]))
    return table.filter(in_timeline), groups


class ArrowOutput:
    """The output side of the job's group function without the files: each table's rows of
    a group become the Arrow batch its file would hold (`codec.file_batch`, as
    `GroupOutput.add`); the seconds it takes are kept apart from the fold's."""

    def __init__(self) -> None:
        self.seconds = self.cpu_seconds = 0.0
        self.rows = 0
        self.batches = 0
        self.cluster = ET.DEFAULT_CLUSTER

    def add(self, table: str, rows: list[Any]) -> None:
        if rows:
            batch = file_batch(table, self.cluster, rows)
            self.rows += batch.num_rows
            self.batches += 1

    def emit(self, out: Outputs, tables: tuple[tuple[str, str], ...] = EVENT_TABLES) -> None:
        t0, c0 = time.perf_counter(), time.process_time()
        for attr, table in tables:
            self.add(table, getattr(out, attr))
        self.seconds += time.perf_counter() - t0
        self.cpu_seconds += time.process_time() - c0


def run_core(events_dir: str | Path, buckets: int = DEFAULT_BUCKETS) -> dict[str, Any]:
    """Time each stage of the pure-core replay of one log; returns the figures.

    Stages: read (pyarrow), sort (by cluster, seq), plan (bucket of every row, in Arrow),
    group (one bucket's rows -> Events, summed over buckets), fold (`replay`, summed),
    arrow (the output rows -> Arrow batches, taken during and after each fold, summed)."""
    stages: dict[str, float] = {"read": 0.0, "sort": 0.0, "plan": 0.0, "group": 0.0,
                                "fold": 0.0, "arrow": 0.0}  # fmt: skip
    cpu = dict.fromkeys(stages, 0.0)  # CPU seconds: what a shared machine's load leaves be

    @contextmanager
    def timed(name: str) -> Iterator[None]:
        t0, c0 = time.perf_counter(), time.process_time()
        yield
        stages[name] += time.perf_counter() - t0
        cpu[name] += time.process_time() - c0

    with timed("read"):
        table = read_log(events_dir)
    with timed("sort"):
        table = sort_log(table)
    rows = table.num_rows
    with timed("plan"):
        cluster_rows, plan = bucket_plan(table, buckets)
    with timed("group"):
        cluster_events = group_log(cluster_rows, buckets).cluster_events
    with timed("fold"):
        timelines = {cl: build_timeline(evs) for cl, evs in cluster_events.items()}
    empty = build_timeline(())
    arrow = ArrowOutput()
    applied = findings = partitions = 0
    for (cl, b), idx in plan:
        with timed("group"):
            events = group_log(table.take(idx), buckets).buckets.get((cl, b), [])
        arrow.cluster = cl
        with timed("fold"), gc_paused():  # as the job's group function runs
            _, out = replay(None, events, timelines.get(cl, empty), flush=arrow.emit,
                            flush_rows=FLUSH_ROWS)
            arrow.emit(out, STATE_TABLES + EVENT_TABLES)
        applied += out.applied
        findings += len(out.findings)
        partitions += len(out.partition_states)
        del events, out
    findings += sum(len(t.findings) for t in timelines.values())
    stages["fold"] -= arrow.seconds
    stages["arrow"] = arrow.seconds
    cpu["fold"] -= arrow.cpu_seconds
    cpu["arrow"] = arrow.cpu_seconds
    fold_s = max(stages["fold"], 1e-9)
    with_outputs_s = max(stages["fold"] + stages["arrow"], 1e-9)
    total_s = sum(stages.values())
    return {
        "events": rows,
        "partitions": partitions,
        "buckets": len(plan),
        "applied": applied,
        "findings": findings,
        "rows_out": arrow.rows,
        "stages_s": {k: round(v, 3) for k, v in stages.items()},
        "stages_cpu_s": {k: round(v, 3) for k, v in cpu.items()},
        "core_events_per_cpu_s": round(rows / max(cpu["fold"] + cpu["arrow"], 1e-9)),
        "core_events_per_s": round(rows / with_outputs_s),
        "core_fold_only_events_per_s": round(rows / fold_s),
        "core_events_per_s_end_to_end": round(rows / max(total_s, 1e-9)),
        "core_partitions_per_s": round(partitions / with_outputs_s),
        "core_seconds": round(total_s, 3),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def record(path: Path, fig: dict[str, Any], load_before: float) -> None:
    """`make bench-core`'s figures into bench.json, beside `make bench`'s."""
    import statemachine

    data: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    data.setdefault("core_runs", {})[str(fig["preset"])] = {
        **fig, "compiled": statemachine.compiled(),
        "measured_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "load_avg_1m": {"start": round(load_before, 2), "end": round(os.getloadavg()[0], 2)},
    }
    path.write_text(json.dumps(data, indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    return run_job("bench-core", None if argv is None else list(argv), run_bench_core)


def run_bench_core(argv: list[str], _spark: object) -> int:
    ap = command_parser("python -m jobs.bench.core", __doc__)
    ap.add_argument("--preset", default="bench")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--buckets", type=int, default=DEFAULT_BUCKETS)
    ap.add_argument("--events", help="replay this log instead of the preset's")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON only")
    ap.add_argument("--record", metavar="FILE",
                    help="also keep the figures, with the time, the load average and whether "
                         "the core ran compiled, in FILE (bench.json) under core_runs.<preset>")
    args = ap.parse_args(argv)
    events_dir = Path(args.events) if args.events else cached_log(args.preset, args.seed)[0]
    load_before = os.getloadavg()[0]
    fig = run_core(events_dir, args.buckets)
    fig["preset"] = args.preset if not args.events else str(events_dir)
    if args.record:
        record(bench_file(args.record), fig, load_before)
    if args.json:
        print(json.dumps(fig))
        return 0
    print(f"pure core on {events_dir}")
    print(f"  rows read        {fig['events']:>12,}")
    print(f"  partitions       {fig['partitions']:>12,}   buckets {fig['buckets']}")
    print(f"  events/s (fold + Arrow) {fig['core_events_per_s']:>12,}")
    print(f"  events/s (fold only)    {fig['core_fold_only_events_per_s']:>12,}")
    print(f"  events/s (all stages)   {fig['core_events_per_s_end_to_end']:>12,}")
    print(f"  partitions/s     {fig['core_partitions_per_s']:>12,}")
    print(f"  events/s (fold + Arrow, per CPU second) {fig['core_events_per_cpu_s']:>12,}")
    print("  stages (s)       " + "  ".join(f"{k} {v}" for k, v in fig["stages_s"].items()))
    print("  stages (CPU s)   " + "  ".join(f"{k} {v}" for k, v in fig["stages_cpu_s"].items()))
    print(f"  findings         {fig['findings']:>12,}")
    print(f"  output rows      {fig['rows_out']:>12,}")
    print(f"  peak RSS         {fig['peak_rss_mb']:>12,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
