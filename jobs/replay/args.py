"""The command line of `jobs.replay` (ZooKeeper-mode event logs and KRaft metadata logs
alike: `jobs.replay.job` picks the pipeline from what `--events` holds)."""

from __future__ import annotations

import argparse

from jobs.common.config import DEFAULT_CONFIG

DESCRIPTION = """Replay a controller event log with Spark and write the state, request and finding
tables (a KRaft metadata log written by jobs.ingest is folded into the same tables)."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from jobs.common.cli import command_parser
    from jobs.common.exitcodes import CHECK_FAILED, CHECKPOINT_BUSY

    p = command_parser("jobs.replay", DESCRIPTION, codes=(CHECK_FAILED, CHECKPOINT_BUSY))
    p.add_argument("--events", required=True, help="directory of event-log Parquet files")
    p.add_argument("--out", required=True, help="directory of the output tables")
    p.add_argument("--checkpoint", help="checkpoint directory; resumes when it exists "
                   "(default: a temporary one, a full replay)")
    p.add_argument("--run-id", help="run identifier (default: UTC timestamp)")
    p.add_argument("--config", help=f"job settings TOML (default: {DEFAULT_CONFIG})")
    p.add_argument("--buckets", type=int, help="replay groups per cluster (overrides config)")
    p.add_argument("--kraft-fold", choices=("driver", "executors"), default="executors",
                   help="a KRaft log: fold it by (cluster, topic bucket) in Spark tasks "
                   "(--buckets of them, default: the session's parallelism), or each "
                   "cluster whole on the driver; the same tables (default: executors)")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    p.add_argument("--initial-state", nargs="+", default=[], metavar="FILE",
                   help="kafka-topics --describe output or ZooKeeper dumps: the partitions "
                   "that existed before the log, seeded before this run's first event")
    p.add_argument("--audit", action="store_true",
                   help="audit the run in the same session (jobs.audit); its verdict is "
                        "the exit code: 0 pass, 1 a check at or above --fail-on")
    p.add_argument("--fail-on", choices=("critical", "warning", "never"),
                   help="with --audit: the severity that fails the run (default: critical)")
    p.add_argument("--observed", nargs="+", default=(),
                   help="with --audit: kafka-topics --describe or ZooKeeper dump files")
    p.add_argument("--rebuild", action="store_true",
                   help="with --checkpoint: replay the whole log (late rows included) into a "
                        "new generation of the checkpoint, swapped in once the run commits; "
                        "its tables supersede the earlier runs'")
    p.add_argument("--verdict-json", metavar="FILE", help="with --audit: write the verdict, "
                   "the rows of every check and the run's key figures to FILE (local)")
    p.add_argument("--prometheus", metavar="FILE.prom", help="with --audit: the same as a "
                   "node_exporter textfile (local)")
    p.add_argument("--kafka-version", help="Kafka release line replayed, X.Y from 0.8 to "
                   "3.9; a KRaft log 3.3 to 4.x (default: the one jobs.ingest detected and "
                   "recorded in --events, else config's [kafka] kafka_version, else 3.7)")
    p.add_argument("--offset-evidence", metavar="DIR", help="jobs.ingest's offset_evidence "
                   "table, what the brokers' server.log say of offsets, for data_loss "
                   "(default: the one beside --events, if any)")
    return p.parse_args(argv)


