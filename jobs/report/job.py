"""Write one self-contained HTML page over a replay's tables, its audit and a what-if.

    python -m jobs.report --tables DIR [--run-id ID] [--audit DIR]
        [--whatif DIR [--whatif-run-id ID]] [--plan-check DIR [--plan-check-run-id ID]]
        --out FILE

--tables is the replay's --out (`run_summary/`, `incidents/`, `data_loss/`, `changes/`,
`partition_windows/`, `broker_timeline/`, `controller_timeline/`, `findings/` and the three
request tables, partitioned by run_id; the newest run in run_summary unless --run-id);
--audit the audit's --out (`audit_checks/`);
--whatif the what-if's --out (`whatif_impact/`, `whatif_partition_diff/`; its latest run
unless --whatif-run-id, whatever the replay's run id); --plan-check the --out of a
`jobs.whatif --from-state --plan` (`plan_check/`; the run written last unless
--plan-check-run-id). A what-if output passed as --tables
(its tables have a `variant` column) is refused: the page would add its variants up. The page
(docs/report.md) opens from disk with no network: its style and its figures (inline SVG)
are inside it, and the same inputs give the same bytes. A missing or unreadable input
exits 2 with one line.

Stages: extract and aggregate (`jobs.report.timeline`, `brokers`, `availability`,
`activity`, `whatif`: pyarrow, one run's rows, needed columns only, large tables folded
batch by batch) -> draw (`jobs.report.figures`) -> render (`jobs.report.page`, Jinja2).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.engine.change_digest import CHANGES
from jobs.report import activity, availability, brokers, figures, timeline
from jobs.report.incidents import changes, incidents, losses
from jobs.report.page import Figures, Page, write
from jobs.report.plan_check import plan_check, plan_check_run
from jobs.report.tables import (
    ReportInputError,
    latest_run_id,
    newest_run_id,
    open_table,
    refuse_variants,
)
from jobs.report.whatif import whatif

# Fixed sizes keep the page small whatever the log: steps per series, slices per broker
# lane (about one per pixel of the figure), rows per table.
MAX_POINTS = 2000
LANE_SLICES = 1200
TOP_ROWS = 20
FIRST_ROWS = 5
DIFF_ROWS = 50
# Every replay table the page reads (partition_states only when run_summary has no
# partitions_by_state): none may hold a what-if's `variant` column.
REPLAY_TABLES: tuple[str, ...] = (
    "run_summary", "partition_windows", "broker_timeline", "controller_timeline", "findings",
    "state_changes", "leader_and_isr_requests", "update_metadata_requests",
    "stop_replica_requests", "partition_states", "incidents", "changes", "data_loss",
)


def _run_id(tables_dir: Path, run_id: str | None) -> str:
    summary = open_table(tables_dir, "run_summary")
    if run_id is None:
        return newest_run_id(summary)
    found = summary.to_table(columns=["run_id"]).column("run_id").to_pylist()
    if run_id not in found:
        raise ReportInputError(f"run {run_id!r} is not in {tables_dir / 'run_summary'}")
    return run_id


def _timeline(tables_dir: Path, run_id: str) -> tuple[
    timeline.TimeRange, list[timeline.StepSeries], list[brokers.Interval],
    list[brokers.Election], list[brokers.AxisEvent],
]:
    span = timeline.log_time_range(tables_dir, run_id)
    windows = timeline.read_windows(tables_dir, run_id)
    series = [timeline.window_series(windows, kind) for kind in timeline.PLOTTED_KINDS]
    intervals = brokers.read_intervals(tables_dir, run_id)
    elections = brokers.read_elections(tables_dir, run_id)
    events = sorted(brokers.broker_events(intervals) + brokers.controller_events(elections))
    return span, series, intervals, elections, events


def build_page(tables_dir: Path, run_id: str, audit_dir: Path | None,
               whatif_source: tuple[Path, str] | None) -> Page:
    span, series, intervals, elections, events = _timeline(tables_dir, run_id)
    requests = activity.requests_per_broker(tables_dir, run_id, intervals)
    audit = None if audit_dir is None else activity.audit_checks(audit_dir, run_id, FIRST_ROWS)
    impact = None if whatif_source is None else whatif(*whatif_source, DIFF_ROWS)
    lanes = brokers.broker_lanes(intervals, span, LANE_SLICES)
    drawn = Figures(
        windows=figures.windows_figure(
            [timeline.resample(s, span, MAX_POINTS) for s in series], events, span),
        lanes=figures.lanes_figure(
            lanes, brokers.controller_lanes(elections, span, LANE_SLICES), span),
        requests=figures.requests_figure(requests) if requests else None,
        whatif=figures.whatif_figure(impact.variants) if impact and impact.variants else None,
    )
    lost = losses(tables_dir, run_id)
    return Page(
        run_id=run_id,
        summary=activity.run_summary(tables_dir, run_id),
        offline_at_end=availability.offline_at_end(tables_dir, run_id),
        incidents=incidents(tables_dir, run_id, TOP_ROWS, lost),
        data_loss=lost,
        changes=changes(tables_dir, run_id, CHANGES),
        span=span,
        series=series,
        broker_events=len(events) - len(elections),
        controller_elections=len(elections),
        availability=availability.availability(tables_dir, run_id, span, TOP_ROWS),
        findings=activity.findings(tables_dir, run_id, FIRST_ROWS),
        audit=audit,
        verdict=None if audit is None else activity.verdict(audit),
        requests=requests,
        whatif=impact,
        figures=drawn,
    )


def _refuse_whatif_outputs(tables: Path, audit_dir: Path | None) -> None:
    """A what-if output holds every variant's rows: read as --tables (or an audit of it as
    --audit), the page would add the variants up as one cluster."""
    refuse_variants(tables, REPLAY_TABLES, "--tables",
                    "pass it as --whatif, and the replay's tables as --tables")
    if audit_dir is not None:
        refuse_variants(audit_dir, ("audit_checks",), "--audit",
                        "pass the replay's audit as --audit")


def write_report(
    tables_dir: str | Path,
    out_file: str | Path,
    run_id: str | None = None,
    audit_dir: str | Path | None = None,
    whatif_dir: str | Path | None = None,
    whatif_run_id: str | None = None,
    plan_check_dir: str | Path | None = None,
    plan_check_run_id: str | None = None,
) -> Path:
    """Write the report of one run (default: the newest in run_summary) to `out_file`, with
    the what-if's run `whatif_run_id` (default: its latest, whatever the replay's run id).
    Raises ReportInputError for a missing or unreadable input, or a what-if output passed
    as the replay's tables."""
    tables = Path(tables_dir)
    audit = None if audit_dir is None else Path(audit_dir)
    _refuse_whatif_outputs(tables, audit)
    run = _run_id(tables, run_id)
    source = None if whatif_dir is None else _whatif_run(Path(whatif_dir), whatif_run_id)
    page = build_page(tables, run, audit, source)
    if plan_check_dir is not None:
        root = Path(plan_check_dir)
        page = page._replace(plan_check=plan_check(
            root, plan_check_run(root, plan_check_run_id), DIFF_ROWS))
    return write(page, Path(out_file))


