"""Audit a replay run: health checks on its end state and its events, a post-mortem of its
offline windows, an optional comparison with an observed snapshot, and a verdict.

    .venv/bin/python -m jobs.audit --tables DIR [--run-id ID] [--observed FILE ...]
        [--observed-at TS] [--fail-on {critical,warning,never}] [--out DIR]
        [--config conf/replay.toml] [--cluster NAME] [--master URL]
        [--verdict-json FILE] [--prometheus FILE.prom]
    spark-submit --py-files dist/replay.zip jobs/submit.py audit <same arguments>

Exit status: 0 when no check reaches `--fail-on` (default critical), 1 when one does,
2 when the input cannot be read (no such tables directory or run, an unreadable
`--observed` file, a bad flag value). The checks and their severities: docs/audit.md.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from jobs.audit.extract import AuditInputError
from jobs.audit.observed import load_observed
from jobs.audit.options import (
    FAIL_ON_CHOICES,
    AuditOptions,
    options_from_config,
    parse_duration,
    parse_timestamp,
)
from jobs.audit.publish import failed, publish, publish_problem, publish_run
from jobs.audit.run import run_audit
from jobs.common.command import refuse as refuse_input
from jobs.common.command import run_job
from jobs.common.config import DEFAULT_CONFIG, load_config
from jobs.common.session import build_session, configured_properties
from jobs.store.filesystem import run_id_problem
from jobs.store.tables import variant_table

log = logging.getLogger(__name__)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from jobs.audit.options import AUDIT_DEFAULTS
    from jobs.common.cli import command_parser
    from jobs.common.exitcodes import CHECK_FAILED
    from jobs.store.latest_run import default_run_id

    p = command_parser("jobs.audit", __doc__, codes=(CHECK_FAILED,))
    # Checked by `audit` (not argparse), so that a missing one still writes the ERROR
    # verdict files a scheduler and the staleness alert read.
    p.add_argument("--tables", help="the replay's output directory (--out); required")
    p.add_argument("--run-id", help="the replay run to audit (default: the latest in "
                   "--tables, the run_summary row that finished last)")
    p.add_argument("--observed", nargs="+", default=[], metavar="FILE",
                   help="kafka-topics --describe output or ZooKeeper dumps to compare with")
    p.add_argument("--observed-at", help="the snapshot's instant, ISO 8601 UTC "
                   "(default: the end of the run)")
    p.add_argument("--fail-on", choices=FAIL_ON_CHOICES, default="critical",
                   help="the severity that fails the audit (exit 1)")
    p.add_argument("--out", help="where audit_checks goes (default: --tables)")
    p.add_argument("--config", help=f"settings TOML (default: {DEFAULT_CONFIG})")
    p.add_argument("--cluster", help="audit this cluster only (needed with --observed "
                   "when the run has several)")

    def threshold(check: str, key: str) -> str:
        return (f"{check} threshold (default: the config's [audit] {key}, else "
                f"{AUDIT_DEFAULTS[key]})")

    p.add_argument("--max-reassignment-age", help=threshold(
        "stuck_reassignment", "max_reassignment_age") + "; e.g. 30m, 1h, 2d")
    p.add_argument("--max-deletion-age", help=threshold(
        "stuck_deletion", "max_deletion_age") + "; e.g. 30m, 1h, 2d")
    p.add_argument("--max-failovers", type=int,
                   help=threshold("controller_churn", "max_failovers"))
    p.add_argument("--max-restarts", type=int,
                   help=threshold("broker_flapping", "max_restarts"))
    p.add_argument("--leader-imbalance-percentage", type=float, help=threshold(
        "leader_imbalance", "leader_imbalance_per_broker_percentage")
        + ", Kafka's leader.imbalance.per.broker.percentage")
    p.add_argument("--top", type=int, help="windows and rollup lines in the post-mortem "
                   f"(default: {AuditOptions.top})")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    p.add_argument("--verdict-json", metavar="FILE", help="write the verdict, the rows of "
                   "every check and the run's key figures to FILE (local; replaced atomically)")
    p.add_argument("--prometheus", metavar="FILE.prom", help="write the same as gauges to a "
                   "node_exporter textfile (local; replaced atomically)")
    args = p.parse_args(argv)
    if args.run_id is None and args.tables is not None:
        args.run_id = default_run_id(p, args.tables, "audit")
    return args


def refuse(args: argparse.Namespace, message: str) -> int:
    """Bad input: one line on stderr, and the ERROR verdict published when it can be."""
    rc = refuse_input(message)
    if publish_problem(args.verdict_json, args.prometheus) is None:
        publish(failed(args.run_id or "unknown", args.fail_on, rc, message), {},
                verdict_json=args.verdict_json, prometheus=args.prometheus,
                cluster=args.cluster)
    return rc


def read_options(args: argparse.Namespace) -> AuditOptions:
    """The config file's settings under the flags given."""
    overrides: dict[str, Any] = {
        "observed": tuple(args.observed),
        "observed_at": parse_timestamp(args.observed_at) if args.observed_at else None,
        "fail_on": args.fail_on, "out": args.out, "cluster": args.cluster,
        "max_reassignment_age": parse_duration(args.max_reassignment_age)
        if args.max_reassignment_age else None,
        "max_deletion_age": parse_duration(args.max_deletion_age)
        if args.max_deletion_age else None,
        "max_failovers": args.max_failovers, "max_restarts": args.max_restarts,
        "leader_imbalance_percentage": args.leader_imbalance_percentage, "top": args.top,
    }
    return options_from_config(args.config, **overrides)


def properties_of(config: str | None) -> Path | None:
    """The config file's `spark_conf` for a local run, found as the replay finds it."""
    return configured_properties(*load_config(config))


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    return run_job("audit", argv, audit, spark)


def audit(argv: list[str], spark: SparkSession | None) -> int:
    args = parse_args(argv)
    if args.tables is None:
        return refuse(args, "the following argument is required: --tables DIR (the replay's "
                      "--out)")
    # The run id names audit_checks' partition directory.
    problem = run_id_problem(args.run_id) or publish_problem(args.verdict_json, args.prometheus)
    if problem is not None:
        return refuse(args, problem)
    try:
        options = read_options(args)
        load_observed(options.observed)  # an unreadable file fails before Spark starts
    except (ValueError, FileNotFoundError, AuditInputError) as exc:
        return refuse(args, str(exc))
    whatif = variant_table(args.tables, ("run_summary", "partition_states"))
    if whatif is not None:  # its variants would be summed as one cluster
        return refuse(args, f"--tables {args.tables} is a what-if output (table {whatif!r} "
                      "has a 'variant' column): audit a replay's --out; the variants are "
                      "ranked in the what-if's own whatif_impact (jobs.report --whatif)")
    if spark is None:
        spark = build_session("kafka-controller-audit", master=args.master,
                              properties_file=properties_of(args.config))
    log.info(f"tables={args.tables} run_id={args.run_id} fail_on={options.fail_on} "
          f"out={options.out or args.tables}")
    result = run_audit(spark, args.tables, args.run_id, options)
    return publish_run(spark, args.tables, result, verdict_json=args.verdict_json,
                       prometheus=args.prometheus, cluster=options.cluster)


__all__ = ["main"]
