"""One cluster's KRaft log folded into the rows of every table of the run (pure but for
the reading, which `source` did): the fold's outputs, the metadata writes, the incidents,
the offline roll-up, the changes digest, and the counts of the run summary.

`run_summary` of a KRaft run: `rows_read` is every `metadata_records` row of the cluster
plus the NoOpRecords `jobs.ingest` counted without writing them; `rows_applied` the records
folded into the image; every other row is skipped and counted in `findings_by_kind` under
a `skipped:` key (`skipped:NoOpRecord`, `skipped:control`, `skipped:aborted`,
`skipped:open_transaction`, `skipped:unknown`, `skipped:rejected`, `skipped:before_snapshot`
and `skipped:<record type>` for the types the image does not model), so that `rows_read`
equals `rows_applied` plus the `skipped:` counts. `rows_duplicate`, `rows_quarantined` and
`rows_late` are 0: a metadata log has no duplicates or late rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from jobs.engine.change_digest import Change, Window
from jobs.engine.kraft.changes import kraft_changes
from jobs.engine.kraft.metadata_source import ClusterLog
from jobs.engine.kraft.writes import MetadataWriteRow, RecordingImage, write_rows
from jobs.engine.log_checks import SeqFacts
from jobs.engine.offline_rollup import Rollup, window_sums
from jobs.engine.offline_rollup import Window as OfflineWindow
from jobs.store.kraft_checkpoint import ClusterState
from jobs.store.ledger import ClusterCounts
from statemachine.incidents import elections_of, of_run
from statemachine.kraft.fold import UNCLEAN, KraftFold, KraftOutputs
from statemachine.kraft.profiles import KraftProfile
from statemachine.kraft.records import MetadataRecord
from statemachine.rows import IncidentRow

SKIPPED = "skipped:"
BEFORE_CHECKPOINT = "before_checkpoint"  # folded by an earlier run of the checkpoint
INCIDENT_KINDS = ("offline", "under_min_isr")


@dataclass
class ClusterRun:
    """Every table's rows of one cluster, and its counts."""

    outputs: KraftOutputs
    writes: list[MetadataWriteRow]
    incidents: list[IncidentRow]
    changes: list[Change]
    counts: ClusterCounts
    rollup: Rollup
    facts: SeqFacts
    skipped: Counter[str] = field(default_factory=Counter)
    state: ClusterState | None = None  # the fold as the next incremental run resumes it


def skipped_counts(log: ClusterLog, out: KraftOutputs, ingest_noops: int) -> Counter[str]:
    """What was read and not folded, by reason (module docstring)."""
    c = out.counts
    found = Counter({
        "NoOpRecord": c.noops + ingest_noops, "control": c.control, "aborted": c.aborted,
        "open_transaction": c.open_transaction, "unknown": c.unknown,
        "rejected": c.rejected, **log.skipped})
    found.update(c.not_modelled)
    return Counter({f"{SKIPPED}{k}": v for k, v in found.items() if v})


def run_counts(out: KraftOutputs, rows_read: int, skipped: Counter[str],
               last_ts: int) -> ClusterCounts:
    """The run summary's counts of one cluster's fold (one group: bucket 0), for a replay
    and for each what-if variant alike."""
    by_state = Counter(s.state for s in out.partition_states)
    offline = [(s.topic, s.partition) for s in out.partition_states
               if s.state == "OfflinePartition"]
    return ClusterCounts(
        rows_read=rows_read, rows_applied=out.counts.applied,
        findings_by_kind=Counter(f.kind for f in out.findings) + skipped,
        buckets={0: (dict(by_state), offline[:20])}, last_ts=last_ts)


def offset_facts(records: Iterable[MetadataRecord]) -> SeqFacts:
    """The lowest and highest record offsets folded, as the run summary's seq range."""
    offsets = [r.offset for r in records if r.offset is not None]
    return SeqFacts(seq_min=min(offsets, default=None), seq_max=max(offsets, default=None))


