"""Replay a controller event log with Spark and write the state, request and finding tables.

    .venv/bin/python -m jobs.replay --events DIR --out DIR [--checkpoint DIR] [--run-id ID]
        [--config FILE] [--buckets N] [--master URL] [--kafka-version X.Y]
    spark-submit --py-files dist/replay.zip jobs/submit.py replay <same arguments>

Stages (`main`): settings -> check the files' schemas (fail fast) -> the timeline stage:
scan the log, build the cluster timelines on the driver and write `broker_timeline` /
`controller_timeline` -> the stream stage: write this run's wake rows, then one Structured
Streaming query (availableNow) validates and keys the new rows, groups them by (cluster,
bucket), replays them through the core with the state in `GroupState` and writes the tables
from `foreachBatch` -> the summary stage: `run_summary`, the checkpoint's history and run
marker, and a short human summary. The tables are described in docs/tables.md, the stages
and the checkpoint in docs/replay-job.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
from datetime import UTC, datetime

from pyspark.sql import SparkSession

from jobs.common.command import refuse, run_job
from jobs.common.config import load_config
from jobs.common.exitcodes import BadInput
from jobs.common.session import (
    build_session,
    configured_properties,
    read_properties,
    under_spark_submit,
)
from jobs.engine.data_loss_table import evidence_problem
from jobs.engine.event_log import NeedsSpark, check_event_files
from jobs.engine.failures import nested_problem
from jobs.engine.initial_state import read_initial_state
from jobs.engine.plausibility import rules_from_config
from jobs.engine.replay_run import run_with_session
from jobs.engine.settings import Settings, StageClock, replay_config
from jobs.engine.sizing import log_rows, small_log_settings
from jobs.ingest.release import choose_release, read_record
from jobs.replay.args import parse_args
from jobs.replay.kraft import kraft_events, kraft_main
from jobs.store.filesystem import run_id_problem, scratch_path, unsupported_path_problem
from jobs.store.tables import remove_scratch
from statemachine.profiles import profile_for

log = logging.getLogger(__name__)


def read_settings(argv: list[str] | None) -> Settings:
    args = parse_args(argv)
    try:  # the config file, and the release line it or --kafka-version names
        return settings_of(args)
    except (ValueError, FileNotFoundError) as exc:
        raise BadInput(str(exc)) from None


def settings_of(args: argparse.Namespace) -> Settings:
    cfg, cfg_path = load_config(args.config)
    release = choose_release(args.kafka_version, read_record(args.events),
                             str(cfg["kafka_version"]).strip(), "config [kafka] kafka_version")
    settings = Settings(
        events=args.events,
        out=args.out,
        checkpoint=args.checkpoint or "",  # a temporary one is made once the checks pass
        temporary_checkpoint=args.checkpoint is None,
        run_id=args.run_id or datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
        buckets=int(args.buckets or cfg["buckets"]),
        config=replay_config(cfg, release.version),
        max_file_age=str(cfg["max_file_age"]),
        state_refresh_runs=state_refresh_runs(cfg),
        config_file=cfg_path,
        spark_conf=configured_properties(cfg, cfg_path),
        master=args.master,
        audit=bool(args.audit),
        fail_on=args.fail_on,
        observed=tuple(args.observed),
        initial_state=tuple(args.initial_state),
        rules=rules_from_config(cfg, datetime.now(UTC)),
        rebuild=bool(args.rebuild),
        verdict_json=args.verdict_json,
        prometheus=args.prometheus,
        offset_evidence=args.offset_evidence,
        release=f"Kafka {release.version} (profile {profile_for(release.version).name}): "
                f"{release.reason}",
    )
    log.info(f"events={settings.events} out={settings.out} "
             f"checkpoint={settings.checkpoint or '(temporary: full replay)'} "
             f"run_id={settings.run_id}")
    log.info(f"config={cfg_path or '(defaults)'} buckets={settings.buckets} {settings.config} "
             f"max_file_age={settings.max_file_age}")
    log.info(f"release replayed: {settings.release}")
    return settings


def state_refresh_runs(cfg: dict[str, object]) -> int:
    """`[replay] state_refresh_runs`: a whole number of at least 1."""
    value = cfg["state_refresh_runs"]
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"[replay] state_refresh_runs = {value!r}: a whole number of runs, "
                         "at least 1")
    return value


def early_problem(s: Settings) -> str | None:
    """What can be refused before Spark starts: a run id that cannot name a directory, an
    output or checkpoint directory inside the event directory, a rebuild of no checkpoint,
    the audit's flags without --audit, files to publish its verdict to where they cannot
    be written."""
    if s.rebuild and s.temporary_checkpoint:
        return ("--rebuild replaces a checkpoint's state with a replay of the whole log; "
                "give the --checkpoint to rebuild (without one every run is a full replay)")
    return (run_id_problem(s.run_id) or unsupported_path_problem("--out", s.out)
            or unsupported_path_problem("--checkpoint", s.checkpoint)
            or nested_problem(s.events, s.out, s.checkpoint or None) or audit_flags_problem(s)
            or evidence_problem(s.offset_evidence))


def audit_flags_problem(s: Settings) -> str | None:
    """The audit's flags without --audit would be ignored: a scheduler that asked for
    `--fail-on critical` would read exit 0 as a pass that no check made."""
    if not s.audit:
        given = [flag for flag, value in (("--fail-on", s.fail_on), ("--observed", s.observed),
                                          ("--verdict-json", s.verdict_json),
                                          ("--prometheus", s.prometheus)) if value]
        if given:
            return f"{', '.join(given)} configure the audit of the run: add --audit"
        return None
    if s.verdict_json is None and s.prometheus is None:
        return None
    from jobs.audit.publish import publish_problem

    return publish_problem(s.verdict_json, s.prometheus)


def audit_run(spark: SparkSession, s: Settings, replay_rc: int = 0) -> int:
    """`--audit`: the nightly audit of this run in the same session (one spark-submit for
    the scheduler); its verdict is the job's exit code. A replay that stopped (bad input,
    a busy checkpoint) is published as verdict ERROR with its exit code."""
    from jobs.audit import options_from_config, run_audit
    from jobs.audit.publish import publish_run, replay_stopped

    if replay_rc != 0:
        result = replay_stopped(s.run_id, s.fail_on, replay_rc)
    else:
        options = options_from_config(str(s.config_file) if s.config_file else None,
                                      fail_on=s.fail_on, observed=s.observed or None)
        result = run_audit(spark, s.out, s.run_id, options)
    return publish_run(spark, s.out, result, verdict_json=s.verdict_json,
                       prometheus=s.prometheus)


def sized_for_log(s: Settings) -> dict[str, str]:
    """The session's settings for a small log (`jobs.engine.sizing`), said when taken."""
    if under_spark_submit():
        return {}
    configured = read_properties(s.spark_conf) if s.spark_conf is not None else {}
    sized = small_log_settings(log_rows(s.events), s.master or configured.get("spark.master"),
                               s.temporary_checkpoint,
                               configured.get("spark.driver.extraJavaOptions", ""))
    if sized:
        log.info(f"small log: {', '.join(f'{k}={v}' for k, v in sorted(sized.items()))}")
    return sized


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    return run_job("replay", argv, replay, spark)


