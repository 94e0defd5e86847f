"""A KRaft `__cluster_metadata` log replayed: the `metadata_records` table written by
`jobs.ingest`, folded on the driver by `statemachine.kraft` (no streaming query: a metadata
log is a few hundred thousand records a day) into the tables of the ZooKeeper-mode replay,
in its layout and schemas, plus `metadata_writes`.

With a checkpoint a run folds only the records after those the checkpoint's last run
folded, into its saved fold (`jobs.store.kraft_checkpoint`); a rebuild folds the whole log
into a new state. A checkpoint folded by topic bucket (`executors`) goes on that way, one
of a fold per cluster on the driver.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import SparkSession

from jobs.common.exitcodes import BadInput
from jobs.engine.kraft.executors import bucket_count, replay_kraft_on_executors
from jobs.engine.kraft.fold import ClusterRun, fold_cluster
from jobs.engine.kraft.metadata_source import (
    KraftInput,
    ingest_noops,
    read_clusters,
)

# FOLD_TABLES, print_kraft_summary and write_tables are imported from here too.
from jobs.engine.kraft.run_tables import (
    FOLD_TABLES as FOLD_TABLES,
)
from jobs.engine.kraft.run_tables import (
    check_offsets,
    summarise,
)
from jobs.engine.kraft.run_tables import (
    print_kraft_summary as print_kraft_summary,
)
from jobs.engine.kraft.run_tables import (
    write_tables as write_tables,
)
from jobs.store.kraft_checkpoint import Checkpoint, ClusterState, KraftState
from statemachine.kraft.profiles import KraftProfile, kraft_profile_for

log = logging.getLogger(__name__)


def profile_of(version: str) -> KraftProfile:
    """The KRaft profile of `--kafka-version`; ValueError (one line) before 3.3."""
    try:
        return kraft_profile_for(version)
    except ValueError as exc:
        if "3.3 and later" in str(exc):
            raise ValueError(f"--kafka-version {version} is a ZooKeeper-only release line "
                             "and the events are a KRaft metadata log: KRaft profiles cover "
                             "3.3 and later") from None
        raise


def incremental(spark: SparkSession, kraft: KraftInput, args: Any, run_id: str,
                profile: KraftProfile, min_isr: int) -> int | None:
    """The run on the checkpoint's state; 0 when it does not run (a run id the checkpoint
    holds: nothing written); BadInput for a checkpoint of another profile."""
    store = Checkpoint(args.checkpoint)
    state = None if args.rebuild else store.load()
    if state is not None and run_id in state.runs:
        log.info(f"run {run_id} is in checkpoint {args.checkpoint} already: nothing to do")
        return 0
    if state is not None and state.profile != profile.name:
        raise BadInput(f"--checkpoint {args.checkpoint} was built under KRaft profile "
                       f"{state.profile}; this run's is {profile.name} (--kafka-version): "
                       "replay into a new checkpoint, or --rebuild")
    buckets = state_buckets(spark, state, args)
    if buckets:
        runs = replay_kraft_on_executors(spark, kraft, args.out, run_id, profile, min_isr,
                                         buckets, checkpoint=args.checkpoint,
                                         resume=None if state is None else state.clusters)
    else:
        runs = replay_kraft(spark, kraft, args.out, run_id, profile, min_isr,
                            {} if state is None else state.clusters)
    saved = KraftState(profile.name, {c: r.state for c, r in runs.items()
                                      if r.state is not None},
                       [] if state is None else state.runs, buckets=buckets)
    for cluster, kept in ({} if state is None else state.clusters).items():
        saved.clusters.setdefault(cluster, kept)  # a cluster this run did not read
    store.save(saved, run_id)
    return None


def state_buckets(spark: SparkSession, state: KraftState | None, args: Any) -> int:
    """The topic buckets of a checkpoint's folds: those it was built with (0: one fold per
    cluster, on the driver), else those of `--kraft-fold executors`."""
    if state is not None:
        if state.buckets == 0 and args.kraft_fold == "executors":
            log.info(f"--checkpoint {args.checkpoint} holds a fold per cluster: it is "
                     "folded on the driver (--rebuild folds it by topic bucket)")
        return state.buckets
    if args.kraft_fold != "executors":
        return 0
    return bucket_count(spark, args.buckets)


def replay_kraft(spark: SparkSession, kraft: KraftInput, out: str, run_id: str,
                 profile: KraftProfile, default_min_isr: int,
                 resume: dict[str, ClusterState] | None = None) -> dict[str, ClusterRun]:
    """Fold every cluster of the input (from its saved state, `resume`) and write the
    run's tables."""
    started, t0 = datetime.now(UTC), time.perf_counter()
    clusters = read_clusters(kraft)
    noops = ingest_noops(kraft)
    resume = resume or {}
    runs = {c: fold_cluster(c, clusters[c], profile, default_min_isr, run_id,
                            noops.get(c, 0), resume.get(c)) for c in clusters}
    check_offsets(kraft, runs, clusters, resume)
    folded = time.perf_counter()
    write_tables(runs, out, run_id)
    summarise(runs, out, run_id, started, t0, folded,
              {c: log.snapshot for c, log in clusters.items()})
    return runs
