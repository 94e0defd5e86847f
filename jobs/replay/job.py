"""Replay a controller event log with Spark and write the state, request and finding tables.

    .venv/bin/python -m jobs.replay --events DIR --out DIR [--checkpoint DIR] [--run-id ID]
        [--config FILE] [--buckets N] [--master URL] [--kafka-version X.Y]
    spark-submit --py-files dist/replay.zip jobs/submit.py replay <same arguments>

Stages (`main`): settings -> check the files' schemas (fail fast) -> the timeline stage:
scan the log, build the cluster timelines on the driver and write `broker_timeline` /
`controller_timeline` -> the stream stage: write this run's wake rows, then one Structured
Streaming query (availableNow) validates and keys the new rows, groups them by (cluster,
bucket), replays them through the core with the state in `GroupState` and writes the tables
from `foreachBatch` -> the summary stage: `run_summary`, the checkpoint's history and run
marker, and a short human summary. The tables are described in docs/tables.md, the stages
and the checkpoint in docs/replay-job.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from jobs.common.config import DEFAULT_CONFIG, find_file, kafka_release, load_config
from jobs.common.exitcodes import BAD_INPUT, CHECKPOINT_BUSY
from jobs.common.lease import CheckpointLease, LeaseHeld
from jobs.common.paths import arrow_filesystem, run_id_problem, scratch_path
from jobs.common.session import build_session, read_properties, under_spark_submit
from jobs.common.tables import (
    delete_path,
    ensure_run_partitions,
    path_exists,
    read_text,
    remove_scratch,
    rename_path,
    write_arrow,
    write_text,
)
from jobs.dataloss.job import evidence_problem, find_evidence, write_data_loss
from jobs.replay import faults
from jobs.replay.changes import write_changes
from jobs.replay.codec import rows_to_record_batch
from jobs.replay.failures import nested_problem, out_problem, read_failure
from jobs.replay.history import (
    History,
    input_files,
    load_history,
    save_history,
    scan_with_history,
)
from jobs.replay.incidents import write_incidents
from jobs.replay.keying import key_events, key_wake_rows
from jobs.replay.ledger import ClusterCounts, RunLedger
from jobs.replay.plausibility import Plausibility, rules_from_config
from jobs.replay.rebuild import active_checkpoint, committed_runs, generation, swap_in
from jobs.replay.rollup import offline_rollup, period_starts
from jobs.replay.seed import (
    InitialStateError,
    Seed,
    ensure_seed_source,
    first_new_event,
    read_initial_state,
    seed_dir,
    seed_rows,
    seed_source_exists,
    write_seed_rows,
)
from jobs.replay.sink import BatchSink
from jobs.replay.sizing import log_rows, small_log_settings
from jobs.replay.source import (
    EventSchemaError,
    NeedsSpark,
    check_event_files,
    read_events,
    stream_events,
)
from jobs.replay.summary import print_summary, summary_batches
from jobs.replay.timeline import LogScan, build_timelines, horizon, timeline_rows
from schemas.arrow import arrow_schema
from schemas.events import EVENT_SCHEMA
from schemas.state import WAKE_SCHEMA
from schemas.tables import TIMELINE_TABLES
from statemachine.cluster import ClusterTimeline
from statemachine.context import ReplayConfig
from statemachine.profiles import DEFAULT_KAFKA_VERSION


def log(message: str) -> None:
    print(f"[replay] {message}", flush=True)


def error(message: str) -> int:
    print(f"[replay] ERROR: {message}", file=sys.stderr, flush=True)
    return BAD_INPUT


# -- settings ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Settings:
    """One run's settings: the command line over the config file over the defaults."""

    events: str
    out: str
    checkpoint: str
    temporary_checkpoint: bool  # none given: a temporary one, a full replay
    run_id: str
    buckets: int
    config: ReplayConfig
    max_file_age: str
    config_file: Path | None
    spark_conf: Path | None  # properties file of a local run (spark-submit passes its own)
    master: str | None
    audit: bool = False  # run jobs.audit on this run in the same session
    fail_on: str | None = None
    observed: tuple[str, ...] = ()
    initial_state: tuple[str, ...] = ()  # --initial-state files (jobs.replay.seed)
    rules: Plausibility = Plausibility()  # what an event row must be to be believed
    rebuild: bool = False  # replay the whole log into a new generation of the checkpoint
    superseded: tuple[str, ...] = ()  # a rebuild: the runs of the generation it replaces
    verdict_json: str | None = None  # with --audit: jobs.audit.publish
    prometheus: str | None = None
    offset_evidence: str | None = None  # jobs.dataloss: else beside --events

    def under_checkpoint(self, name: str) -> str:
        return f"{self.checkpoint.rstrip('/')}/{name}"

    @property
    def marker(self) -> str:
        """Written when the run has committed: the same run id again does nothing."""
        return self.under_checkpoint(f"runs/{self.run_id}.json")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from jobs.common.cli import command_parser

    p = command_parser("jobs.replay", __doc__)
    p.add_argument("--events", required=True, help="directory of event-log Parquet files")
    p.add_argument("--out", required=True, help="directory of the output tables")
    p.add_argument("--checkpoint", help="checkpoint directory; resumes when it exists "
                   "(default: a temporary one, a full replay)")
    p.add_argument("--run-id", help="run identifier (default: UTC timestamp)")
    p.add_argument("--config", help=f"job settings TOML (default: {DEFAULT_CONFIG})")
    p.add_argument("--buckets", type=int, help="replay groups per cluster (overrides config)")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    p.add_argument("--initial-state", nargs="+", default=[], metavar="FILE",
                   help="kafka-topics --describe output or ZooKeeper dumps: the partitions "
                   "that existed before the log, seeded before this run's first event")
    p.add_argument("--audit", action="store_true",
                   help="audit the run in the same session (jobs.audit); its verdict is "
                        "the exit code: 0 pass, 1 a check at or above --fail-on")
    p.add_argument("--fail-on", choices=("critical", "warning", "never"),
                   help="with --audit: the severity that fails the run (default: critical)")
    p.add_argument("--observed", nargs="+", default=(),
                   help="with --audit: kafka-topics --describe or ZooKeeper dump files")
    p.add_argument("--rebuild", action="store_true",
                   help="with --checkpoint: replay the whole log (late rows included) into a "
                        "new generation of the checkpoint, swapped in once the run commits; "
                        "its tables supersede the earlier runs'")
    p.add_argument("--verdict-json", metavar="FILE", help="with --audit: write the verdict, "
                   "the rows of every check and the run's key figures to FILE (local)")
    p.add_argument("--prometheus", metavar="FILE.prom", help="with --audit: the same as a "
                   "node_exporter textfile (local)")
    p.add_argument("--kafka-version", help="Kafka release line replayed, X.Y from 0.8 to "
                   "3.9 (overrides config's [kafka] kafka_version; default 3.7)")
    p.add_argument("--offset-evidence", metavar="DIR", help="jobs.ingest's offset_evidence "
                   "table, what the brokers' server.log say of offsets, for data_loss "
                   "(default: the one beside --events, if any)")
    return p.parse_args(argv)