def fold_cluster(cluster: str, log: ClusterLog, profile: KraftProfile, default_min_isr: int,
                 run_id: str, ingest_noops: int = 0,
                 resume: ClusterState | None = None) -> ClusterRun:
    """Fold one cluster's log, or with `resume` (an incremental run,
    `jobs.store.kraft_checkpoint`) its records after the state's `through`, into the
    state's fold; the run's incidents are rolled up over the windows of every run."""
    fold, records, skipped_before = _start(log, profile, default_min_isr, resume)
    image = fold.image
    assert isinstance(image, RecordingImage)
    fold.feed(records)
    out = fold.finish()
    fold.out = KraftOutputs()  # the state keeps no rows: they are this run's
    skipped = skipped_counts(log, out, ingest_noops)
    if skipped_before:
        skipped[f"{SKIPPED}{BEFORE_CHECKPOINT}"] = skipped_before
    stamps = [r.ts for r in records if r.ts is not None]
    start = None if resume is None or resume.last_ts < 0 else resume.last_ts
    last_ts = max(stamps, default=-1 if start is None else start)
    rollup = offline_rollup(cluster, out, last_ts, start)
    earlier = ([], []) if resume is None else (resume.windows, resume.elections)
    incidents = of_run([*earlier[0], *out.partition_windows], out.partition_windows,
                       elections_of([*earlier[1], *out.findings]), rollup.period_end_us)
    reassigning: list[Window] = [
        (run_id, w.topic, w.partition, w.start_seq, w.start_ts, w.end_seq, w.end_ts)
        for w in out.partition_windows if w.kind == "reassigning"]
    controllers = [c for c in out.controller_timeline
                   if resume is None or c.seq > resume.through]
    changes = kraft_changes(image.applied, reassigning, run_id, controllers)
    counts = run_counts(out, log.rows_read + ingest_noops, skipped, last_ts)
    facts = offset_facts(records)
    run = ClusterRun(out, write_rows(image.applied), incidents, changes, counts, rollup,
                     facts, skipped)
    image.applied = []
    run.state = ClusterState(
        fold, facts.seq_max if facts.seq_max is not None
        else -1 if resume is None else resume.through, last_ts,
        [*earlier[0], *(w for w in out.partition_windows if w.kind in INCIDENT_KINDS)],
        [*earlier[1], *(f for f in out.findings if f.kind == UNCLEAN)])
    return run


def _start(log: ClusterLog, profile: KraftProfile, default_min_isr: int,
           resume: ClusterState | None) -> tuple[KraftFold, list[MetadataRecord], int]:
    """The fold a run starts from, the records it folds, and how many it skips as folded
    by an earlier run."""
    if resume is None:
        fold = KraftFold(default_min_isr, profile)
        fold.image = RecordingImage(default_min_isr)
        return fold, log.records, 0
    # A snapshot's records are what the state already holds (it resumes from a later
    # offset than any snapshot it started from, or than the log's start).
    new = [r for r in log.records[log.from_snapshot:]
           if r.offset is not None and r.offset > resume.through]
    return resume.fold, new, len(log.records) - len(new)


def offline_rollup(cluster: str, out: KraftOutputs, last_ts: int,
                   start: int | None = None) -> Rollup:
    """`jobs.engine.offline_rollup` over the fold's offline windows: the period is the whole log,
    from its start (an incremental run: the previous run's latest record time) to its
    latest record time."""
    if last_ts < 0:
        return Rollup()
    rollups = {cluster: Rollup(last_ts, period_start_us=start)}
    windows = [OfflineWindow(cluster, w.topic, w.cause_broker, w.start_ts, w.end_ts)
               for w in out.partition_windows if w.kind == "offline"]
    rollup = rollups[cluster]
    starts = {} if start is None else {cluster: start}
    for attr, _, key, us in window_sums(windows, starts, rollups):
        getattr(rollup, attr)[key] = round(us / 1e6, 6)
    rollup.seconds = round(sum(rollup.by_topic.values()), 6)
    return rollup
