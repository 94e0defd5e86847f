"""`python -m jobs.whatif --events DIR --scenario FILE --out DIR` on a KRaft input (the
`metadata_records` of `jobs.ingest`): the scenario resolved against the records
(`plan`), the baseline and every variant folded on the executors (`run`), then the
ZooKeeper what-if's own publish and impact stages: the same tables, with a `variant`
column, and the same ranking. `--kafka-version` picks the KRaft profile (3.3 and later).
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import SparkSession

from jobs.common.command import refuse
from jobs.common.config import DEFAULTS, load_config
from jobs.common.exitcodes import BadInput
from jobs.common.session import session_for_config
from jobs.engine.failures import nested_problem, out_problem
from jobs.engine.kraft.metadata_source import (
    KraftInput,
    find_kraft_input,
    ingest_noops,
    read_clusters,
)
from jobs.engine.kraft.pipeline import profile_of
from jobs.store.filesystem import run_id_problem, scratch_path
from jobs.store.layout import CheckpointLayout
from jobs.store.tables import remove_scratch
from jobs.whatif.args import parse_args
from jobs.whatif.impact import impact_stage
from jobs.whatif.kraft.plan import KraftVariant, kraft_facts, resolve
from jobs.whatif.kraft.run import FoldSettings, replay_kraft_variants
from jobs.whatif.output import baseline_problem, publish
from jobs.whatif.plan import VariantPlan
from jobs.whatif.scenario import load_scenario
from statemachine.context import ReplayConfig

log = logging.getLogger(__name__)


def kraft_input(argv: list[str] | None) -> KraftInput | None:
    """The KRaft input `--events` names, or None (a ZooKeeper-mode event log)."""
    return find_kraft_input(parse_args(argv).events)


def impact_plans(variants: list[KraftVariant]) -> list[VariantPlan]:
    """The variants as `jobs.whatif.impact` reads them: a name, edit counts, `no_edit`."""
    return [VariantPlan(v.name, (), ReplayConfig(), counts=v.counts, no_edit=v.no_edit)
            for v in variants]


def kraft_main(argv: list[str] | None, kraft: KraftInput,
               spark: SparkSession | None = None) -> int:
    args = parse_args(argv)
    run_id = args.run_id or Path(args.scenario).stem
    try:
        cfg, cfg_path = load_config(args.config)
        version = str(args.kafka_version or cfg.get("kafka_version",
                                                     DEFAULTS["kafka_version"])).strip()
        profile = profile_of(version)
        problem = run_id_problem(run_id) or nested_problem(args.events, args.out, None)
        if problem is not None:
            return refuse(problem)
        scenario = load_scenario(args.scenario)
        clusters = read_clusters(kraft)
        default_min_isr = int(cfg["min_insync_replicas"])
        started = time.perf_counter()
        variants = resolve(scenario, clusters, profile, default_min_isr)
    except (ValueError, FileNotFoundError) as exc:  # scenario, config file, version
        raise BadInput(str(exc)) from None
    log.info(f"plan: {len(variants)} variant(s) resolved in {time.perf_counter() - started:.1f}s "
             f"(KRaft metadata log, profile {profile.name})")
    log.info(f"events={kraft.records} scenario={args.scenario} out={args.out} run_id={run_id} "
             f"started={datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}")
    if spark is None:
        spark = session_for_config(cfg, cfg_path, args.master)
    problem = out_problem(args.out, run_id) or baseline_problem(spark, args.baseline)
    if problem is not None:
        return refuse(problem)
    checkpoint = scratch_path(args.out, "whatif-checkpoint-")
    try:
        settings = FoldSettings(profile, default_min_isr, ingest_noops(kraft),
                                CheckpointLayout(checkpoint).tables, run_id)
        staging = replay_kraft_variants(spark, kraft, clusters, variants, settings, log.info,
                                        with_baseline=args.baseline is None)
        publish(spark, staging, args.out, run_id, args.baseline)
        impact_stage(spark, args.out, run_id, impact_plans(variants), kraft_facts(clusters),
                     requests=False)
    finally:
        remove_scratch(spark, checkpoint)
    return 0
