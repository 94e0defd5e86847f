"""The stages of a ZooKeeper-mode replay run, in the order it goes through them
(`jobs.engine.replay_run` strings them together):

* the timeline stage: scan the log (the files earlier runs scanned come from the
  checkpoint's history), build the cluster timelines on the driver and write
  `broker_timeline` / `controller_timeline` in the background;
* the seed stage: `--initial-state` rows into the checkpoint's seed folder;
* the stream stage: this run's wake rows, then one Structured Streaming query
  (availableNow) that validates and keys the new rows, groups them by (cluster, bucket),
  folds them through the core with the state in `GroupState` and writes the tables from
  `foreachBatch`;
* the summary stage: `run_summary`, the incidents and changes the run touched, the
  checkpoint's history and the run marker.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from jobs.common import kill_points
from jobs.engine.batch_sink import BatchSink
from jobs.engine.codec import rows_to_record_batch
from jobs.engine.data_loss_table import find_evidence, write_data_loss
from jobs.engine.event_log import (
    read_events,
    stream_events,
)
from jobs.engine.initial_state import (
    InitialStateError,
    Seed,
    first_new_event,
    seed_dir,
    seed_rows,
    write_seed_rows,
)
from jobs.engine.keying import key_events, key_wake_rows
from jobs.engine.log_history import (
    History,
    SavedPlan,
    input_files,
    load_history,
    save_history,
    scan_with_history,
)
from jobs.engine.offline_rollup import offline_rollup, period_starts
from jobs.engine.rollup_carry import remove_carries
from jobs.engine.rollups import carry_in, write_rollups
from jobs.engine.run_summary import print_summary, summary_batches
from jobs.engine.settings import Settings, StageClock
from jobs.engine.state_refresh import StateRefresh, plan_refresh
from jobs.engine.timeline import LogScan, build_timelines, horizon, timeline_rows
from jobs.store.filesystem import (
    arrow_filesystem,
    delete_path,
    list_names,
    path_exists,
    rename_path,
    write_text,
)
from jobs.store.generations import committed_runs
from jobs.store.ledger import ClusterCounts, RunLedger
from jobs.store.tables import ensure_run_partitions, write_arrow
from schemas.arrow import arrow_schema
from schemas.events import EVENT_SCHEMA
from schemas.state import WAKE_SCHEMA
from schemas.tables import TIMELINE_TABLES
from statemachine.cluster import ClusterTimeline

log = logging.getLogger(__name__)


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
    refresh: StateRefresh  # the buckets whose every state row the run writes; the chain
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
    writes = [background.submit(write_arrow, batches[table], s.out, table, s.run_id)
              for table in TIMELINE_TABLES]
    log.info(f"timeline: {scanned} file(s) scanned, {len(log_files) - scanned} known from the "
             f"checkpoint's history; clusters={list(timelines)} steps="
             f"{ {c: len(tl.steps) for c, tl in timelines.items()} }")
    refresh = refresh_of(history, s)
    return TimelineStage(log_files, history, scan, timelines, rows_written, writes,
                         background, refresh)


def refresh_of(history: History | None, s: Settings) -> StateRefresh:
    """The run's share of the state rewriting and its chain, from the history."""
    if history is None:
        return plan_refresh(s.run_id, s.state_refresh_runs, None, None, None, ())
    refresh = plan_refresh(s.run_id, s.state_refresh_runs, history.run_id,
                           history.state_cycle, history.state_index, history.state_runs)
    share = ("every replay group" if refresh.index == 0 else
             f"the groups of bucket % {refresh.cycle} == {refresh.index % refresh.cycle}")
    log.info(f"state rows: those the run changes, and every one of {share}; the state after "
             f"the run is in {len(refresh.chain)} run(s)")
    return refresh


