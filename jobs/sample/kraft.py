"""Simulate a KRaft cluster's metadata log (if not there yet), ingest it, replay it, audit
it and write its report (`make kraft-sample`).

    python -m jobs.sample.kraft --out DIR [--minutes 120] [--seed 1]

The history (`jobs.sim.kraft_history`): six brokers, three topics (one with a single
replica per partition, one with `min.insync.replicas` 2), a broker fenced and unfenced
every quarter of an hour, a controlled shutdown, a topic created and deleted, a quorum
leader change, and a NoOpRecord every 500 ms. The segments go to DIR/logs, the ingest to
DIR/ingest, the tables to DIR/tables, the report to DIR/report.html. As with `make run`,
the audit's verdict is printed, not acted on.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.common.exitcodes import BadInput, run_command

log = logging.getLogger(__name__)
RUN_ID = "sample"


def main(argv: list[str] | None = None) -> int:
    return run_job("kraft-sample", argv, kraft_sample)


def kraft_sample(argv: list[str], _spark: object) -> int:
    ap = command_parser("python -m jobs.sample.kraft", __doc__)
    ap.add_argument("--out", default="out/kraft", help="directory for logs/, ingest/, tables/")
    ap.add_argument("--minutes", type=int, default=120, help="the history's length")
    ap.add_argument("--seed", type=int, default=1, help="the simulator's seed")
    args = ap.parse_args(argv)
    if args.minutes < 30:
        raise BadInput("--minutes must be at least 30")

    from jobs.audit import options_from_config, run_audit
    from jobs.common.config import load_config
    from jobs.common.session import session_for_config
    from jobs.ingest.job import main as ingest_main
    from jobs.replay.job import main as replay_main
    from jobs.report import write_report
    from jobs.sim.kraft_history import simulate, write_log

    out = Path(args.out)
    logs, ingest, tables = out / "logs", out / "ingest", out / "tables"
    if logs.is_dir() and any(logs.rglob("*.log")):
        log.info(f"using the metadata log already in {logs}")
    else:
        counts = write_log(logs, simulate(args.minutes, seed=args.seed), args.minutes)
        log.info(f"simulated {args.minutes} minutes into {logs}: "
              f"{json.dumps(counts)}")
    cfg, cfg_path = load_config(None)
    spark = session_for_config(cfg, cfg_path, None)  # conf/spark/local.conf, as `make run`'s
    rc = ingest_main(["--logs", str(logs), "--out", str(ingest), "--cluster", "kraft-sample"],
                     spark=spark)
    if rc == 0:
        rc = replay_main(["--events", str(ingest), "--out", str(tables), "--run-id", RUN_ID],
                         spark=spark)
    if rc != 0:
        return rc
    run_audit(spark, str(tables), RUN_ID, options_from_config())
    report = write_report(str(tables), out / "report.html", RUN_ID, audit_dir=str(tables))
    log.info(f"report: {report.resolve()} (one self-contained HTML page)")
    return 0


if __name__ == "__main__":
    sys.exit(run_command("kraft-sample", main))
