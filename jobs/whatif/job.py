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

import argparse
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import SparkSession

from jobs.common.cli import command_parser
from jobs.common.config import DEFAULT_CONFIG, find_file, load_config
from jobs.common.paths import run_id_problem, scratch_path
from jobs.common.session import build_session, under_spark_submit
from jobs.common.tables import path_exists, remove_scratch
from jobs.ingest.release import choose_release, read_record
from jobs.replay.failures import nested_problem, out_problem, read_failure
from jobs.replay.job import replay_config
from jobs.replay.plausibility import Plausibility, rules_from_config
from jobs.replay.source import EventSchemaError, NeedsSpark, check_event_files
from jobs.whatif.facts import LogError, LogFacts, facts_from_arrow, facts_from_spark
from jobs.whatif.impact import impact_stage
from jobs.whatif.output import publish
from jobs.whatif.plan import VariantPlan, resolve
from jobs.whatif.run import replay_variants
from jobs.whatif.scenario import Scenario, ScenarioError, load_scenario
from statemachine.context import ReplayConfig


def log(message: str) -> None:
    print(f"[whatif] {message}", flush=True)


def error(message: str) -> int:
    print(f"[whatif] ERROR: {message}", file=sys.stderr, flush=True)
    return 2


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


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = command_parser("jobs.whatif", __doc__)
    p.add_argument("--events", required=True, help="directory of event-log Parquet files")
    p.add_argument("--scenario", required=True, help="scenario TOML ([[variant]], [sweep])")
    p.add_argument("--out", required=True, help="directory of the output tables")
    p.add_argument("--run-id", help="run identifier (default: the scenario file's stem)")
    p.add_argument("--config", help=f"job settings TOML (default: {DEFAULT_CONFIG})")
    p.add_argument("--buckets", type=int,
                   help="replay groups per cluster and variant (default: the config's buckets)")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    p.add_argument("--baseline", help="an existing jobs.replay output of the same log: its "
                   "tables are the baseline (not replayed again)")
    p.add_argument("--no-share", action="store_true",
                   help="replay every variant on its own, sharing nothing with the baseline "
                   "(slower; the same tables: a check of the shared replay)")
    p.add_argument("--kafka-version", help="Kafka release line replayed, X.Y from 0.8 to "
                   "3.9 (a KRaft log: 3.3 and later, 4.0 included) (overrides config's "
                   "[kafka] kafka_version; default: the release jobs.ingest detected, else 3.7)")
    return p.parse_args(argv)


def read_settings(argv: list[str] | None) -> Settings:
    args = parse_args(argv)
    cfg, cfg_path = load_config(args.config)
    spark_conf = None
    if not under_spark_submit() and cfg.get("spark_conf"):
        spark_conf = find_file(str(cfg["spark_conf"]), cfg_path.parent.parent if cfg_path
                               else None)
    # The release the ingest detected is the default, as for jobs.replay.
    release = choose_release(args.kafka_version, read_record(args.events),
                             str(cfg["kafka_version"]).strip(), "config [kafka] kafka_version")
    log(f"release replayed: Kafka {release.version}: {release.reason}")
    return Settings(
        events=args.events, scenario_file=args.scenario, out=args.out,
        run_id=args.run_id or Path(args.scenario).stem,
        buckets=int(args.buckets or cfg["buckets"]), config=replay_config(cfg, release.version),
        max_file_age=str(cfg["max_file_age"]), baseline=args.baseline,
        spark_conf=spark_conf, master=args.master,
        rules=rules_from_config(cfg, datetime.now(UTC)), share=not args.no_share,
    )


def checked_plans(s: Settings, scenario: Scenario, facts: LogFacts) -> list[VariantPlan]:
    started = time.perf_counter()
    plans = resolve(scenario, s.config, facts, with_baseline=s.baseline is None)
    log(f"plan: {len(plans)} variant(s) resolved in {time.perf_counter() - started:.1f}s")
    log(f"{len(plans)} variant(s) to replay: "
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
        check_event_files(s.events, log)
    except NeedsSpark:
        return scenario, None
    return scenario, facts_from_arrow(s.events)


def run_with_session(spark: SparkSession, s: Settings, plans: list[VariantPlan],
                     facts: LogFacts, checkpoint: str) -> int:
    problem = out_problem(spark, s.out, s.run_id)
    if problem is not None:
        return error(problem)
    if s.baseline is not None and not path_exists(spark, f"{s.baseline}/partition_states"):
        return error(f"--baseline {s.baseline} holds no replay output (no partition_states)")
    started = time.perf_counter()
    staging, counts = replay_variants(spark, s.events, s.run_id, s.buckets, s.max_file_age,
                                      plans, checkpoint, log, s.rules, s.share)
    log(f"replay: {len(plans)} variant(s) in {time.perf_counter() - started:.1f}s")
    started = time.perf_counter()
    publish(spark, staging, s.out, s.run_id, s.baseline)
    log(f"publish: the tables under {s.out} in {time.perf_counter() - started:.1f}s")
    started = time.perf_counter()
    impact_stage(spark, s.out, s.run_id, plans, facts, counts)
    log(f"impact: whatif_impact and whatif_partition_diff in "
        f"{time.perf_counter() - started:.1f}s")
    return 0


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    from jobs.whatif.kraft.job import kraft_input, kraft_main

    kraft = kraft_input(argv)  # a KRaft metadata log: its variants folded on the driver
    if kraft is not None:
        return kraft_main(argv, kraft, log, error, spark)
    try:
        s = read_settings(argv)
        scenario, facts = early_checks(s)
        plans = checked_plans(s, scenario, facts) if facts is not None else None
    except (ValueError, FileNotFoundError) as exc:  # scenario, log, config file
        return error(str(exc))
    log(f"events={s.events} scenario={s.scenario_file} out={s.out} run_id={s.run_id} "
        f"buckets={s.buckets} started={datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}")
    checkpoint = scratch_path(s.out, "whatif-checkpoint-")
    try:
        if spark is None:
            spark = build_session("kafka-controller-whatif", master=s.master,
                                  properties_file=s.spark_conf)
        if facts is None or plans is None:
            check_event_files(s.events, log, spark=spark)
            facts = facts_from_spark(spark, s.events)
            plans = checked_plans(s, scenario, facts)
        return run_with_session(spark, s, plans, facts, checkpoint)
    except (EventSchemaError, ScenarioError, LogError) as exc:
        return error(str(exc))
    except Exception as exc:
        explained = read_failure(exc)
        if explained is None:
            raise
        return error(explained)
    finally:
        remove_scratch(spark, checkpoint)


__all__ = ["main"]
