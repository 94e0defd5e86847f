"""`python -m jobs.replay --events DIR --out OUT` on a KRaft input (`source`): the log folded
by `statemachine.kraft` (no streaming query), by (cluster, topic bucket) in Spark tasks
(`--kraft-fold executors`, the default: `jobs.engine.kraft.executors`) or each cluster whole
on the driver (`--kraft-fold driver`), the tables written in the ZooKeeper run's layout and
schemas, plus `metadata_writes`. `--kafka-version` picks the KRaft profile (3.3 and later).

With `--checkpoint` a run folds only the records after those the checkpoint's last run
folded, into its saved fold (`checkpoint`), holding the checkpoint's lease (a second run
exits 75); `--rebuild` folds the whole log into a new state.

Refused with exit 2: a release line before 3.3 (ZooKeeper only), a checkpoint built under
another KRaft profile, `--initial-state` (a KRaft replay starts from the log's snapshot).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import SparkSession

from jobs.common.config import DEFAULTS, load_config
from jobs.common.exitcodes import CHECKPOINT_BUSY, BadInput
from jobs.common.session import session_for_config
from jobs.engine.data_loss_table import evidence_problem, find_evidence, write_data_loss
from jobs.engine.failures import nested_problem, out_problem
from jobs.engine.kraft.executors import bucket_count, replay_kraft_on_executors
from jobs.engine.kraft.metadata_source import (
    KraftInput,
    find_kraft_input,
)
from jobs.engine.kraft.pipeline import incremental, profile_of, replay_kraft
from jobs.replay.args import parse_args
from jobs.store.checkpoint_out import out_mismatch, record_out, recorded_out
from jobs.store.filesystem import run_id_problem
from jobs.store.layout import CheckpointLayout
from jobs.store.lease import CheckpointLease, LeaseHeld

log = logging.getLogger(__name__)


def kraft_events(argv: list[str] | None) -> KraftInput | None:
    """The KRaft input `--events` names, or None (a ZooKeeper-mode event log)."""
    return find_kraft_input(parse_args(argv).events)


def refused(args: Any) -> str | None:
    if args.rebuild and not args.checkpoint:
        return "--rebuild rebuilds a --checkpoint: give the checkpoint"
    if args.initial_state:
        return ("--initial-state with a KRaft metadata log: a KRaft replay starts from the "
                "log's snapshot (*.checkpoint); ingest it with the segments")
    if not args.audit and (args.fail_on or args.observed or args.verdict_json
                           or args.prometheus):
        return "--fail-on, --observed, --verdict-json, --prometheus configure the audit " \
               "of the run: add --audit"
    if args.verdict_json or args.prometheus:
        from jobs.audit.publish import publish_problem

        return publish_problem(args.verdict_json, args.prometheus)
    return None


def kraft_main(argv: list[str] | None, kraft: KraftInput,
               spark: SparkSession | None = None) -> int:
    args = parse_args(argv)
    try:
        cfg, cfg_path = load_config(args.config)
        version = str(args.kafka_version or cfg.get("kafka_version",
                                                     DEFAULTS["kafka_version"])).strip()
        profile = profile_of(version)
    except (ValueError, FileNotFoundError) as exc:
        raise BadInput(str(exc)) from None
    run_id = args.run_id or datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    problem = (refused(args) or run_id_problem(run_id)
               or nested_problem(args.events, args.out, args.checkpoint))
    if problem is not None:
        raise BadInput(problem)
    log.info(f"events={kraft.records} (KRaft metadata log) out={args.out} run_id={run_id} "
             f"kafka_version={version} (KRaft profile {profile.name})")
    if spark is None:
        spark = session_for_config(cfg, cfg_path, args.master)
    problem = None
    if args.checkpoint and not args.rebuild:  # before --out's probe writes anything
        problem = out_mismatch(args.checkpoint, recorded_out(
            CheckpointLayout(args.checkpoint).kraft_out), args.out)
    problem = problem or out_problem(args.out, run_id) or evidence_problem(args.offset_evidence)
    if problem is not None:
        raise BadInput(problem)
    min_isr = int(cfg["min_insync_replicas"])
    if args.checkpoint:
        try:
            with CheckpointLease(spark, args.checkpoint, run_id):
                rc = incremental(spark, kraft, args, run_id, profile, min_isr)
                if rc is None:  # it ran: the checkpoint's runs write to this --out
                    record_out(CheckpointLayout(args.checkpoint).kraft_out, args.out)
        except LeaseHeld as exc:  # the same command succeeds once it is free
            log.warning(f"BUSY: checkpoint {args.checkpoint}: {exc}; retry later")
            return CHECKPOINT_BUSY
        if rc is not None:
            return rc
    elif args.kraft_fold == "executors":
        replay_kraft_on_executors(spark, kraft, args.out, run_id, profile, min_isr,
                                  bucket_count(spark, args.buckets))
    else:
        replay_kraft(spark, kraft, args.out, run_id, profile, min_isr)
    write_data_loss(args.out, run_id, find_evidence(args.events, args.offset_evidence),
                    log.info)
    if not args.audit:
        return 0
    from jobs.audit import options_from_config, run_audit
    from jobs.audit.publish import publish_run

    options = options_from_config(str(cfg_path) if cfg_path else None, fail_on=args.fail_on,
                                  observed=tuple(args.observed) or None)
    result = run_audit(spark, args.out, run_id, options)
    return publish_run(spark, args.out, result, verdict_json=args.verdict_json,
                       prometheus=args.prometheus)


