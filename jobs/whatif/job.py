"""Replay a controller event log under edited histories ("what if broker 4 had failed at
02:10?") and rank the variants by what they cost.

    .venv/bin/python -m jobs.whatif --events DIR --scenario FILE.toml --out DIR
        [--config FILE] [--buckets N] [--master URL] [--baseline DIR] [--run-id ID]
        [--kafka-version X.Y] [--no-share]
    spark-submit --py-files dist/replay.zip jobs/submit.py whatif <same arguments>

Stages (`main`): settings and scenario -> the log's facts (pyarrow, a few columns) -> the
variants resolved and checked (all before Spark starts) -> the replay stage: ONE streaming
query replays the baseline and every variant side by side, each variant a composite cluster
of the grouping key (`jobs.whatif.edits`), into staging tables in the temporary checkpoint
-> the publish stage: every replay table with a `variant` column under --out
(`jobs.whatif.output`) -> the impact stage: `whatif_impact`, `whatif_partition_diff` and the
printed ranking (`jobs.whatif.impact`). docs/whatif.md describes the scenario format and
the tables. A KRaft metadata log goes to `jobs.whatif.kraft` (its variants folded on the
driver, then the same publish and impact stages).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import SparkSession

from jobs.common.command import refuse, run_job
from jobs.common.config import load_config
from jobs.common.exitcodes import BadInput
from jobs.common.session import build_session, configured_properties
from jobs.engine.event_log import NeedsSpark, check_event_files
from jobs.engine.failures import nested_problem, out_problem
from jobs.engine.plausibility import Plausibility, rules_from_config
from jobs.engine.settings import replay_config
from jobs.ingest.release import choose_release, read_record
from jobs.store.filesystem import run_id_problem, scratch_path
from jobs.store.tables import remove_scratch
from jobs.whatif.args import parse_args
from jobs.whatif.facts import LogFacts, facts_from_arrow, facts_from_spark
from jobs.whatif.impact import impact_stage
from jobs.whatif.kraft.job import kraft_input, kraft_main
from jobs.whatif.output import baseline_problem, publish
from jobs.whatif.plan import VariantPlan, resolve
from jobs.whatif.plan_check import job as plan_check
from jobs.whatif.run import replay_variants
from jobs.whatif.scenario import Scenario, ScenarioError, load_scenario
from statemachine.context import ReplayConfig

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    events: str
    scenario_file: str
    out: str
    run_id: str
    buckets: int
    config: ReplayConfig
    max_file_age: str
    baseline: str | None  # an existing replay output of the same log
    spark_conf: Path | None
    master: str | None
    rules: Plausibility = Plausibility()  # the replay's, so the baseline is the replay's
    share: bool = True  # variants share their work (`jobs.whatif.sharing`)


def read_settings(argv: list[str] | None) -> Settings:
    args = parse_args(argv)
    cfg, cfg_path = load_config(args.config)
    # The release the ingest detected is the default, as for jobs.replay.
    release = choose_release(args.kafka_version, read_record(args.events),
                             str(cfg["kafka_version"]).strip(), "config [kafka] kafka_version")
    log.info(f"release replayed: Kafka {release.version}: {release.reason}")
    return Settings(
        events=args.events, scenario_file=args.scenario, out=args.out,
        run_id=args.run_id or Path(args.scenario).stem,
        buckets=int(args.buckets or cfg["buckets"]),
        config=replay_config(cfg, release.version),
        max_file_age=str(cfg["max_file_age"]), baseline=args.baseline,
        spark_conf=configured_properties(cfg, cfg_path), master=args.master,
        rules=rules_from_config(cfg, datetime.now(UTC)), share=not args.no_share,
    )


def checked_plans(s: Settings, scenario: Scenario, facts: LogFacts) -> list[VariantPlan]:
    started = time.perf_counter()
    plans = resolve(scenario, s.config, facts, with_baseline=s.baseline is None)
    log.info(f"plan: {len(plans)} variant(s) resolved in {time.perf_counter() - started:.1f}s")
    log.info(f"{len(plans)} variant(s) to replay: "
             + ", ".join(p.name for p in plans[:12]) + (" ..." if len(plans) > 12 else ""))
    return plans


def early_checks(s: Settings) -> tuple[Scenario, LogFacts | None]:
    """Everything that needs no Spark: run id, directories, event files, scenario, and the
    scenario against the log when pyarrow can read it. Raises ValueError subclasses."""
    problem = run_id_problem(s.run_id) or nested_problem(s.events, s.out, None)
    if problem is not None:
        raise ScenarioError(problem)
    scenario = load_scenario(s.scenario_file)
    try:
        check_event_files(s.events, log.info)
    except NeedsSpark:
        return scenario, None
    return scenario, facts_from_arrow(s.events)


def run_with_session(spark: SparkSession, s: Settings, plans: list[VariantPlan],
                     facts: LogFacts, checkpoint: str) -> int:
    problem = out_problem(s.out, s.run_id) or baseline_problem(spark, s.baseline)
    if problem is not None:
        return refuse(problem)
    started = time.perf_counter()
    staged = replay_variants(spark, s.events, s.run_id, s.buckets, s.max_file_age, plans,
                             checkpoint, log.info, s.rules, s.share)
    log.info(f"replay: {len(plans)} variant(s) in {time.perf_counter() - started:.1f}s")
    started = time.perf_counter()
    publish(spark, staged.path, s.out, s.run_id, s.baseline, staged.variant_form)
    log.info(f"publish: the tables under {s.out} in {time.perf_counter() - started:.1f}s")
    started = time.perf_counter()
    impact_stage(spark, s.out, s.run_id, plans, facts, staged.counts)
    log.info(f"impact: whatif_impact and whatif_partition_diff in "
             f"{time.perf_counter() - started:.1f}s")
    return 0


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    return run_job("whatif", argv, whatif, spark)


def whatif(argv: list[str], spark: SparkSession | None) -> int:
    if plan_check.requested(argv):  # a plan checked against a replay's state: no Spark
        return plan_check.main(argv)
    kraft = kraft_input(argv)  # a KRaft metadata log: its variants folded on the driver
    if kraft is not None:
        return kraft_main(argv, kraft, spark)
    try:
        s = read_settings(argv)
        scenario, facts = early_checks(s)
        plans = checked_plans(s, scenario, facts) if facts is not None else None
    except (ValueError, FileNotFoundError) as exc:  # scenario, log, config file
        raise BadInput(str(exc)) from None
    log.info(f"events={s.events} scenario={s.scenario_file} out={s.out} run_id={s.run_id} "
             f"buckets={s.buckets} started={datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}")
    checkpoint = scratch_path(s.out, "whatif-checkpoint-")
    try:
        if spark is None:
            spark = build_session("kafka-controller-whatif", master=s.master,
                                  properties_file=s.spark_conf)
        if facts is None or plans is None:
            check_event_files(s.events, log.info, spark=spark)
            facts = facts_from_spark(spark, s.events)
            plans = checked_plans(s, scenario, facts)
        return run_with_session(spark, s, plans, facts, checkpoint)
    finally:
        remove_scratch(spark, checkpoint)


__all__ = ["main"]
