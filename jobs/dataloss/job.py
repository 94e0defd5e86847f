"""Recompute a run's `data_loss` table with the brokers' offset lines given: what each
unclean leader election the run found lost (`jobs.engine.data_loss_table`; the replay writes
the table itself when the ingest's `offset_evidence` sits beside its events).

    .venv/bin/python -m jobs.dataloss --tables OUT --offset-evidence DIR [--run-id ID]

For when the evidence arrives later than the run: the old leader's truncation is logged
when it comes back, which may be in a later night's logs. No Spark: pyarrow reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import SparkSession

from jobs.common.command import run_job
from jobs.common.exitcodes import BadInput
from jobs.engine.data_loss_table import evidence_problem, write_data_loss
from jobs.store.filesystem import path_exists
from jobs.store.layout import partition_path


def parse_args(argv: Sequence[str] | None) -> Any:
    from jobs.common.cli import command_parser
    from jobs.store.latest_run import default_run_id

    p = command_parser("jobs.dataloss", __doc__)
    p.add_argument("--tables", required=True, help="the replay's output directory (--out)")
    p.add_argument("--run-id", help="the run whose unclean elections are judged (default: "
                   "the latest in --tables)")
    p.add_argument("--offset-evidence", required=True, metavar="DIR",
                   help="jobs.ingest's offset_evidence table of the brokers' logs")
    p.add_argument("--master", help="unused: the command needs no Spark (kept for scripts)")
    args = p.parse_args(list(argv) if argv is not None else None)
    if args.run_id is None:
        args.run_id = default_run_id(p, args.tables, "dataloss")
    return args


def main(argv: Sequence[str] | None = None, spark: SparkSession | None = None) -> int:
    """`python -m jobs.dataloss`: recompute one run's `data_loss` with the evidence given
    (exit 2: no such run, or evidence that is not an `offset_evidence` table). No Spark:
    the run's tables and the evidence are read with pyarrow."""
    return run_job("dataloss", None if argv is None else list(argv), dataloss, spark)


def dataloss(argv: list[str], _spark: object) -> int:
    args = parse_args(argv)
    if not path_exists(partition_path(args.tables, "findings", args.run_id)):
        raise BadInput(f"run {args.run_id} not found under {args.tables} (no findings/"
                       f"run_id={args.run_id})")
    problem = evidence_problem(args.offset_evidence)
    if problem is not None:
        raise BadInput(problem)
    write_data_loss(args.tables, args.run_id, args.offset_evidence)
    return 0
