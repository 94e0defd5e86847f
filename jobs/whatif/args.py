"""The command line of `jobs.whatif` (a ZooKeeper-mode event log and a KRaft metadata log
alike: `jobs.whatif.job` picks the pipeline from what `--events` holds)."""

from __future__ import annotations

import argparse

from jobs.common.cli import command_parser
from jobs.common.config import DEFAULT_CONFIG

DESCRIPTION = """Replay a controller event log under edited histories ("what if broker 4 had
failed at 02:10?") and rank the variants by what they cost."""

PLAN_CHECK = """With --from-state OUT_DIR --plan PLAN.toml instead: check a maintenance plan
against the latest state of a replay's output, without replaying history (`jobs.whatif
--from-state OUT_DIR --plan PLAN.toml --help` shows its options and a worked example)."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = command_parser("jobs.whatif", DESCRIPTION, more=PLAN_CHECK)
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
                   "3.9 (a KRaft log: 3.3 to 4.x) (overrides config's "
                   "[kafka] kafka_version; default: the release jobs.ingest detected, else 3.7)")
    return p.parse_args(argv)


