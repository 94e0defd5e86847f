"""One executor task of a KRaft replay by topic bucket (`jobs.engine.kraft.executors`): it
reads its cluster's cluster-scope records and its bucket's topic records itself (pyarrow,
`topic_buckets`), folds them in log order (`statemachine.kraft.fold.KraftFold`), writes
the rows of its topics (`partition_states`, `partition_windows`, the findings of its
records and partitions, `metadata_writes`) as its own files of the run's partitions, and
returns what the driver needs of them: counts, the incident windows and unclean
elections, its changes digest, its offsets and latest record time.

A bucket's fold applies the cluster-scope records too (its partitions' leaders and ISRs
move with the brokers); their own rows (the timelines, their findings, their writes that
touch no partition) are the driver's, which folds them once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from jobs.engine.change_digest import Change, Window
from jobs.engine.codec import rows_to_record_batch
from jobs.engine.kraft.changes import kraft_changes
from jobs.engine.kraft.fold import INCIDENT_KINDS
from jobs.engine.kraft.metadata_source import KraftInput
from jobs.engine.kraft.run_tables import write_metadata_rows
from jobs.engine.kraft.topic_buckets import Plan, read_records, topic_scoped
from jobs.engine.kraft.writes import MetadataWriteRow, RecordingImage, write_rows
from jobs.store.kraft_checkpoint import Checkpoint
from jobs.store.tables import write_arrow
from statemachine.kraft.fold import UNCLEAN, KraftFold, KraftOutputs
from statemachine.kraft.profiles import KraftProfile
from statemachine.kraft.records import MetadataRecord

TOPIC_TABLES = ("partition_states", "partition_windows", "findings")


@dataclass(frozen=True)
class BucketTask:
    kraft: KraftInput
    cluster: str
    bucket: int
    plan: Plan  # the cluster's (its log holds no records: small)
    profile: KraftProfile
    default_min_isr: int
    out: str
    run_id: str
    part: str  # its files' name in the run's partitions
    # An incremental run (`--checkpoint`): where the fold is saved; the bucket's fold of
    # the last run (None: from the log's start), the cluster's highest offset it folded.
    checkpoint: str | None = None
    resume: str | None = None
    through: int | None = None


@dataclass
class BucketResult:
    """Small, and plain (the core's compiled rows travel as tuples)."""

    cluster: str
    bucket: int
    counts: dict[str, Any]  # the fold's `KraftCounts`, cluster-scope records included
    rows_written: dict[str, int]
    findings_by_kind: Counter[str]
    by_state: Counter[str]
    offline: list[tuple[str, int]]  # its first offline partitions, in partition order
    windows: list[tuple[Any, ...]]  # `PartitionWindowRow`s of the incident kinds
    elections: list[tuple[Any, ...]]  # its unclean election `FindingRow`s
    changes: list[Change]
    offsets: tuple[int | None, int | None]  # of its own records folded
    last_ts: int  # of its own records folded, -1: none
    # Cluster-scope records that wrote its partitions (a `ClearElrRecord` of every topic):
    # their `metadata_writes` rows are the buckets'.
    shared_writes: set[int] = field(default_factory=set)
    before: int = 0  # its own records an earlier run of the checkpoint folded
    fold_file: str | None = None  # its fold, saved in the checkpoint


def _start(task: BucketTask) -> tuple[KraftFold, list[MetadataRecord], int]:
    """The fold to feed, the records to feed it, and the own records skipped as folded
    before (`jobs.engine.kraft.fold` does the same for a whole cluster)."""
    log = read_records(task.kraft, task.plan.bucket_filter(task.cluster, task.bucket),
                       task.plan.snapshots)
    if task.resume is None or task.checkpoint is None or task.through is None:
        fold = KraftFold(task.default_min_isr, task.profile)
        fold.image = RecordingImage(task.default_min_isr)
        return fold, log.records, 0
    fold = Checkpoint(task.checkpoint).load_fold(task.resume)
    through = task.through
    new = [r for r in log.records[log.from_snapshot:]
           if r.offset is not None and r.offset > through]
    kept = {id(r) for r in new}
    return fold, new, sum(1 for r in log.records if id(r) not in kept and topic_scoped(r))


def fold_bucket(task: BucketTask) -> BucketResult:
    """Runs on an executor: read, fold, write, return (module docstring)."""
    fold, records, before = _start(task)
    image = fold.image
    assert isinstance(image, RecordingImage)
    fold.feed(records)
    out = fold.finish()
    fold.out = KraftOutputs()  # the saved fold keeps no rows: they are this run's
    mine = [r for r in records if topic_scoped(r)]
    own = {r.offset for r in mine}
    findings = [f for f in out.findings if f.topic is not None or f.seq in own]
    applied = [a for a in image.applied if a.record.offset in own]
    shared = [a for a in image.applied if a.parts and a.record.offset not in own]
    writes = write_rows([a for a in image.applied if a.record.offset in own or a.parts])
    reassigning: list[Window] = [
        (task.run_id, w.topic, w.partition, w.start_seq, w.start_ts, w.end_seq, w.end_ts)
        for w in out.partition_windows if w.kind == "reassigning"]
    written = _write(task, out, findings, writes)
    offsets = [r.offset for r in mine if r.offset is not None]
    offline = [(s.topic, s.partition) for s in out.partition_states
               if s.state == "OfflinePartition"]
    counts = asdict(_plain(out))
    image.applied = []
    saved = None if task.checkpoint is None else Checkpoint(task.checkpoint).save_fold(
        fold, task.run_id, task.part)
    return BucketResult(
        task.cluster, task.bucket, counts, written, Counter(f.kind for f in findings),
        Counter(s.state for s in out.partition_states), offline[:20],
        [tuple(w) for w in out.partition_windows if w.kind in INCIDENT_KINDS],
        [tuple(f) for f in findings if f.kind == UNCLEAN],
        kraft_changes(applied, reassigning, task.run_id, []),
        (min(offsets, default=None), max(offsets, default=None)),
        max((r.ts for r in mine if r.ts is not None), default=-1),
        {a.record.offset for a in shared if a.record.offset is not None}, before, saved)


@dataclass
class _Counts:
    applied: int
    aborted: int
    open_transaction: int
    noops: int
    unknown: int
    control: int
    rejected: int
    not_modelled: dict[str, int]


def _plain(out: KraftOutputs) -> _Counts:
    """The fold's counts as a plain dataclass (the compiled one does not pickle)."""
    c = out.counts
    return _Counts(c.applied, c.aborted, c.open_transaction, c.noops, c.unknown, c.control,
                   c.rejected, dict(c.not_modelled))


def _write(task: BucketTask, out: KraftOutputs, findings: list[Any],
           writes: list[MetadataWriteRow]) -> dict[str, int]:
    rows: dict[str, list[Any]] = {"partition_states": out.partition_states,
            "partition_windows": out.partition_windows, "findings": findings}
    written = {}
    for table in TOPIC_TABLES:
        batch = rows_to_record_batch(table, task.cluster, task.run_id, rows[table])
        written[table] = write_arrow([batch], task.out, table, task.run_id, task.part)
    written["metadata_writes"] = write_metadata_rows({task.cluster: writes}, task.out,
                                                     task.run_id, task.part)
    return written