def replay_config(cfg: dict[str, Any], kafka_version: str | None = None) -> ReplayConfig:
    """The controller settings of the config file: Kafka's broker defaults, then topics';
    the release line (`kafka_version` over the file's) and its Scala binary."""
    version, scala_binary = kafka_release(cfg, kafka_version)
    return ReplayConfig(
        kafka_version=version,
        scala_binary=scala_binary,
        unclean_leader_election_enable=bool(cfg["unclean_leader_election_enable"]),
        delete_topic_enable=bool(cfg["delete_topic_enable"]),
        min_insync_replicas=int(cfg["min_insync_replicas"]),
        topic_min_insync_replicas=tuple(
            (topic, int(settings["min_insync_replicas"]))
            for topic, settings in sorted(cfg["topics"].items())
            if "min_insync_replicas" in settings
        ),
    )


def read_settings(argv: list[str] | None) -> Settings:
    args = parse_args(argv)
    cfg, cfg_path = load_config(args.config)
    spark_conf = None
    if not under_spark_submit() and cfg.get("spark_conf"):
        base = cfg_path.parent.parent if cfg_path else None  # conf/replay.toml -> the root
        spark_conf = find_file(str(cfg["spark_conf"]), base)
    settings = Settings(
        events=args.events,
        out=args.out,
        checkpoint=args.checkpoint or "",  # a temporary one is made once the checks pass
        temporary_checkpoint=args.checkpoint is None,
        run_id=args.run_id or datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
        buckets=int(args.buckets or cfg["buckets"]),
        config=replay_config(cfg, args.kafka_version),
        max_file_age=str(cfg["max_file_age"]),
        config_file=cfg_path,
        spark_conf=spark_conf,
        master=args.master,
        audit=bool(args.audit),
        fail_on=args.fail_on,
        observed=tuple(args.observed),
        initial_state=tuple(args.initial_state),
        rules=rules_from_config(cfg, datetime.now(UTC)),
        rebuild=bool(args.rebuild),
        verdict_json=args.verdict_json,
        prometheus=args.prometheus,
        offset_evidence=args.offset_evidence,
    )
    log(f"events={settings.events} out={settings.out} "
        f"checkpoint={settings.checkpoint or '(temporary: full replay)'} "
        f"run_id={settings.run_id}")
    log(f"config={cfg_path or '(defaults)'} buckets={settings.buckets} {settings.config} "
        f"max_file_age={settings.max_file_age}")
    return settings


