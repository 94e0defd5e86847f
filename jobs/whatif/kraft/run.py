"""The replay stage of a what-if on a KRaft log: the baseline and every variant folded on
the driver (`statemachine.kraft`: a metadata log is small), each variant's tables written
under its composite cluster into the staging directory, in the layout of the ZooKeeper
what-if's, so `jobs.whatif.output.publish` and `jobs.whatif.impact` read them unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from pyspark.sql import SparkSession

from jobs.engine.kraft.fold import (
    ClusterRun,
    offline_rollup,
    offset_facts,
    run_counts,
    skipped_counts,
)
from jobs.engine.kraft.metadata_source import ClusterLog
from jobs.engine.kraft.pipeline import write_tables
from jobs.engine.run_summary import summary_batches
from jobs.store.layout import CheckpointLayout
from jobs.store.tables import ensure_run_partitions, write_arrow
from jobs.whatif.kraft.plan import KraftVariant
from jobs.whatif.matching import EditCounts
from jobs.whatif.plan import composite
from schemas.whatif import BASELINE
from statemachine.incidents import elections_of, of_run
from statemachine.kraft.fold import KraftOutputs, fold
from statemachine.kraft.profiles import KraftProfile
from statemachine.kraft.variant import VariantFold, anchors_of

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


def fold_variants(clusters: dict[str, ClusterLog], variants: list[KraftVariant],
                  profile: KraftProfile, default_min_isr: int, noops: dict[str, int],
                  with_baseline: bool = True) -> dict[str, ClusterRun]:
    """Composite cluster -> its run, the baseline's first; fills each variant's counts."""
    runs: dict[str, ClusterRun] = {}
    for c, log in clusters.items():
        if with_baseline:
            runs[composite(c, BASELINE)] = cluster_run(
                log, fold(log.records, default_min_isr, profile), composite(c, BASELINE),
                noops.get(c, 0))
        anchored = anchors_of(log.records, default_min_isr, profile)
        for v in variants:
            variant = VariantFold(v.edits[c], v.settings[c], anchored, v.default_min_isr,
                                  profile)
            out = variant.run(log.records)
            n = variant.counts
            v.counts[c] = EditCounts(n.dropped, n.injected, n.edited, len(n.partitions))
            key = composite(c, v.name)
            runs[key] = cluster_run(log, out, key, noops.get(c, 0), n.dropped + n.edited)
    return runs


def replay_kraft_variants(spark: SparkSession, clusters: dict[str, ClusterLog],
                          variants: list[KraftVariant], profile: KraftProfile,
                          default_min_isr: int, noops: dict[str, int], run_id: str,
                          checkpoint: str, log: Callable[[str], None],
                          with_baseline: bool = True) -> str:
    """Fold and stage every variant; returns the staging directory."""
    started = datetime.now(UTC)
    runs = fold_variants(clusters, variants, profile, default_min_isr, noops, with_baseline)
    log(f"fold: {len(runs)} cluster variant(s) folded on the driver")
    staging = CheckpointLayout(checkpoint).tables
    write_tables(spark, runs, staging, run_id)
    summary = summary_batches({k: r.counts for k, r in runs.items()},
                              {k: r.rollup for k, r in runs.items()}, 1, run_id, 1, started,
                              datetime.now(UTC), {}, {k: r.facts for k, r in runs.items()})
    write_arrow(summary, staging, "run_summary", run_id)
    ensure_run_partitions(staging, run_id)
    return staging