def replay(argv: list[str], spark: SparkSession | None) -> int:
    kraft = kraft_events(argv)  # a KRaft metadata log: folded on the driver
    if kraft is not None:
        return kraft_main(argv, kraft, spark)
    s = read_settings(argv)
    problem = early_problem(s)
    if problem is not None:
        raise BadInput(problem)
    seed = read_initial_state(s.initial_state) if s.initial_state else None
    clock = StageClock()
    try:
        # Before Spark starts where pyarrow can read the file system (a bad file costs
        # seconds, not a JVM start); through Spark where only Hadoop has a client.
        files: int | None = check_event_files(s.events, log.info)
    except NeedsSpark:
        files = None
    if s.temporary_checkpoint:
        s = dataclasses.replace(s, checkpoint=scratch_path(s.out, "replay-checkpoint-"))
    try:
        if spark is None:
            spark = build_session("kafka-controller-replay", master=s.master,
                                  properties_file=s.spark_conf, conf=sized_for_log(s))
        if files is None:
            files = check_event_files(s.events, log.info, spark=spark)
        clock.seconds["check"] = clock.since(clock.t0)
        log.info(f"schema check: {files} file(s) readable")
        try:
            rc = run_with_session(spark, s, clock, seed)
        except BadInput as exc:
            if not s.audit:
                raise
            rc = refuse(str(exc))  # the audit publishes the stopped run as ERROR
        return audit_run(spark, s, rc) if s.audit else rc
    finally:
        if s.temporary_checkpoint:
            remove_scratch(spark, s.checkpoint)


__all__ = ["main"]
