"""Simulate the bundled sample log (if not there yet) and replay it locally (`make run`).

    python -m jobs.sample --out DIR [--preset sample] [--seed 1] [--buckets N]
        [--bad-rows RATE]

The sample (`jobs.sim`, preset `sample`): a few hundred partitions on 6 brokers with a
broker failure and restart, a controlled shutdown, a reassignment, a topic deletion and a
controller failover. The events go to DIR/events, the tables to DIR/tables; the replay
prints partitions by state, offline partitions and findings by kind, then the audit
(`jobs.audit.run_audit`, in the same Spark session) prints the post-mortem of the run and
its verdict. A FAIL verdict is shown, not acted on: this is a demonstration, and the sample
log is built to hold an outage or two.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from jobs.common.cli import command_parser
from jobs.common.command import run_job

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    return run_job("run", argv, sample)


def sample(argv: list[str], _spark: object) -> int:
    ap = command_parser("python -m jobs.sample", __doc__)
    ap.add_argument("--out", default="out", help="directory for events/ and tables/")
    ap.add_argument("--preset", default="sample", help="the simulated log's size (jobs.sim)")
    ap.add_argument("--seed", type=int, default=1, help="the simulator's seed")
    ap.add_argument("--buckets", type=int,
                    help="replay groups per cluster (default: conf/replay.toml's buckets)")
    ap.add_argument("--bad-rows", type=float, default=0.0,
                    help="rate of contract-breaking rows mixed into the simulated log")
    args = ap.parse_args(argv)

    from jobs.replay.job import main as replay_main
    from jobs.report import write_report
    from jobs.sim.cli import write_log

    out = Path(args.out)
    events = out / "events"
    if events.is_dir() and any(events.glob("*.parquet")):
        log.info(f"using the event log already in {events}")
    else:
        counts = write_log(str(events), preset=args.preset, seed=args.seed,
                           bad_rows=args.bad_rows)
        brief = {k: counts[k] for k in ("events", "partitions", "brokers", "files") if k in counts}
        log.info(f"simulated preset {args.preset!r} into {events}: {json.dumps(brief)}")
    replay_args = ["--events", str(events), "--out", str(out / "tables"), "--run-id", "sample"]
    if args.buckets:
        replay_args += ["--buckets", str(args.buckets)]
    rc = replay_main(replay_args)
    if rc == 0:
        log.info(f"tables: {out / 'tables'}/<table>/run_id=sample "
              "(read them with spark.read.parquet or pyarrow.dataset); the audit follows, "
              "its rows go to audit_checks")
        audit_sample(str(out / "tables"), "sample")
        report = write_report(str(out / "tables"), out / "report.html", "sample",
                              audit_dir=str(out / "tables"))
        log.info(f"report: {report.resolve()} (one self-contained HTML page)")
    return rc


def audit_sample(tables: str, run_id: str) -> None:
    """The audit of the sample run, in the replay's session (still active: `build_session`
    returns it). Its verdict is printed; `make run` does not fail on it."""
    from jobs.audit import options_from_config, run_audit
    from jobs.common.session import build_session

    spark = build_session("kafka-controller-replay")
    run_audit(spark, tables, run_id, options_from_config())