def _whatif_run(whatif_dir: Path, run_id: str | None) -> tuple[Path, str]:
    if run_id is None:
        return whatif_dir, latest_run_id(whatif_dir, "whatif_impact")
    found = open_table(whatif_dir, "whatif_impact").to_table(columns=["run_id"])
    if run_id not in found.column("run_id").to_pylist():
        raise ReportInputError(f"what-if run {run_id!r} is not in {whatif_dir / 'whatif_impact'}")
    return whatif_dir, run_id


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = command_parser("python -m jobs.report", __doc__)
    ap.add_argument("--tables", required=True, help="the replay's --out")
    ap.add_argument("--run-id", help="the run to show (default: the newest in run_summary)")
    ap.add_argument("--audit", help="the audit's --out (audit_checks/)")
    ap.add_argument("--whatif", help="the what-if's --out (whatif_impact/, ...)")
    ap.add_argument("--whatif-run-id",
                    help="the what-if run to show (default: its latest, by run_summary)")
    ap.add_argument("--plan-check", help="a plan check's --out (plan_check/)")
    ap.add_argument("--plan-check-run-id",
                    help="the plan check run to show (default: the one written last)")
    ap.add_argument("--out", required=True, help="the HTML file to write")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return run_job("report", None if argv is None else list(argv), report)


def report(argv: list[str], _spark: object) -> int:
    args = parse_args(argv)
    if args.whatif_run_id is not None and args.whatif is None:
        raise ReportInputError("--whatif-run-id needs --whatif")
    if args.plan_check_run_id is not None and args.plan_check is None:
        raise ReportInputError("--plan-check-run-id needs --plan-check")
    try:
        out = write_report(args.tables, args.out, args.run_id, args.audit, args.whatif,
                           args.whatif_run_id, args.plan_check, args.plan_check_run_id)
    except ReportInputError as error:  # a message may quote a file's lines: the first
        raise ReportInputError((str(error).splitlines() or ["error"])[0]) from None
    print(f"[report] {out} ({out.stat().st_size:,} bytes)")
    return 0