@dataclass
class StageClock:
    """Wall-clock seconds per stage, for `run_summary.stage_seconds`."""

    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    t0: float = field(default_factory=time.perf_counter)
    seconds: dict[str, float] = field(default_factory=dict)

    def since(self, start: float) -> float:
        return time.perf_counter() - start


def pin_settings(spark: SparkSession, checkpoint: str, buckets: int, profile: str
                 ) -> str | None:
    """Settings a checkpoint's state depends on, recorded by its first run; a later run
    that asks for others is refused. The bucket count is part of the state's key: another
    count would look for each topic's partitions in the wrong state row and silently start
    them from nothing. The release profile decides the rules the saved state was built
    with: resuming it under another release's rules would mix the two. A checkpoint from
    before profiles existed was built with 3.7's."""
    path = f"{checkpoint.rstrip('/')}/replay-settings.json"
    if not path_exists(spark, path):
        write_text(spark, path, json.dumps({"buckets": buckets, "kafka_profile": profile}) + "\n")
        return None
    pinned = json.loads(read_text(spark, path))
    pinned_buckets = int(pinned["buckets"])
    if pinned_buckets != buckets:
        return (f"checkpoint {checkpoint} was built with buckets={pinned_buckets}, this run "
                f"asks for buckets={buckets}; keep {pinned_buckets}, or replay in full with a "
                "new checkpoint")
    pinned_profile = str(pinned.get("kafka_profile", DEFAULT_KAFKA_VERSION))
    if pinned_profile != profile:
        return (f"checkpoint {checkpoint} was built with the Kafka {pinned_profile} profile, "
                f"this run asks for {profile}; keep --kafka-version {pinned_profile}, or "
                "replay in full with a new checkpoint")
    return None


# -- timeline stage ------------------------------------------------------------------------

@dataclass
class TimelineStage:
    """What the driver learnt from the whole log, and the timeline tables being written."""

    log_files: list[str]
    history: History | None
    scan: LogScan
    timelines: dict[str, ClusterTimeline]
    rows_written: dict[str, dict[str, int]]  # cluster -> timeline table -> rows
    writes: list[Future[int]]
    background: ThreadPoolExecutor
    seed_source: bool = False  # the query reads the checkpoint's seed/ folder too

    @property
    def applied_through(self) -> dict[str, int]:
        """Per cluster, what the committed runs applied: this run's rows at or below it
        are late."""
        return dict(self.history.applied_through) if self.history is not None else {}

    def finish_writes(self) -> None:
        for done in self.writes:
            done.result()
        self.background.shutdown()