def write_wake_rows(spark: SparkSession, s: Settings, timeline: TimelineStage) -> None:
    """One row per (cluster, bucket): every group with state replays this run, up to the
    cluster's horizon. Written once per run and horizon, under a name made of both and
    renamed into place whole: a rerun of a killed run finds its wake rows (replayed or
    not) instead of waking every bucket a second time."""
    rows = [(c, b, s.run_id, horizon(timeline.scan, c))
            for c, bs in timeline.scan.buckets.items() for b in bs]
    digest = hashlib.sha1(json.dumps(sorted({(r[0], r[3]) for r in rows})).encode())
    target = s.layout.wake_rows(s.run_id, digest.hexdigest()[:12])
    if path_exists(target):
        return
    staging = s.layout.wake_staging(s.run_id)
    opened = arrow_filesystem(staging)
    if opened is None:  # no pyarrow client for the checkpoint's scheme: a Spark job
        spark.createDataFrame(rows, WAKE_SCHEMA).coalesce(1).write.mode("overwrite") \
            .parquet(staging)
    else:  # a few hundred rows: no Spark job for them
        delete_path(staging)  # what a killed attempt left
        filesystem, inner = opened
        filesystem.create_dir(inner, recursive=True)
        pq.write_table(pa.Table.from_pylist([dict(zip(WAKE_SCHEMA.fieldNames(), r, strict=True))
                                             for r in rows], arrow_schema(WAKE_SCHEMA)),
                       f"{inner}/part-00000.parquet", filesystem=filesystem)
    rename_path(staging, target)


def start_query(spark: SparkSession, s: Settings, timeline: TimelineStage,
                sink: BatchSink) -> StreamingQuery:
    """The streaming query: new event rows (and this run's wake rows) -> keyed -> packed ->
    replayed per (cluster, bucket) -> `sink`."""
    from jobs.engine.group_fn import make_replay_fn
    from jobs.engine.query import start_replay_query

    rules = s.rules.with_conflicts(timeline.scan.facts)
    rows = key_events(stream_events(spark, s.events, s.max_file_age), s.buckets, rules)
    if timeline.timelines:
        wake = spark.readStream.schema(WAKE_SCHEMA).option("recursiveFileLookup", "true") \
            .parquet(s.layout.wake)
        rows = rows.unionByName(key_wake_rows(wake))
    if timeline.seed_source:
        seeds = spark.readStream.schema(EVENT_SCHEMA).option("recursiveFileLookup", "true") \
            .parquet(seed_dir(s.checkpoint))
        rows = rows.unionByName(key_events(seeds, s.buckets))
    replay_fn = make_replay_fn(timeline.timelines, s.config, timeline.applied_through,
                               refresh=timeline.refresh)
    return start_replay_query(rows, replay_fn, sink, s.layout.query,
                              f"replay-{s.run_id}")


def stream_stage(spark: SparkSession, s: Settings, timeline: TimelineStage,
                 ledger: RunLedger, clock: StageClock) -> BatchSink:
    start = time.perf_counter()
    if timeline.timelines:
        write_wake_rows(spark, s, timeline)
    sink = BatchSink(s.out, s.run_id, s.buckets, ledger, log.info)
    start_query(spark, s, timeline, sink).awaitTermination()
    kill_points.reached("query_committed")
    elapsed = clock.since(start)
    clock.seconds["stream"] = elapsed - sink.fold_seconds - sink.write_seconds
    clock.seconds["replay"] = sink.fold_seconds
    clock.seconds["write"] = sink.write_seconds
    log.info(f"replay: {sink.batches} micro-batch(es) in {elapsed:.1f}s")
    return sink


