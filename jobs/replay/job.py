"""Replay a controller event log with Spark (DESIGN §3) and write every table of §5.

    .venv/bin/python -m jobs.replay --events DIR --out DIR [--checkpoint DIR] [--run-id ID]
        [--config FILE] [--buckets N] [--master URL]
    spark-submit --py-files dist/replay.zip jobs/replay.py <same arguments>

Stages: check the files' schemas (fail fast) -> build the cluster timelines on the driver
and write `broker_timeline` / `controller_timeline` -> write this run's wake rows -> one
Structured Streaming query (availableNow): validate and key the new rows, group by
(cluster, bucket), replay through the core with the state in `GroupState`, write the tables
from `foreachBatch` -> `run_summary` and a short human summary.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jobs.common.tables import path_exists, read_text, write_arrow, write_text
from jobs.replay.codec import rows_to_record_batch
from jobs.replay.history import input_files, load_history, save_history, scan_with_history
from jobs.replay.keying import key_events, key_wake_rows
from jobs.replay.pack import pack
from jobs.replay.sink import BatchSink, ClusterCounts
from jobs.replay.source import EventSchemaError, check_event_files, stream_events
from jobs.replay.summary import print_summary, summary_batches
from jobs.replay.timeline import build_timelines, timeline_rows
from schemas.state import PACKED_SCHEMA, STATE_SCHEMA, TAGGED_SCHEMA, WAKE_SCHEMA
from schemas.tables import TIMELINE_TABLES
from statemachine.context import ReplayConfig

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = "conf/replay.toml"
DEFAULTS: dict[str, Any] = {
    "buckets": 64,
    "spark_conf": "conf/spark/local.conf",
    "max_file_age": "3650d",
    "unclean_leader_election_enable": False,
    "delete_topic_enable": True,
}


def log(message: str) -> None:
    print(f"[replay] {message}", flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="jobs.replay", description=__doc__.split("\n\n")[0])
    p.add_argument("--events", required=True, help="directory of event-log Parquet files")
    p.add_argument("--out", required=True, help="directory of the output tables")
    p.add_argument("--checkpoint", help="checkpoint directory; resumes when it exists "
                   "(default: a temporary one, a full replay)")
    p.add_argument("--run-id", help="run identifier (default: UTC timestamp)")
    p.add_argument("--config", help=f"job settings TOML (default: {DEFAULT_CONFIG})")
    p.add_argument("--buckets", type=int, help="replay groups per cluster (overrides config)")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    return p.parse_args(argv)


def _find(path: str, base: Path | None = None) -> Path | None:
    for candidate in (Path(path), *((base / path,) if base else ()), REPO_ROOT / path):
        if candidate.is_file():
            return candidate
    return None


def load_config(path: str | None) -> tuple[dict[str, Any], Path | None]:
    """Settings from the TOML file (`[replay]` and `[kafka]` tables) over the defaults."""
    found = _find(path or DEFAULT_CONFIG)
    if path is not None and found is None:
        raise FileNotFoundError(f"config file {path} not found")
    cfg = dict(DEFAULTS)
    if found is not None:
        with found.open("rb") as f:
            data = tomllib.load(f)
        for section in ("replay", "kafka"):
            cfg.update(data.get(section, {}))
    return cfg, found


def _session(args: argparse.Namespace, cfg: dict[str, Any], cfg_path: Path | None) -> Any:
    from jobs.common.session import build_session, under_spark_submit

    props = None
    if not under_spark_submit() and cfg.get("spark_conf"):
        base = cfg_path.parent.parent if cfg_path else None
        props = _find(str(cfg["spark_conf"]), base)
    return build_session("kafka-controller-replay", master=args.master, properties_file=props)


def _write_wake_rows(spark: Any, wake_dir: str, keys: dict[str, list[int]],
                     horizons: dict[str, int | None], run_id: str) -> None:
    """One row per (cluster, bucket): every group with state replays this run, up to the
    cluster's horizon (its timeline's last step)."""
    rows = [(c, b, run_id, horizons.get(c)) for c, bs in keys.items() for b in bs]
    spark.createDataFrame(rows, WAKE_SCHEMA).coalesce(1).write.mode("append").parquet(wake_dir)


def pin_buckets(spark: Any, checkpoint: str, buckets: int) -> str | None:
    """The bucket count is part of the state's key: a checkpoint replayed with another
    count would look for each topic's partitions in the wrong state row and silently
    start them from nothing. The first run records it; a different one is refused."""
    path = f"{checkpoint.rstrip('/')}/replay-settings.json"
    if not path_exists(spark, path):
        write_text(spark, path, json.dumps({"buckets": buckets}) + "\n")
        return None
    pinned = int(json.loads(read_text(spark, path))["buckets"])
    if pinned != buckets:
        return (f"checkpoint {checkpoint} was built with buckets={pinned}, this run asks for "
                f"buckets={buckets}; keep {pinned}, or replay in full with a new checkpoint")
    return None


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    from pyspark.sql.streaming.state import GroupStateTimeout

    from jobs.replay.group import make_replay_fn

    args = parse_args(argv)
    cfg, cfg_path = load_config(args.config)
    buckets = int(args.buckets or cfg["buckets"])
    run_id = args.run_id or datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    temp_checkpoint = args.checkpoint is None
    checkpoint = args.checkpoint or tempfile.mkdtemp(prefix="replay-checkpoint-")
    config = ReplayConfig(
        unclean_leader_election_enable=bool(cfg["unclean_leader_election_enable"]),
        delete_topic_enable=bool(cfg["delete_topic_enable"]),
    )
    log(f"events={args.events} out={args.out} checkpoint={checkpoint}"
        f"{' (temporary: full replay)' if temp_checkpoint else ''} run_id={run_id}")
    log(f"config={cfg_path or '(defaults)'} buckets={buckets} {config} "
        f"max_file_age={cfg['max_file_age']}")
    started_at = datetime.now(UTC)
    t0 = time.perf_counter()
    seconds: dict[str, float] = {}

    try:
        files = check_event_files(args.events, log)
    except EventSchemaError as exc:
        print(f"[replay] ERROR: {exc}", file=sys.stderr, flush=True)
        return 2
    seconds["check"] = time.perf_counter() - t0
    log(f"schema check: {files} file(s) readable")

    spark = spark or _session(args, cfg, cfg_path)
    try:
        marker = f"{checkpoint.rstrip('/')}/runs/{run_id}.json"
        if path_exists(spark, marker):
            log(f"run {run_id} is already committed in {checkpoint}; nothing to do "
                "(new files are taken in by the next run id)")
            return 0

        problem = pin_buckets(spark, checkpoint, buckets)
        if problem is not None:
            print(f"[replay] ERROR: {problem}", file=sys.stderr, flush=True)
            return 2

        t = time.perf_counter()
        log_files = input_files(spark, args.events)
        history = load_history(spark, checkpoint, buckets)
        scan, scanned = scan_with_history(spark, args.events, log_files, history, buckets)
        wake_keys = scan.buckets
        timelines = build_timelines(scan)
        clusters = list(timelines)
        timeline_written: dict[str, dict[str, int]] = {c: {} for c in clusters}
        timeline_batches: dict[str, list[Any]] = {}
        for table in TIMELINE_TABLES:
            timeline_batches[table] = []
            for c, tl in timelines.items():
                rows = timeline_rows(tl)[table]
                timeline_written[c][table] = len(rows)
                timeline_batches[table].append(rows_to_record_batch(table, c, run_id, rows))
        # The two small timeline tables are written while the replay runs (independent jobs).
        background = ThreadPoolExecutor(max_workers=1)
        timeline_writes = [
            background.submit(write_arrow, spark, batches, args.out, table, run_id)
            for table, batches in timeline_batches.items()
        ]
        seconds["timeline"] = time.perf_counter() - t
        log(f"timeline: {scanned} file(s) scanned, {len(log_files) - scanned} known from the "
            f"checkpoint's history; clusters={clusters} steps="
            f"{ {c: len(tl.steps) for c, tl in timelines.items()} }")

        t = time.perf_counter()
        wake_dir = f"{checkpoint.rstrip('/')}/wake"
        if clusters:
            _write_wake_rows(spark, wake_dir, wake_keys,
                             {c: tl.last_seq for c, tl in timelines.items()}, run_id)
        events = key_events(stream_events(spark, args.events, cfg["max_file_age"]), buckets)
        wake = key_wake_rows(spark.readStream.schema(WAKE_SCHEMA).parquet(wake_dir)) \
            if clusters else None
        rows = events.unionByName(wake) if wake is not None else events
        packed = rows.mapInArrow(pack, PACKED_SCHEMA)
        tagged = packed.groupBy("cluster", "bucket").applyInPandasWithState(
            make_replay_fn(timelines, config), TAGGED_SCHEMA, STATE_SCHEMA, "append",
            GroupStateTimeout.NoTimeout,
        )
        sink = BatchSink(args.out, run_id, buckets, log)
        query = (
            tagged.writeStream.outputMode("append")
            .foreachBatch(sink)
            .option("checkpointLocation", f"{checkpoint.rstrip('/')}/query")
            .trigger(availableNow=True)
            .queryName(f"replay-{run_id}")
            .start()
        )
        query.awaitTermination()
        elapsed = time.perf_counter() - t
        seconds["stream"] = elapsed - sink.fold_seconds - sink.write_seconds
        seconds["replay"] = sink.fold_seconds
        seconds["write"] = sink.write_seconds
        log(f"replay: {sink.batches} micro-batch(es) in {elapsed:.1f}s")

        t = time.perf_counter()
        for done in timeline_writes:
            done.result()
        background.shutdown()
        for c in clusters:
            counts = sink.counts.setdefault(c, ClusterCounts())
            counts.rows_written.update(timeline_written[c])
        seconds["summary"] = time.perf_counter() - t
        seconds["total"] = time.perf_counter() - t0
        summary = summary_batches(sink, run_id, buckets, started_at, datetime.now(UTC), seconds)
        write_arrow(spark, summary, args.out, "run_summary", run_id)
        save_history(spark, checkpoint, log_files, scan)
        write_text(spark, marker, f'{{"run_id": "{run_id}", "batches": {sink.batches}}}\n')
        print_summary(args.out, run_id, sink)
        return 0
    finally:
        if temp_checkpoint:
            shutil.rmtree(checkpoint, ignore_errors=True)


__all__ = ["main"]