def timeline_stage(spark: SparkSession, s: Settings, seed: Seed | None = None) -> TimelineStage:
    log_files = input_files(spark, s.events)
    history = load_history(spark, s.checkpoint, s.buckets)
    scan, scanned = scan_with_history(spark, s.events, log_files, history, s.buckets, s.rules)
    if not scanned and history is not None and history.run_id == s.run_id:
        # This run saved the history, then was killed before its marker: its files are
        # known, and so are the facts it found in them.
        scan = dataclasses.replace(scan, facts=history.run_facts)
    if seed is not None:
        seed_clusters(scan, s)  # before anything is written
    timelines = build_timelines(scan, s.config.profile)
    rows_written: dict[str, dict[str, int]] = {c: {} for c in timelines}
    batches: dict[str, list[pa.RecordBatch]] = {table: [] for table in TIMELINE_TABLES}
    for cluster, timeline in timelines.items():
        for table, rows in timeline_rows(timeline).items():
            rows_written[cluster][table] = len(rows)
            batches[table].append(rows_to_record_batch(table, cluster, s.run_id, rows))
    # The two small timeline tables are written by a background thread while the stream
    # runs (independent Spark jobs). Measured once on the bench log (1M events, 2 cores
    # shared with other work): the timeline stage took 4.4 s with the writes in the
    # background (the summary stage then waited 0.0 s for them) against 15.6 s with the
    # writes inline; on the sample log the inline writes took 2.2 s.
    background = ThreadPoolExecutor(max_workers=1)
    writes = [background.submit(write_arrow, spark, batches[table], s.out, table, s.run_id)
              for table in TIMELINE_TABLES]
    log(f"timeline: {scanned} file(s) scanned, {len(log_files) - scanned} known from the "
        f"checkpoint's history; clusters={list(timelines)} steps="
        f"{ {c: len(tl.steps) for c, tl in timelines.items()} }")
    return TimelineStage(log_files, history, scan, timelines, rows_written, writes,
                         background)


# -- stream stage --------------------------------------------------------------------------

def write_wake_rows(spark: SparkSession, s: Settings, timeline: TimelineStage) -> None:
    """One row per (cluster, bucket): every group with state replays this run, up to the
    cluster's horizon. Written once per run and horizon, under a name made of both and
    renamed into place whole: a rerun of a killed run finds its wake rows (replayed or
    not) instead of waking every bucket a second time."""
    rows = [(c, b, s.run_id, horizon(timeline.scan, c))
            for c, bs in timeline.scan.buckets.items() for b in bs]
    digest = hashlib.sha1(json.dumps(sorted({(r[0], r[3]) for r in rows})).encode())
    target = s.under_checkpoint(f"wake/{s.run_id}-{digest.hexdigest()[:12]}")
    if path_exists(spark, target):
        return
    staging = s.under_checkpoint(f"wake/_staging-{s.run_id}")  # hidden from the stream
    opened = arrow_filesystem(staging)
    if opened is None:  # no pyarrow client for the checkpoint's scheme: a Spark job
        spark.createDataFrame(rows, WAKE_SCHEMA).coalesce(1).write.mode("overwrite") \
            .parquet(staging)
    else:  # a few hundred rows: no Spark job for them
        delete_path(spark, staging)  # what a killed attempt left
        filesystem, inner = opened
        filesystem.create_dir(inner, recursive=True)
        pq.write_table(pa.Table.from_pylist([dict(zip(WAKE_SCHEMA.fieldNames(), r, strict=True))
                                             for r in rows], arrow_schema(WAKE_SCHEMA)),
                       f"{inner}/part-00000.parquet", filesystem=filesystem)
    rename_path(spark, staging, target)


def start_query(spark: SparkSession, s: Settings, timeline: TimelineStage,
                sink: BatchSink) -> StreamingQuery:
    """The streaming query: new event rows (and this run's wake rows) -> keyed -> packed ->
    replayed per (cluster, bucket) -> `sink`."""
    from jobs.replay.group import make_replay_fn
    from jobs.replay.query import start_replay_query

    rules = s.rules.with_conflicts(timeline.scan.facts)
    rows = key_events(stream_events(spark, s.events, s.max_file_age), s.buckets, rules)
    if timeline.timelines:
        wake = spark.readStream.schema(WAKE_SCHEMA).option("recursiveFileLookup", "true") \
            .parquet(s.under_checkpoint("wake"))
        rows = rows.unionByName(key_wake_rows(wake))
    if timeline.seed_source:
        seeds = spark.readStream.schema(EVENT_SCHEMA).option("recursiveFileLookup", "true") \
            .parquet(seed_dir(s.checkpoint))
        rows = rows.unionByName(key_events(seeds, s.buckets))
    replay_fn = make_replay_fn(timeline.timelines, s.config, timeline.applied_through)
    return start_replay_query(rows, replay_fn, sink, s.under_checkpoint("query"),
                              f"replay-{s.run_id}")


def stream_stage(spark: SparkSession, s: Settings, timeline: TimelineStage,
                 ledger: RunLedger, clock: StageClock) -> BatchSink:
    start = time.perf_counter()
    if timeline.timelines:
        write_wake_rows(spark, s, timeline)
    sink = BatchSink(s.out, s.run_id, s.buckets, ledger, log)
    start_query(spark, s, timeline, sink).awaitTermination()
    faults.reached("query_committed")
    elapsed = clock.since(start)
    clock.seconds["stream"] = elapsed - sink.fold_seconds - sink.write_seconds
    clock.seconds["replay"] = sink.fold_seconds
    clock.seconds["write"] = sink.write_seconds
    log(f"replay: {sink.batches} micro-batch(es) in {elapsed:.1f}s")
    return sink


