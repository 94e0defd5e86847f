"""The replay stage of a what-if: the baseline and every variant in ONE streaming query.

The replay job's own stages do the work (`jobs.replay`: keying, packing, the per-group
fold, the sink); this module only feeds them: the variants' timelines and wake rows from
the driver, the event stream edited per variant (`jobs.whatif.edits`), the injected events
as a second file source, one `ReplayConfig` per composite cluster. The tables go to a
staging directory of the (temporary) checkpoint, which `jobs.whatif.output` publishes:

* variants sharing their work (the default): the workers write each variant's rows in the
  what-if's own columns, only those it does not share with the reference, and the
  `whatif_sharing` rows (`jobs.whatif.shared_group`); the driver adds the timelines and each
  variant's incidents and run summary (`jobs.whatif.variant_summary`). Publishing is a
  rename;
* `--no-share`: every variant's rows whole, keyed by composite cluster, as a replay writes
  them; publishing splits the key into `cluster` and `variant`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from jobs.engine.batch_sink import BatchSink
from jobs.engine.codec import rows_to_record_batch
from jobs.engine.event_log import read_events, stream_events
from jobs.engine.group_fn import ReplayFn, make_replay_fn
from jobs.engine.incidents_table import write_incidents
from jobs.engine.keying import key_events, key_wake_rows
from jobs.engine.offline_rollup import offline_rollup
from jobs.engine.plausibility import Plausibility
from jobs.engine.query import start_replay_query
from jobs.engine.run_summary import summary_batches
from jobs.engine.timeline import (
    LogScan,
    ScanContext,
    build_timelines,
    horizon,
    scan_log,
    timeline_rows,
)
from jobs.store.layout import CheckpointLayout
from jobs.store.ledger import BatchCounts, RunLedger
from jobs.store.tables import ensure_run_partitions, write_arrow
from jobs.whatif import variant_summary
from jobs.whatif.edits import (
    drops_frame,
    edit_events,
    failovers_frame,
    variant_configs,
    variant_scan,
    variants_frame,
    write_injected,
)
from jobs.whatif.plan import VariantPlan
from jobs.whatif.shared_group import make_shared_replay_fn
from jobs.whatif.sharing import VariantInput, timeline_difference
from schemas.events import EVENT_SCHEMA
from schemas.state import WAKE_SCHEMA
from schemas.tables import TIMELINE_TABLES
from statemachine.cluster import ClusterTimeline


@dataclass(frozen=True)
class Staged:
    """The tables a what-if's query staged, its counts per composite cluster, and whether
    they are in the what-if's own columns (`variant_form`) or keyed by composite cluster."""

    path: str
    counts: BatchCounts
    variant_form: bool


def write_timelines(spark: SparkSession, timelines: dict[str, ClusterTimeline], staging: str,
                    run_id: str) -> None:
    batches: dict[str, list[pa.RecordBatch]] = {table: [] for table in TIMELINE_TABLES}
    for cluster, timeline in sorted(timelines.items()):
        for table, rows in timeline_rows(timeline).items():
            batches[table].append(rows_to_record_batch(table, cluster, run_id, rows))
    for table in TIMELINE_TABLES:
        write_arrow(batches[table], staging, table, run_id)


def write_wake_rows(spark: SparkSession, scan: LogScan, run_id: str, path: str) -> None:
    """One wake row per (composite cluster, bucket), as the replay writes per cluster."""
    rows = [(c, b, run_id, horizon(scan, c)) for c, bs in scan.buckets.items() for b in bs]
    spark.createDataFrame(rows, WAKE_SCHEMA).coalesce(1).write.mode("overwrite").parquet(path)


def edited_stream(spark: SparkSession, events_dir: str, max_file_age: str,
                  plans: list[VariantPlan], clusters: list[str], checkpoint: str) -> DataFrame:
    """Every variant's event rows: the log's, edited, plus the injected ones."""
    variants = variants_frame(spark, plans, clusters)
    rows = edit_events(stream_events(spark, events_dir, max_file_age), variants,
                       drops_frame(spark, plans), failovers_frame(spark, plans))
    injected = CheckpointLayout(checkpoint).injected
    if write_injected(spark, plans, injected):
        rows = rows.unionByName(spark.readStream.schema(EVENT_SCHEMA).parquet(injected))
    return rows


def variant_inputs(plans: list[VariantPlan], clusters: list[str], variants: LogScan,
                   timelines: dict[str, ClusterTimeline]) -> dict[str, list[VariantInput]]:
    """cluster -> its variants as the shared group function folds them, the first plan
    (the baseline, when the run replays it) the reference."""
    inputs: dict[str, list[VariantInput]] = {}
    for cluster in clusters:
        reference = timelines[plans[0].composite(cluster)]
        inputs[cluster] = [VariantInput(
            composite=p.composite(cluster), cluster=cluster, config=p.config_for(cluster),
            timeline=timelines[p.composite(cluster)],
            horizon=horizon(variants, p.composite(cluster)), drops=p.drops,
            points=tuple(p.points.get(cluster, [])), failovers=p.failovers.get(cluster, {}),
            injected=tuple(p.injected.get(cluster, [])),
            timeline_differs=timeline_difference(reference, timelines[p.composite(cluster)]),
        ) for p in plans]
    return inputs


