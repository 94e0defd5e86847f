"""One replay run on its checkpoint: the settings the checkpoint pins, the lease, the
checkpoint generation (`--rebuild`), then the stages (`jobs.engine.stages`). Nothing is
written before the lease is taken; a run id the checkpoint has committed is a no-op."""

from __future__ import annotations

import dataclasses
import json
import logging
import time

from pyspark.sql import SparkSession

from jobs.common.exitcodes import CHECKPOINT_BUSY, BadInput
from jobs.engine.failures import out_problem
from jobs.engine.initial_state import (
    InitialStateError,
    Seed,
    ensure_seed_source,
    seed_source_exists,
)
from jobs.engine.settings import Settings, StageClock
from jobs.engine.stages import seed_stage, stream_stage, summary_stage, timeline_stage
from jobs.store.checkpoint_out import (
    OUT_KEY,
    normalized_out,
    out_mismatch,
    record_out,
    recorded_out,
)
from jobs.store.filesystem import path_exists, read_text, write_text
from jobs.store.generations import active_checkpoint, committed_runs, generation, swap_in
from jobs.store.layout import CheckpointLayout
from jobs.store.lease import CheckpointLease, LeaseHeld
from jobs.store.ledger import RunLedger
from statemachine.profiles import DEFAULT_KAFKA_VERSION

log = logging.getLogger(__name__)


def pin_settings(spark: SparkSession, checkpoint: str, buckets: int, profile: str,
                 out: str | None = None) -> str | None:
    """Settings a checkpoint's state depends on, recorded by its first run; a later run
    that asks for others is refused. The bucket count is part of the state's key: another
    count would look for each topic's partitions in the wrong state row and silently start
    them from nothing. The release profile decides the rules the saved state was built
    with: resuming it under another release's rules would mix the two. A checkpoint from
    before profiles existed was built with 3.7's."""
    path = CheckpointLayout(checkpoint).settings
    if not path_exists(path):
        pinned_now: dict[str, object] = {"buckets": buckets, "kafka_profile": profile}
        if out is not None:
            pinned_now[OUT_KEY] = normalized_out(out)
        write_text(path, json.dumps(pinned_now) + "\n")
        return None
    pinned = json.loads(read_text(path))
    problem = None if out is None else out_mismatch(checkpoint, pinned.get(OUT_KEY), out)
    if problem is not None:
        return problem
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
    if out is not None:
        record_out(path, out)  # a checkpoint from before it recorded its --out
    return None


def seed_source(spark: SparkSession, s: Settings, seed: Seed | None) -> bool:
    """Whether the query reads the checkpoint's seed folder (made on a new checkpoint);
    InitialStateError when `--initial-state` cannot be honoured on this checkpoint."""
    query_started = path_exists(s.layout.query_offsets)
    if seed is not None and query_started and not seed_source_exists(spark, s.checkpoint):
        raise InitialStateError(
            f"--initial-state: checkpoint {s.checkpoint} was made before --initial-state "
            "existed; seed a new checkpoint (a full replay)")
    return ensure_seed_source(spark, s.checkpoint, query_started)


def replay_run(spark: SparkSession, s: Settings, clock: StageClock,
               seed: Seed | None = None) -> int:
    """The run, holding the checkpoint: nothing is written before the lease is taken."""
    if path_exists(s.marker):
        log.info(f"run {s.run_id} is already committed in {s.checkpoint}; nothing to do "
                 "(new files are taken in by the next run id)")
        return 0
    problem = pin_settings(spark, s.checkpoint, s.buckets, s.config.profile.name,
                           None if s.temporary_checkpoint else s.out)
    if problem is not None:
        raise BadInput(problem)
    ledger = RunLedger(spark, s.checkpoint, s.run_id).load()
    if ledger.records:
        log.info(f"run {s.run_id} resumes: batch(es) {sorted(ledger.records)} already written")
    start = time.perf_counter()
    try:
        has_seed_source = seed_source(spark, s, seed)
        timeline = timeline_stage(spark, s, seed)
    except InitialStateError as exc:
        raise BadInput(str(exc)) from None
    timeline.seed_source = has_seed_source
    clock.seconds["timeline"] = clock.since(start)
    seed_stage(spark, s, timeline, seed)
    stream_stage(spark, s, timeline, ledger, clock)
    summary_stage(spark, s, timeline, ledger, clock)
    return 0


def run_with_session(spark: SparkSession, s: Settings, clock: StageClock,
                     seed: Seed | None = None) -> int:
    if not s.temporary_checkpoint and not s.rebuild:
        # Refused before anything is written: --out's probe, the lease.
        active = active_checkpoint(spark, s.checkpoint)
        problem = out_mismatch(s.checkpoint, recorded_out(CheckpointLayout(active).settings),
                               s.out)
        if problem is not None:
            raise BadInput(problem)
    problem = out_problem(s.out, s.run_id)
    if problem is not None:
        raise BadInput(problem)
    if s.temporary_checkpoint:
        return replay_run(spark, s, clock, seed)
    try:
        with CheckpointLease(spark, s.checkpoint, s.run_id):
            return replay_generation(spark, s, clock, seed)
    except LeaseHeld as exc:  # not bad input: the same command succeeds once it is free
        log.warning(f"BUSY: checkpoint {s.checkpoint}: {exc}; retry later")
        return CHECKPOINT_BUSY


def replay_generation(spark: SparkSession, s: Settings, clock: StageClock,
                      seed: Seed | None = None) -> int:
    """The run in the checkpoint's active generation; with `--rebuild`, the whole log in
    a new generation, swapped in once the run has committed (`jobs.store.generations`)."""
    active = active_checkpoint(spark, s.checkpoint)
    if not s.rebuild:
        return replay_run(spark, dataclasses.replace(s, checkpoint=active), clock, seed)
    target = generation(s.checkpoint, s.run_id)
    if target == active:
        log.info(f"rebuild {s.run_id} is already the checkpoint's generation; nothing to do")
        return 0
    superseded = tuple(r for r in committed_runs(spark, active) if r != s.run_id)
    log.info(f"rebuild: the whole log into {target}; supersedes run(s) {list(superseded)}")
    rc = replay_run(spark, dataclasses.replace(s, checkpoint=target, superseded=superseded),
                    clock, seed)
    if rc == 0:
        swap_in(spark, s.checkpoint, target)
        log.info(f"rebuild: {target} is now the checkpoint's generation")
    return rc