# -- summary stage -------------------------------------------------------------------------

def state_chain(history: History | None, run_id: str) -> list[str]:
    """The runs whose state rows make up the state after this run (`run_summary.state_runs`):
    those of the generation's last committed run, then this one. A run on a new checkpoint
    generation (a first run, a `--rebuild`) wrote every partition: itself alone."""
    earlier = history.state_runs if history is not None else ()
    return [r for r in earlier if r != run_id] + [run_id]


def summary_stage(spark: SparkSession, s: Settings, timeline: TimelineStage,
                  ledger: RunLedger, clock: StageClock) -> None:
    """The run's summary from every batch it committed (a rerun's and a killed attempt's
    alike), then the history and the marker that close the run."""
    start = time.perf_counter()
    timeline.finish_writes()
    counts = ledger.totals()
    for cluster, written in timeline.rows_written.items():
        counts.setdefault(cluster, ClusterCounts()).rows_written.update(written)
    ensure_run_partitions(spark, s.out, s.run_id)
    previous_end = timeline.history.period_end if timeline.history is not None else {}
    rollups = offline_rollup(spark, s.out, s.run_id,
                             period_starts(spark, ledger.directory, previous_end),
                             {c: v.last_ts for c, v in counts.items()})
    clock.seconds["summary"] = clock.since(start)
    clock.seconds["total"] = clock.since(clock.t0)
    facts = timeline.scan.facts
    chain = state_chain(timeline.history, s.run_id)
    summary = summary_batches(counts, rollups, len(ledger.records), s.run_id, s.buckets,
                              clock.started_at, datetime.now(UTC), clock.seconds, facts,
                              s.superseded, chain)
    write_arrow(spark, summary, s.out, "run_summary", s.run_id)
    # The incidents the run touched, over the windows of every run of the checkpoint, and
    # what changed in the run.
    runs = committed_runs(spark, s.checkpoint)
    write_incidents(spark, s.out, s.run_id, runs,
                    {c: r.period_end_us for c, r in rollups.items()})
    write_changes(spark, s.out, s.run_id, runs, facts, timeline.timelines)
    write_data_loss(spark, s.out, s.run_id, find_evidence(spark, s.events, s.offset_evidence),
                    log)
    faults.reached("summary_written")
    applied = timeline.applied_through
    for cluster, c in counts.items():
        applied[cluster] = max(applied.get(cluster, -1), c.applied_through)
    ends = dict(previous_end)
    for cluster, rollup in rollups.items():
        if rollup.period_end_us is not None:
            ends[cluster] = max(ends.get(cluster, rollup.period_end_us), rollup.period_end_us)
    seen = dict(timeline.history.seen_through) if timeline.history is not None else {}
    for cluster, f in facts.items():
        if f.seq_max is not None:
            seen[cluster] = max(seen.get(cluster, f.seq_max), f.seq_max, applied.get(cluster, -1))
    save_history(spark, s.checkpoint, timeline.log_files, timeline.scan, applied, ends, seen,
                 s.run_id, chain)
    faults.reached("history_saved")
    write_text(spark, s.marker,
               json.dumps({"run_id": s.run_id, "batches": len(ledger.records)}) + "\n")
    print_summary(s.out, s.run_id, counts, rollups, facts)


# -- the job -------------------------------------------------------------------------------

def seed_source(spark: SparkSession, s: Settings, seed: Seed | None) -> bool:
    """Whether the query reads the checkpoint's seed folder (made on a new checkpoint);
    InitialStateError when `--initial-state` cannot be honoured on this checkpoint."""
    query_started = path_exists(spark, s.under_checkpoint("query/offsets"))
    if seed is not None and query_started and not seed_source_exists(spark, s.checkpoint):
        raise InitialStateError(
            f"--initial-state: checkpoint {s.checkpoint} was made before --initial-state "
            "existed; seed a new checkpoint (a full replay)")
    return ensure_seed_source(spark, s.checkpoint, query_started)


