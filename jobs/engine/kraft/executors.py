"""A KRaft replay folded on the executors, by (cluster, topic bucket), as the ZooKeeper
replay groups its events (`jobs.replay --kraft-fold executors`, the default;
docs/replay-job.md, "KRaft logs").

The driver reads two narrow columns sets of the `metadata_records` Parquet (every row's
cluster, source and offset; the `TopicRecord`s' ids and names), puts each topic in a
bucket (`topic_buckets`), and launches one Spark task per (cluster, bucket)
(`bucket_fold.fold_bucket`: no record goes through the JVM, each task reads its own with
pyarrow and writes its own files). It then reads the cluster-scope records alone and
folds them once, for `broker_timeline`, `controller_timeline`, their findings, their
metadata writes and changes, and builds from the tasks' small results what needs every
topic at once: `incidents` (an operation on a broker is one incident over every topic),
the offline roll-up, the `changes` digest, the offsets' continuity and `run_summary`.
The tables equal, row for row, those of the whole cluster folded on the driver
(`pipeline.replay_kraft`): a bucket's fold applies the cluster-scope records with its
own, in log order, so its partitions see every broker and config change they would in
the whole fold.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from pyspark.sql import SparkSession

from jobs.engine.change_digest import Change
from jobs.engine.kraft.bucket_fold import BucketResult, BucketTask, fold_bucket
from jobs.engine.kraft.changes import KRAFT_CHANGES, _order, kraft_changes
from jobs.engine.kraft.fold import (
    BEFORE_CHECKPOINT,
    SKIPPED,
    ClusterRun,
    offline_rollup,
    skipped_counts,
)
from jobs.engine.kraft.metadata_source import ClusterLog, KraftInput, ingest_noops
from jobs.engine.kraft.run_tables import FOLD_TABLES, check_offsets, summarise, write_tables
from jobs.engine.kraft.topic_buckets import Plan, plan_clusters, read_cluster_scope
from jobs.engine.kraft.writes import RecordingImage, write_rows
from jobs.engine.log_checks import SeqFacts
from jobs.engine.requested import FIRST, Listed
from jobs.store.filesystem import delete_path
from jobs.store.kraft_checkpoint import ClusterState
from jobs.store.layout import partition_path
from jobs.store.ledger import ClusterCounts
from statemachine.incidents import elections_of, of_run
from statemachine.kraft.fold import KraftCounts, KraftFold, KraftOutputs
from statemachine.kraft.profiles import KraftProfile
from statemachine.kraft.records import MetadataRecord
from statemachine.rows import FindingRow, PartitionWindowRow

DRIVER_PART = "driver"  # the driver's file of a partition the tasks write too
Runner = Callable[[list[BucketTask]], list[BucketResult]]


def on_spark(spark: SparkSession) -> Runner:
    """One Spark task per bucket task; the driver collects their results."""
    def run(tasks: list[BucketTask]) -> list[BucketResult]:
        if not tasks:
            return []
        rdd = spark.sparkContext.parallelize(tasks, len(tasks))
        return list(rdd.map(fold_bucket).collect())
    return run


def bucket_count(spark: SparkSession, buckets: int | None) -> int:
    """`--buckets`, else as many as the session runs at once."""
    return max(1, buckets or spark.sparkContext.defaultParallelism)


def bucket_tasks(kraft: KraftInput, plans: dict[str, Plan], settings: Settings,
                 resume: dict[str, ClusterState]) -> list[BucketTask]:
    """One task per (cluster, bucket): the buckets with a topic, or with a checkpoint
    every bucket (each keeps its fold, whatever topics later nights bring)."""
    tasks: list[BucketTask] = []
    for cluster, plan in plans.items():
        light = replace(plan, log=ClusterLog())  # the offsets stay on the driver
        kept = resume.get(cluster)
        folds = {} if kept is None else kept.bucket_folds or {}
        chosen = range(settings.buckets) if settings.checkpoint else plan.buckets()
        for b in chosen:
            tasks.append(BucketTask(
                kraft, cluster, b, light, settings.profile, settings.default_min_isr,
                settings.out, settings.run_id, f"k{len(tasks):05d}", settings.checkpoint,
                folds.get(b), None if kept is None else kept.through))
    return tasks


@dataclass(frozen=True)
class Settings:
    profile: KraftProfile
    default_min_isr: int
    out: str
    run_id: str
    buckets: int
    checkpoint: str | None = None  # the folds are saved there (an incremental run)


def replay_kraft_on_executors(spark: SparkSession, kraft: KraftInput, out: str,
                              run_id: str, profile: KraftProfile, default_min_isr: int,
                              buckets: int, run: Runner | None = None,
                              checkpoint: str | None = None,
                              resume: dict[str, ClusterState] | None = None,
                              ) -> dict[str, ClusterRun]:
    """The run's tables, folded by topic bucket (module docstring); with `checkpoint`,
    each fold saved there, from the one `resume` names. `run`: how the tasks run
    (default: Spark tasks)."""
    started, t0 = datetime.now(UTC), time.perf_counter()
    resume = resume or {}
    settings = Settings(profile, default_min_isr, out, run_id, buckets, checkpoint)
    plans = plan_clusters(kraft, buckets, keep_offsets=bool(resume))
    # Every table written in parts: none of an earlier attempt's files may stay.
    for table in (*FOLD_TABLES, "incidents", "changes", "metadata_writes"):
        delete_path(partition_path(out, table, run_id))
    results = (run or on_spark(spark))(bucket_tasks(kraft, plans, settings, resume))
    noops = ingest_noops(kraft)
    runs = {c: cluster_run(c, plan.log, read_cluster_scope(kraft, c, plan),
                           [r for r in results if r.cluster == c], settings,
                           noops.get(c, 0), resume.get(c))
            for c, plan in plans.items()}
    check_offsets(kraft, runs, {c: p.log for c, p in plans.items()}, resume)
    folded = time.perf_counter()
    write_tables(runs, out, run_id, DRIVER_PART)
    for r in results:
        runs[r.cluster].counts.rows_written.update(r.rows_written)
    summarise(runs, out, run_id, started, t0, folded,
              {c: p.log.snapshot for c, p in plans.items()})
    return runs


def _cluster_scope(scope: ClusterLog, settings: Settings, resume: ClusterState | None
                   ) -> tuple[KraftFold, list[MetadataRecord], int]:
    """The cluster scope's fold, its records to fold, and those skipped as folded by an
    earlier run (`fold.fold_cluster`'s rule)."""
    if resume is None:
        fold = KraftFold(settings.default_min_isr, settings.profile)
        fold.image = RecordingImage(settings.default_min_isr)
        return fold, scope.records, 0
    new = [r for r in scope.records[scope.from_snapshot:]
           if r.offset is not None and r.offset > resume.through]
    return resume.fold, new, len(scope.records) - len(new)


def cluster_run(cluster: str, log: ClusterLog, scope: ClusterLog,
                results: list[BucketResult], settings: Settings, ingest_noops: int,
                resume: ClusterState | None = None) -> ClusterRun:
    """The cluster-scope records (`scope`) folded once, with the buckets' results: the
    cluster's `ClusterRun` as `fold.fold_cluster` makes it, but for the topics' rows (the
    tasks wrote them). `log`: every row of the cluster, as counted."""
    fold, shared, before = _cluster_scope(scope, settings, resume)
    image = fold.image
    assert isinstance(image, RecordingImage)
    fold.feed(shared)
    timeline = fold.finish()
    fold.out = KraftOutputs()  # the state keeps no rows: they are this run's
    records, image.applied = image.applied, []  # the cluster-scope records applied
    windows = [PartitionWindowRow(*w) for r in results for w in r.windows]
    elections = [FindingRow(*f) for r in results for f in r.elections]
    merged = KraftOutputs(findings=list(timeline.findings),
                          broker_timeline=timeline.broker_timeline,
                          controller_timeline=timeline.controller_timeline,
                          counts=_summed(timeline.counts, results))
    skipped = skipped_counts(log, merged, ingest_noops)
    before += sum(r.before for r in results)
    if before:
        skipped[f"{SKIPPED}{BEFORE_CHECKPOINT}"] = before
    start = None if resume is None or resume.last_ts < 0 else resume.last_ts
    stamps = [r.ts for r in shared if r.ts is not None]
    last_ts = max([*stamps, *(r.last_ts for r in results if r.last_ts >= 0)],
                  default=-1 if start is None else start)
    rollup = offline_rollup(cluster, KraftOutputs(partition_windows=windows), last_ts, start)
    earlier = ([], []) if resume is None else (resume.windows, resume.elections)
    incidents = of_run([*earlier[0], *windows], windows,
                       elections_of([*earlier[1], *elections]), rollup.period_end_us)
    controllers = [c for c in timeline.controller_timeline
                   if resume is None or c.seq > resume.through]
    changes = merged_changes([kraft_changes(records, [], settings.run_id, controllers),
                              *(r.changes for r in results)])
    taken = set().union(*(r.shared_writes for r in results))
    writes = write_rows([a for a in records if a.record.offset not in taken])
    by_state: Counter[str] = sum((r.by_state for r in results), Counter())
    offline = sorted(p for r in results for p in r.offline)[:20]
    counts = ClusterCounts(
        rows_read=log.rows_read + ingest_noops, rows_applied=merged.counts.applied,
        findings_by_kind=Counter(f.kind for f in timeline.findings)
        + sum((r.findings_by_kind for r in results), Counter()) + skipped,
        buckets={0: (dict(by_state), offline)}, last_ts=last_ts)
    offsets = [*(r.offsets for r in results), *((s.offset, s.offset) for s in shared)]
    facts = SeqFacts(seq_min=min((a for a, _ in offsets if a is not None), default=None),
                     seq_max=max((b for _, b in offsets if b is not None), default=None))
    run = ClusterRun(merged, writes, incidents, changes, counts, rollup, facts, skipped)
    if settings.checkpoint is not None:
        run.state = ClusterState(
            fold, facts.seq_max if facts.seq_max is not None
            else -1 if resume is None else resume.through, last_ts,
            [*earlier[0], *windows], [*earlier[1], *elections],
            bucket_folds={r.bucket: r.fold_file for r in results if r.fold_file})
    return run


def _summed(timeline: KraftCounts, results: Iterable[BucketResult]) -> KraftCounts:
    """The whole fold's counts: the cluster scope's once, and each bucket's own records
    (a bucket's counts less the cluster scope's)."""
    total = KraftCounts()
    names = ("applied", "aborted", "open_transaction", "noops", "unknown", "control",
             "rejected")
    for name in names:
        setattr(total, name, getattr(timeline, name))
    total.not_modelled.update(timeline.not_modelled)
    for r in results:
        for name in names:
            setattr(total, name, getattr(total, name) + r.counts[name]
                    - getattr(timeline, name))
        total.not_modelled.update(r.counts["not_modelled"])
        total.not_modelled.subtract(timeline.not_modelled)
    total.not_modelled = +total.not_modelled
    return total


def merged_changes(digests: Iterable[list[Change]]) -> list[Change]:
    """Digests of disjoint records as one: counts summed, the first rows of all."""
    counts: Counter[str] = Counter()
    rows: dict[str, list[Listed]] = {}
    for digest in digests:
        for c in digest:
            counts[c.change] += c.count
            rows.setdefault(c.change, []).extend(c.first)
    return [Change(name, counts[name],
                   tuple(sorted(rows[name], key=_order)[:FIRST]))
            for name in KRAFT_CHANGES if counts[name]]
