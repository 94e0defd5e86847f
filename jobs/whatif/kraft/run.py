"""The replay stage of a what-if on a KRaft log: the baseline and every variant folded on
the executors (`statemachine.kraft`). One task per cluster folds its log as it is (the
baseline, and the anchors every variant starts from); then the cluster's variants are
dealt into as many tasks as the session runs at once (`spark.default.parallelism`). Each
task reads its cluster's records itself (the `metadata_records` Parquet the driver
resolved the scenario on: no record is shipped from the driver) and writes its variants'
tables as its own files of the staging directory, under their composite clusters and in
the layout of the ZooKeeper what-if's, so `jobs.whatif.output.publish` and
`jobs.whatif.impact` read them unchanged. The driver collects a few counts per variant,
and the anchors (one entry per partition change a broker operation wrote).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from pyspark.sql import SparkSession

from jobs.engine.kraft.fold import (
    ClusterRun,
    offline_rollup,
    offset_facts,
    run_counts,
    skipped_counts,
)
from jobs.engine.kraft.metadata_source import ClusterLog, KraftInput, read_clusters
from jobs.engine.kraft.pipeline import write_tables
from jobs.engine.log_checks import SeqFacts
from jobs.engine.offline_rollup import Rollup
from jobs.engine.run_summary import summary_batches
from jobs.store.ledger import ClusterCounts
from jobs.store.tables import ensure_run_partitions, write_arrow
from jobs.whatif.kraft.plan import KraftVariant
from jobs.whatif.matching import EditCounts
from jobs.whatif.plan import composite
from schemas.whatif import BASELINE
from statemachine.incidents import elections_of, of_run
from statemachine.kraft.fold import KraftFold, KraftOutputs
from statemachine.kraft.profiles import KraftProfile
from statemachine.kraft.variant import VariantFold

DROPPED = "skipped:dropped_by_variant"  # run_summary: log records a variant did not fold


def cluster_run(log: ClusterLog, out: KraftOutputs, key: str, noops: int,
                dropped: int = 0) -> ClusterRun:
    """`jobs.engine.kraft.fold.fold_cluster`'s tables of one folded variant (no metadata
    writes and no changes digest: the what-if copies neither)."""
    skipped = skipped_counts(log, out, noops)
    if dropped:
        skipped[DROPPED] = dropped
    last_ts = max((r.ts for r in log.records if r.ts is not None), default=-1)
    rollup = offline_rollup(key, out, last_ts)
    incidents = of_run(out.partition_windows, out.partition_windows,
                       elections_of(out.findings), rollup.period_end_us)
    counts = run_counts(out, log.rows_read + noops, skipped, last_ts)
    return ClusterRun(out, [], incidents, [], counts, rollup, offset_facts(log.records),
                      skipped)


@dataclass(frozen=True)
class FoldSettings:
    """What every task of the run shares."""

    profile: KraftProfile
    default_min_isr: int
    noops: dict[str, int]  # per cluster, the NoOpRecords the ingest did not write
    staging: str
    run_id: str


@dataclass(frozen=True)
class FoldTask:
    """One executor task of one cluster: with no `anchors`, the log folded as it is (the
    baseline's tables when `baseline`, and the anchors the variants need); with them,
    some of the cluster's variants."""

    kraft: KraftInput
    cluster: str
    variants: tuple[KraftVariant, ...]
    baseline: bool
    settings: FoldSettings
    part: str  # its files' name in the staged partitions
    anchors: dict[int, int] | None = None


@dataclass(frozen=True)
class Folded:
    """What the driver needs of one folded variant: its run_summary's inputs and, for a
    variant, its edit counts."""

    key: str  # the composite cluster
    counts: ClusterCounts
    rollup: Rollup
    facts: SeqFacts
    edits: EditCounts | None  # None: the baseline


@dataclass(frozen=True)
class TaskResult:
    cluster: str
    folded: list[Folded]
    anchors: dict[int, int] | None  # a baseline task's: partition change -> its operation


def fold_task(task: FoldTask) -> TaskResult:
    """Runs on an executor: fold the task's log or variants, write their tables, return
    the counts (and a baseline task's anchors)."""
    s, c = task.settings, task.cluster
    log = read_clusters(task.kraft)[c]
    noops = s.noops.get(c, 0)
    runs: dict[str, ClusterRun] = {}
    edits: dict[str, EditCounts] = {}
    if task.anchors is None:
        base = KraftFold(s.default_min_isr, s.profile)
        base.feed(log.records)
        if task.baseline:
            key = composite(c, BASELINE)
            runs[key] = cluster_run(log, base.finish(), key, noops)
    for v in task.variants:
        assert task.anchors is not None
        variant = VariantFold(v.edits[c], v.settings[c], task.anchors, v.default_min_isr,
                              s.profile)
        out = variant.run(log.records)
        n = variant.counts
        key = composite(c, v.name)
        edits[key] = EditCounts(n.dropped, n.injected, n.edited, len(n.partitions))
        runs[key] = cluster_run(log, out, key, noops, n.dropped + n.edited - n.in_place)
    write_tables(runs, s.staging, s.run_id, task.part)
    folded = [Folded(k, r.counts, r.rollup, r.facts, edits.get(k)) for k, r in runs.items()]
    return TaskResult(c, folded, base.anchored if task.anchors is None else None)


def baseline_tasks(kraft: KraftInput, clusters: dict[str, ClusterLog],
                   settings: FoldSettings, with_baseline: bool) -> list[FoldTask]:
    return [FoldTask(kraft, c, (), with_baseline, settings, f"b{i:05d}")
            for i, c in enumerate(sorted(clusters))]


def variant_tasks(kraft: KraftInput, anchors: dict[str, dict[int, int]],
                  variants: list[KraftVariant], slots: int,
                  settings: FoldSettings) -> list[FoldTask]:
    """Per cluster, its variants dealt round-robin into at most `slots` tasks."""
    tasks: list[FoldTask] = []
    n = min(slots, len(variants))
    for c in sorted(anchors):
        for i in range(n):
            tasks.append(FoldTask(kraft, c, tuple(variants[i::n]), False, settings,
                                  f"v{len(tasks):05d}", anchors[c]))
    return tasks


def run_tasks(spark: SparkSession, tasks: list[FoldTask]) -> list[TaskResult]:
    if not tasks:
        return []
    return spark.sparkContext.parallelize(tasks, len(tasks)).map(fold_task).collect()


def replay_kraft_variants(spark: SparkSession, kraft: KraftInput,
                          clusters: dict[str, ClusterLog], variants: list[KraftVariant],
                          settings: FoldSettings, log: Callable[[str], None],
                          with_baseline: bool = True) -> str:
    """Fold and stage every variant on the executors, in two rounds: each cluster's log
    as it is (its baseline and the anchors every variant's fold starts from, one fold),
    then the variants; returns the staging directory. Fills each variant's edit counts."""
    started = datetime.now(UTC)
    first = run_tasks(spark, baseline_tasks(kraft, clusters, settings, with_baseline))
    anchors = {r.cluster: r.anchors or {} for r in first}
    second = variant_tasks(kraft, anchors, variants, spark.sparkContext.defaultParallelism,
                           settings)
    folded = {f.key: f for r in first + run_tasks(spark, second) for f in r.folded}
    log(f"fold: {len(folded)} cluster variant(s) folded in {len(first) + len(second)} "
        "executor task(s)")
    for v in variants:
        for c in clusters:
            edits = folded[composite(c, v.name)].edits
            assert edits is not None
            v.counts[c] = edits
    order = [composite(c, name) for c in clusters
             for name in ([BASELINE] if with_baseline else []) + [v.name for v in variants]]
    staging = settings.staging
    summary = summary_batches({k: folded[k].counts for k in order},
                              {k: folded[k].rollup for k in order}, 1, settings.run_id, 1,
                              started, datetime.now(UTC), {},
                              {k: folded[k].facts for k in order})
    write_arrow(summary, staging, "run_summary", settings.run_id)
    ensure_run_partitions(staging, settings.run_id)
    return staging