def seed_clusters(scan: LogScan, s: Settings) -> None:
    """`--initial-state` names no cluster: the log must hold exactly one."""
    clusters = sorted(scan.buckets)
    if len(clusters) != 1:
        raise InitialStateError(f"--initial-state needs an event log of one cluster; "
                                f"{s.events} holds {len(clusters)}: {clusters[:5]}")


def seed_stage(spark: SparkSession, s: Settings, timeline: TimelineStage,
               seed: Seed | None) -> None:
    """Write this run's `--initial-state` rows into the checkpoint's seed folder."""
    if seed is None:
        return
    clusters = sorted(timeline.scan.buckets)
    applied = timeline.applied_through.get(clusters[0], -1)
    ts = first_new_event(read_events(spark, s.events), clusters[0], applied)
    if ts is None:
        log(f"initial state: no event after seq {applied}: nothing to seed")
        return
    rows = seed_rows(seed, clusters[0], applied + 1, ts)
    write_seed_rows(spark, s.checkpoint, s.run_id, rows)
    skipped = f"; without an assignment, not seeded: {seed.without_assignment[:10]}" \
        if seed.without_assignment else ""
    log(f"initial state: {len(rows)} PartitionSnapshot row(s) at seq {applied + 1}{skipped}")


def replay_run(spark: SparkSession, s: Settings, clock: StageClock,
               seed: Seed | None = None) -> int:
    """The run, holding the checkpoint: nothing is written before the lease is taken."""
    if path_exists(spark, s.marker):
        log(f"run {s.run_id} is already committed in {s.checkpoint}; nothing to do "
            "(new files are taken in by the next run id)")
        return 0
    problem = pin_settings(spark, s.checkpoint, s.buckets, s.config.profile.name)
    if problem is not None:
        return error(problem)
    ledger = RunLedger(spark, s.checkpoint, s.run_id).load()
    if ledger.records:
        log(f"run {s.run_id} resumes: batch(es) {sorted(ledger.records)} already written")
    start = time.perf_counter()
    try:
        has_seed_source = seed_source(spark, s, seed)
        timeline = timeline_stage(spark, s, seed)
    except InitialStateError as exc:
        return error(str(exc))
    timeline.seed_source = has_seed_source
    clock.seconds["timeline"] = clock.since(start)
    seed_stage(spark, s, timeline, seed)
    stream_stage(spark, s, timeline, ledger, clock)
    summary_stage(spark, s, timeline, ledger, clock)
    return 0


def early_problem(s: Settings) -> str | None:
    """What can be refused before Spark starts: a run id that cannot name a directory, an
    output or checkpoint directory inside the event directory, a rebuild of no checkpoint,
    the audit's flags without --audit, files to publish its verdict to where they cannot
    be written."""
    if s.rebuild and s.temporary_checkpoint:
        return ("--rebuild replaces a checkpoint's state with a replay of the whole log; "
                "give the --checkpoint to rebuild (without one every run is a full replay)")
    return (run_id_problem(s.run_id) or nested_problem(s.events, s.out, s.checkpoint or None)
            or audit_flags_problem(s))


def audit_flags_problem(s: Settings) -> str | None:
    """The audit's flags without --audit would be ignored: a scheduler that asked for
    `--fail-on critical` would read exit 0 as a pass that no check made."""
    if not s.audit:
        given = [flag for flag, value in (("--fail-on", s.fail_on), ("--observed", s.observed),
                                          ("--verdict-json", s.verdict_json),
                                          ("--prometheus", s.prometheus)) if value]
        if given:
            return f"{', '.join(given)} configure the audit of the run: add --audit"
        return None
    if s.verdict_json is None and s.prometheus is None:
        return None
    from jobs.audit.publish import publish_problem

    return publish_problem(s.verdict_json, s.prometheus)


def run_with_session(spark: SparkSession, s: Settings, clock: StageClock,
                     seed: Seed | None = None) -> int:
    problem = out_problem(spark, s.out, s.run_id) or evidence_problem(spark, s.offset_evidence)
    if problem is not None:
        return error(problem)
    if s.temporary_checkpoint:
        return replay_run(spark, s, clock, seed)
    try:
        with CheckpointLease(spark, s.checkpoint, s.run_id):
            return replay_generation(spark, s, clock, seed)
    except LeaseHeld as exc:  # not bad input: the same command succeeds once it is free
        print(f"[replay] BUSY: checkpoint {s.checkpoint}: {exc}; retry later",
              file=sys.stderr, flush=True)
        return CHECKPOINT_BUSY