def shared_stream(spark: SparkSession, events_dir: str, max_file_age: str, scan: LogScan,
                  plans: list[VariantPlan], timelines: dict[str, ClusterTimeline],
                  variants: LogScan, buckets: int, context: ScanContext, run_id: str,
                  checkpoint: str) -> tuple[DataFrame, ReplayFn]:
    """The log's rows once, keyed as a plain replay keys them (every variant of a cluster
    folds in the cluster's groups), and the function that folds them per variant."""
    rows = key_events(stream_events(spark, events_dir, max_file_age), buckets,
                      context.judged(scan.facts))
    write_wake_rows(spark, scan, run_id, CheckpointLayout(checkpoint).wake)
    wake = spark.readStream.schema(WAKE_SCHEMA).parquet(CheckpointLayout(checkpoint).wake)
    inputs = variant_inputs(plans, sorted(scan.buckets), variants, timelines)
    return rows.unionByName(key_wake_rows(wake)), make_shared_replay_fn(inputs, buckets)


def separate_stream(spark: SparkSession, events_dir: str, max_file_age: str, scan: LogScan,
                    plans: list[VariantPlan], timelines: dict[str, ClusterTimeline],
                    variants: LogScan, buckets: int, context: ScanContext, run_id: str,
                    checkpoint: str) -> tuple[DataFrame, ReplayFn]:
    """Every variant's rows under its composite cluster, each replayed on its own (what
    `--no-share` runs: the check of the shared fold)."""
    clusters = sorted(scan.buckets)
    rows = key_events(edited_stream(spark, events_dir, max_file_age, plans, clusters,
                                    checkpoint), buckets, variant_rules(context, scan, plans))
    if timelines:
        write_wake_rows(spark, variants, run_id, CheckpointLayout(checkpoint).wake)
        wake = spark.readStream.schema(WAKE_SCHEMA).parquet(CheckpointLayout(checkpoint).wake)
        rows = rows.unionByName(key_wake_rows(wake))
    return rows, make_replay_fn(timelines, plans[0].config,
                                configs=variant_configs(plans, clusters))


def variant_rules(context: ScanContext, scan: LogScan,
                  plans: list[VariantPlan]) -> Plausibility | None:
    """The replay's rules for rows under composite clusters: the log's conflicting seqs are
    found per real cluster, so each is named again by every variant's (composite, renumbered
    seq), as the edited rows carry it."""
    judged = context.judged(scan.facts)
    if judged is None:
        return None
    return replace(judged, conflicts=tuple(
        (p.composite(cluster), p.renumber(cluster, seq))
        for p in plans for cluster, seq in judged.conflicts))


def replay_variants(spark: SparkSession, events_dir: str, run_id: str, buckets: int,
                    max_file_age: str, plans: list[VariantPlan], checkpoint: str,
                    log: Callable[[str], None], rules: Plausibility | None = None,
                    share: bool = True) -> Staged:
    """Replay every variant into the staging directory. The log's rows are judged by the
    replay's plausibility `rules`, so the baseline is the replay's. With `share`, the
    variants of a cluster fold in its groups, sharing what they have in common
    (`jobs.whatif.sharing`), and store only what differs; without, each is a cluster of
    its own."""
    started_at = datetime.now(UTC)
    context = ScanContext(rules)
    scan = scan_log(read_events(spark, events_dir), buckets, context)
    variants = variant_scan(scan, plans, buckets)
    timelines = build_timelines(variants, plans[0].config.profile if plans else None)
    staging = CheckpointLayout(checkpoint).tables
    share = share and bool(plans)
    if share:
        variant_summary.write_timelines(timelines, staging, run_id)
    else:
        write_timelines(spark, timelines, staging, run_id)
    stream = shared_stream if share else separate_stream
    rows, replay_fn = stream(spark, events_dir, max_file_age, scan, plans, timelines,
                             variants, buckets, context, run_id, checkpoint)
    ledger = RunLedger(spark, checkpoint, run_id).load()
    sink = BatchSink(staging, run_id, buckets, ledger, log)
    start_replay_query(rows, replay_fn, sink, CheckpointLayout(checkpoint).query,
                       f"whatif-{run_id}").awaitTermination()
    counts = ledger.totals()
    if share:
        summarise_shared(staging, run_id, counts, len(ledger.records), buckets, started_at)
        return Staged(staging, counts, True)
    ensure_run_partitions(staging, run_id)
    # Each variant is a whole log replayed afresh: its period is the whole log.
    rollups = offline_rollup(staging, run_id, {},
                             {c: v.last_ts for c, v in counts.items()})
    write_incidents(staging, run_id, (), {c: r.period_end_us for c, r in rollups.items()},
                    per_cluster=True)
    summary = summary_batches(counts, rollups, len(ledger.records), run_id, buckets,
                              started_at, datetime.now(UTC), {})
    write_arrow(summary, staging, "run_summary", run_id)
    return Staged(staging, counts, False)


def summarise_shared(staging: str, run_id: str, counts: BatchCounts, batches: int,
                     buckets: int, started_at: datetime) -> None:
    """The driver's tables of a shared run, each variant's read whole: its rows_written
    count the rows it shares too."""
    variant_summary.add_shared_rows(counts, variant_summary.publish_sharing(staging, run_id))
    variant_summary.ensure_partitions(staging, run_id)
    rollups = variant_summary.offline_rollups(staging, run_id, counts)
    variant_summary.write_incidents(staging, run_id,
                                    {c: r.period_end_us for c, r in rollups.items()}, counts)
    variant_summary.write_summary(staging, run_id, counts, rollups, batches, buckets,
                                  started_at, datetime.now(UTC))
