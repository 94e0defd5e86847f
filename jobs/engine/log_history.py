"""What earlier runs learnt from the log, kept in the checkpoint, so that a nightly run
scans only the files that are new to it.

The cluster timeline needs every cluster-scope row since the log began, and a run wakes
every cluster seen so far. Rebuilding both from the whole log each night would read a
year of files to replay one day. It would also go wrong once old files are removed by
retention: the timeline would forget which brokers are alive. So each committed run saves
`<checkpoint>/history.json`, which holds:

* the files scanned;
* the clusters seen;
* the distinct valid cluster-scope events per cluster (a few per broker restart, so
  thousands of rows for a year of a busy cluster), and the deletion activity from the
  previous run's horizon on (`compact_activity`: what a later run may still apply);
* the state chain and its rewriting plan (`jobs.engine.state_refresh`), and which run's
  roll-up carry to read (`jobs.engine.rollup_carry`).

The next run scans only the files missing from it. The history is replaced after the
streaming query has committed, so a run that crashes keeps the previous history, and its
files are scanned again next time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote

from pyspark.sql import SparkSession

from jobs.engine.event_log import READ_OPTIONS, read_events
from jobs.engine.log_checks import SeqFacts, facts_from_json, facts_to_json
from jobs.engine.plausibility import Plausibility
from jobs.engine.timeline import LogScan, ScanContext, event_of, log_scan, scan_log
from jobs.store.filesystem import delete_path, path_exists, read_text, rename_path, write_text
from jobs.store.layout import CheckpointLayout
from schemas.events import EVENT_SCHEMA
from statemachine.cluster import DELETION_ACTIVITY
from statemachine.events import Event

HISTORY_FORMAT = 1


@dataclass(frozen=True)
class History:
    files: frozenset[str]  # as Spark lists them (`DataFrame.inputFiles()`)
    scan: LogScan
    # cluster -> the highest seq the committed runs applied: a row at or below it is late
    # (absent in a history written before lateness was decided per cluster: nothing).
    applied_through: dict[str, int] = field(default_factory=dict)
    # cluster -> the last event time (microseconds) of the committed runs: where the next
    # run's period starts (jobs/engine/offline_rollup.py).
    period_end: dict[str, int] = field(default_factory=dict)
    # cluster -> the highest seq the committed runs read, applied or not: where the next
    # run's seqs must go on (a gap after it is missing events). Absent in a history written
    # before gaps were reported: `applied_through` stands in.
    seen_through: dict[str, int] = field(default_factory=dict)
    # The run that saved it and the log facts of the files it scanned: a rerun of that run
    # (killed before its marker) scans nothing new and reports the same facts.
    run_id: str | None = None
    run_facts: dict[str, SeqFacts] = field(default_factory=dict)
    # The runs whose state rows make up the state after `run_id`, oldest first
    # (`run_summary.state_runs`). A history written before them: `run_id` alone, which
    # wrote the whole state as every run then did.
    state_runs: tuple[str, ...] = ()
    # The saving run's share of the state rewriting (`jobs.engine.state_refresh`): the
    # cycle and its position in it. None: a history from before the rewriting (the next
    # run starts a chain).
    state_cycle: int | None = None
    state_index: int | None = None
    # The roll-ups' carry the saving run read (`jobs.engine.rollup_carry`: the run that
    # wrote it; None: none, the roll-ups read every committed run); the saving run wrote
    # its own under `run_id`, read by the next run, and a rerun of the saving run reads
    # this one again. `carried`: whether the saving run wrote a carry at all.
    rollup_from: str | None = None
    carried: bool = False


@dataclass(frozen=True)
class SavedPlan:
    """What the saving run decided for the runs after it: its place in the state's
    rewriting cycle and the roll-ups' carry it read and wrote (`History`'s fields)."""

    state_cycle: int | None = None
    state_index: int | None = None
    rollup_from: str | None = None
    carried: bool = False


def _path(checkpoint: str) -> str:
    return CheckpointLayout(checkpoint).history


def load_history(spark: SparkSession, checkpoint: str, buckets: int) -> History | None:
    path = _path(checkpoint)
    if not path_exists(path):
        # A run that stopped between removing the old history and renaming the new one
        # left the new one complete under its temporary name.
        path = f"{path}.tmp"
        if not path_exists(path):
            return None
    saved = json.loads(read_text(path))
    if saved.get("format") != HISTORY_FORMAT:
        raise ValueError(f"{path} has format {saved.get('format')}, this build reads "
                         f"{HISTORY_FORMAT}; replay in full with a new checkpoint")
    events = {c: [event_of(e) for e in evs] for c, evs in saved["cluster_events"].items()}
    applied = {c: int(seq) for c, seq in saved.get("applied_through", {}).items()}
    ends = {c: int(t) for c, t in saved.get("period_end", {}).items()}
    seen = {c: int(seq) for c, seq in saved.get("seen_through", {}).items()}
    run_id = saved.get("run_id")
    chain = saved.get("state_runs") or ([run_id] if run_id else [])
    return History(frozenset(saved["files"]), log_scan(saved["clusters"], events, buckets),
                   applied, ends, seen, run_id,
                   facts_from_json(saved.get("run_facts", {})), tuple(chain),
                   saved.get("state_cycle"), saved.get("state_index"),
                   saved.get("rollup_from"), bool(saved.get("carried", False)))


def save_history(spark: SparkSession, checkpoint: str, files: list[str], scan: LogScan,
                 applied_through: dict[str, int],
                 period_end: dict[str, int] | None = None,
                 seen_through: dict[str, int] | None = None,
                 run_id: str | None = None, state_runs: Sequence[str] = (),
                 plan: SavedPlan | None = None,
                 activity_from: Mapping[str, int] | None = None) -> None:
    """Replace the history (written aside, then renamed over the old one). The deletion
    activity of a cluster below `activity_from` is left out (`compact_activity`)."""
    plan = plan or SavedPlan()
    events = compact_activity(scan.cluster_events, activity_from or {})
    text = json.dumps({
        "format": HISTORY_FORMAT,
        "files": sorted(files),
        "clusters": sorted(scan.buckets),
        "cluster_events": {c: [list(e) for e in evs] for c, evs in sorted(events.items())},
        "applied_through": dict(sorted(applied_through.items())),
        "period_end": dict(sorted((period_end or {}).items())),
        "seen_through": dict(sorted((seen_through or {}).items())),
        "run_id": run_id,
        "run_facts": facts_to_json(scan.facts),
        "state_runs": list(state_runs),
        "state_cycle": plan.state_cycle,
        "state_index": plan.state_index,
        "rollup_from": plan.rollup_from,
        "carried": plan.carried,
    }, separators=(",", ":"))
    path = _path(checkpoint)
    write_text(f"{path}.tmp", text + "\n")
    delete_path(path)
    rename_path(f"{path}.tmp", path)


def compact_activity(events: Mapping[str, list[Event]], below: Mapping[str, int]
                     ) -> dict[str, list[Event]]:
    """The cluster events without the deletion activity of a cluster below its bound.

    The history is read whole every night, and of what it keeps only the deletion activity
    (a `TopicDeletionRequested`, and a row per broker and topic of the `StopReplica`
    responses) grows with the topics deleted rather than with the brokers' lives. The
    timeline needs an activity step only for the groups that have not replayed past it:
    every group with state replays each run up to the run's horizon (its last cluster
    event), and a group without state has no queued topic for a step to walk. So once a
    run has committed, the activity below its horizon is never applied again; the bound a
    run passes is the horizon of the run before it (`horizon` of the history it loaded),
    which keeps its own activity, hence its own horizon for a rerun of it. The broker and
    controller events stay: the timeline tables list every one."""
    return {c: [e for e in evs if e.event_type not in DELETION_ACTIVITY
                or c not in below or e.seq >= below[c]]
            for c, evs in events.items()}


def input_files(spark: SparkSession, events_dir: str) -> list[str]:
    """Every data file of the log, as Spark lists them (hidden and `_` files skipped)."""
    reader = spark.read.schema(EVENT_SCHEMA).options(**READ_OPTIONS)
    return sorted(reader.parquet(events_dir).inputFiles())


def scan_with_history(
    spark: SparkSession, events_dir: str, files: list[str], history: History | None,
    buckets: int, rules: Plausibility | None = None,
) -> tuple[LogScan, int]:
    """The whole log's scan: the history plus a scan of the files it has not seen (whose
    facts are judged against what the committed runs saw and applied). Returns the scan
    and the number of files read."""
    if history is None:
        return scan_log(read_events(spark, events_dir), buckets, ScanContext(rules)), len(files)
    new = [f for f in files if f not in history.files]
    if not new:
        return history.scan, 0  # a rerun of the saving run: the caller restores its facts
    seen = {**history.applied_through, **history.seen_through}
    context = ScanContext(rules, seen, history.applied_through)
    # `inputFiles()` gives URIs (a space is %20); the reader takes paths.
    reader = spark.read.schema(EVENT_SCHEMA)
    fresh = scan_log(reader.parquet(*[unquote(f) for f in new]), buckets, context)
    clusters = set(history.scan.buckets) | set(fresh.buckets)
    events = {
        c: list({*history.scan.cluster_events.get(c, []),
                 *on_time(fresh.cluster_events.get(c, []), history.applied_through.get(c))})
        for c in clusters
    }
    return log_scan(clusters, events, buckets, fresh.facts), len(new)


def on_time(events: list[Event], applied_through: int | None) -> list[Event]:
    """The new cluster events the timeline may take: a late one (at or below what the
    committed runs applied) would change brokers' history that every bucket has already
    replayed past, so it is left to the replay, which counts it late."""
    if applied_through is None:
        return events
    return [e for e in events if e.seq > applied_through]