def replay_generation(spark: SparkSession, s: Settings, clock: StageClock,
                      seed: Seed | None = None) -> int:
    """The run in the checkpoint's active generation; with `--rebuild`, the whole log in
    a new generation, swapped in once the run has committed (`jobs.replay.rebuild`)."""
    active = active_checkpoint(spark, s.checkpoint)
    if not s.rebuild:
        return replay_run(spark, dataclasses.replace(s, checkpoint=active), clock, seed)
    target = generation(s.checkpoint, s.run_id)
    if target == active:
        log(f"rebuild {s.run_id} is already the checkpoint's generation; nothing to do")
        return 0
    superseded = tuple(r for r in committed_runs(spark, active) if r != s.run_id)
    log(f"rebuild: the whole log into {target}; supersedes run(s) {list(superseded)}")
    rc = replay_run(spark, dataclasses.replace(s, checkpoint=target, superseded=superseded),
                    clock, seed)
    if rc == 0:
        swap_in(spark, s.checkpoint, target)
        log(f"rebuild: {target} is now the checkpoint's generation")
    return rc


def audit_run(spark: SparkSession, s: Settings, replay_rc: int = 0) -> int:
    """`--audit`: the nightly audit of this run in the same session (one spark-submit for
    the scheduler); its verdict is the job's exit code. A replay that stopped (bad input,
    a busy checkpoint) is published as verdict ERROR with its exit code."""
    from jobs.audit import options_from_config, run_audit
    from jobs.audit.publish import publish_run, replay_stopped

    if replay_rc != 0:
        result = replay_stopped(s.run_id, s.fail_on, replay_rc)
    else:
        options = options_from_config(str(s.config_file) if s.config_file else None,
                                      fail_on=s.fail_on, observed=s.observed or None)
        result = run_audit(spark, s.out, s.run_id, options)
    return publish_run(spark, s.out, result, verdict_json=s.verdict_json,
                       prometheus=s.prometheus)


def sized_for_log(s: Settings) -> dict[str, str]:
    """The session's settings for a small log (`jobs.replay.sizing`), said when taken."""
    if under_spark_submit():
        return {}
    configured = read_properties(s.spark_conf) if s.spark_conf is not None else {}
    sized = small_log_settings(log_rows(s.events), s.master or configured.get("spark.master"),
                               s.temporary_checkpoint,
                               configured.get("spark.driver.extraJavaOptions", ""))
    if sized:
        log(f"small log: {', '.join(f'{k}={v}' for k, v in sorted(sized.items()))}")
    return sized


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    from jobs.replay.kraft.job import kraft_events, kraft_main

    kraft = kraft_events(argv)  # a KRaft metadata log: folded on the driver
    if kraft is not None:
        return kraft_main(argv, kraft, spark)
    try:
        s = read_settings(argv)
    except (ValueError, FileNotFoundError) as exc:  # the config file
        return error(str(exc))
    problem = early_problem(s)
    if problem is not None:
        return error(problem)
    try:
        seed = read_initial_state(s.initial_state) if s.initial_state else None
    except InitialStateError as exc:
        return error(str(exc))
    clock = StageClock()
    try:
        # Before Spark starts where pyarrow can read the file system (a bad file costs
        # seconds, not a JVM start); through Spark where only Hadoop has a client.
        files: int | None = check_event_files(s.events, log)
    except NeedsSpark:
        files = None
    except EventSchemaError as exc:
        return error(str(exc))
    if s.temporary_checkpoint:
        s = dataclasses.replace(s, checkpoint=scratch_path(s.out, "replay-checkpoint-"))
    try:
        if spark is None:
            spark = build_session("kafka-controller-replay", master=s.master,
                                  properties_file=s.spark_conf, conf=sized_for_log(s))
        if files is None:
            files = check_event_files(s.events, log, spark=spark)
        clock.seconds["check"] = clock.since(clock.t0)
        log(f"schema check: {files} file(s) readable")
        rc = run_with_session(spark, s, clock, seed)
        return audit_run(spark, s, rc) if s.audit else rc
    except EventSchemaError as exc:
        return error(str(exc))
    except Exception as exc:
        explained = read_failure(exc)
        if explained is None:
            raise
        return error(explained)
    finally:
        if s.temporary_checkpoint:
            remove_scratch(spark, s.checkpoint)


__all__ = ["main"]