def summary_stage(spark: SparkSession, s: Settings, timeline: TimelineStage,
                  ledger: RunLedger, clock: StageClock) -> None:
    """The run's summary from every batch it committed (a rerun's and a killed attempt's
    alike), then the history and the marker that close the run."""
    start = time.perf_counter()
    timeline.finish_writes()
    counts = ledger.totals()
    for cluster, written in timeline.rows_written.items():
        counts.setdefault(cluster, ClusterCounts()).rows_written.update(written)
    ensure_run_partitions(s.out, s.run_id)
    previous_end = timeline.history.period_end if timeline.history is not None else {}
    rollups = offline_rollup(s.out, s.run_id,
                             period_starts(ledger.directory, previous_end),
                             {c: v.last_ts for c, v in counts.items()})
    clock.seconds["summary"] = clock.since(start)
    clock.seconds["total"] = clock.since(clock.t0)
    facts = timeline.scan.facts
    chain = list(timeline.refresh.chain)
    summary = summary_batches(counts, rollups, len(ledger.records), s.run_id, s.buckets,
                              clock.started_at, datetime.now(UTC), clock.seconds, facts,
                              s.superseded, chain)
    write_arrow(summary, s.out, "run_summary", s.run_id)
    # The incidents the run touched, rolled up over its windows and those the earlier runs
    # left open, and what changed in the run; then what the next run's roll-ups need.
    history = timeline.history
    start_from = carry_in(s.checkpoint, s.out, s.run_id, history,
                          lambda: committed_runs(spark, s.checkpoint))
    write_rollups(s.checkpoint, s.out, s.run_id, start_from,
                  {c: r.period_end_us for c, r in rollups.items()}, facts, timeline.timelines,
                  spark)
    write_data_loss(s.out, s.run_id, find_evidence(s.events, s.offset_evidence), log.info)
    kill_points.reached("summary_written")
    applied = timeline.applied_through
    for cluster, c in counts.items():
        applied[cluster] = max(applied.get(cluster, -1), c.applied_through)
    ends = dict(previous_end)
    for cluster, rollup in rollups.items():
        if rollup.period_end_us is not None:
            ends[cluster] = max(ends.get(cluster, rollup.period_end_us), rollup.period_end_us)
    seen = dict(history.seen_through) if history is not None else {}
    for cluster, f in facts.items():
        if f.seq_max is not None:
            seen[cluster] = max(seen.get(cluster, f.seq_max), f.seq_max, applied.get(cluster, -1))
    plan = SavedPlan(timeline.refresh.cycle, timeline.refresh.index, start_from.written_by,
                     carried=True)
    save_history(spark, s.checkpoint, timeline.log_files, timeline.scan, applied, ends, seen,
                 s.run_id, chain, plan, activity_bounds(history))
    kill_points.reached("history_saved")
    write_text(s.marker,
               json.dumps({"run_id": s.run_id, "batches": len(ledger.records)}) + "\n")
    remove_spent(s)
    print_summary(s.out, s.run_id, counts, rollups, facts, s.release)


def activity_bounds(history: History | None) -> dict[str, int]:
    """Per cluster, the deletion activity the history keeps: from the horizon of the run
    before this one (`log_history.compact_activity`)."""
    if history is None:
        return {}
    return {c: h for c in history.scan.cluster_events
            if (h := horizon(history.scan, c)) is not None}


def remove_spent(s: Settings) -> None:
    """Once the run has committed, what no run reads again: the carries of the earlier
    runs, and their wake and seed rows (Spark's file source has recorded them as read; a
    later run's query only lists the folders)."""
    remove_carries(s.checkpoint, s.run_id)
    for folder in (s.layout.wake, s.layout.seed):
        if not path_exists(folder):
            continue
        for name in list_names(folder):
            if not name.startswith(("_", ".", f"{s.run_id}-")):
                delete_path(f"{folder}/{name}")


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
        log.info(f"initial state: no event after seq {applied}: nothing to seed")
        return
    rows = seed_rows(seed, clusters[0], applied + 1, ts)
    write_seed_rows(spark, s.checkpoint, s.run_id, rows)
    skipped = f"; without an assignment, not seeded: {seed.without_assignment[:10]}" \
        if seed.without_assignment else ""
    log.info(f"initial state: {len(rows)} PartitionSnapshot row(s) at seq {applied + 1}{skipped}")


