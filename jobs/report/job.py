"""Write one self-contained HTML page over a replay's tables, its audit and a what-if.

    python -m jobs.report --tables DIR [--run-id ID] [--audit DIR] [--whatif DIR] --out FILE

--tables is the replay's --out (`run_summary/`, `partition_windows/`, `broker_timeline/`,
`controller_timeline/`, `findings/` and the three request tables, partitioned by run_id; the
newest run in run_summary unless --run-id); --audit the audit's --out (`audit_checks/`);
--whatif the what-if's --out (`whatif_impact/`, `whatif_partition_diff/`). The page
(docs/report.md) opens from disk with no network: its style and its figures (inline SVG)
are inside it, and the same inputs give the same bytes. A missing or unreadable input
exits 2 with one line.

Stages: extract and aggregate (`jobs.report.timeline`, `brokers`, `availability`,
`activity`, `whatif`: pyarrow, one run's rows, needed columns only, large tables folded
batch by batch) -> draw (`jobs.report.figures`) -> render (`jobs.report.page`, Jinja2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from jobs.common.cli import command_parser
from jobs.report import activity, availability, brokers, figures, timeline
from jobs.report.page import Figures, Page, write
from jobs.report.tables import ReportInputError, newest_run_id, open_table
from jobs.report.whatif import whatif

# Fixed sizes keep the page small whatever the log: steps per series, slices per broker
# lane (about one per pixel of the figure), rows per table.
MAX_POINTS = 2000
LANE_SLICES = 1200
TOP_ROWS = 20
FIRST_ROWS = 5
DIFF_ROWS = 50


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
    list[brokers.AxisEvent], int,
]:
    span = timeline.log_time_range(tables_dir, run_id)
    windows = timeline.read_windows(tables_dir, run_id)
    series = [timeline.window_series(windows, kind) for kind in timeline.PLOTTED_KINDS]
    intervals = brokers.read_intervals(tables_dir, run_id)
    elections = brokers.controller_events(tables_dir, run_id)
    events = sorted(brokers.broker_events(intervals) + elections)
    return span, series, intervals, events, len(elections)


def build_page(
    tables_dir: Path, run_id: str, audit_dir: Path | None, whatif_dir: Path | None
) -> Page:
    span, series, intervals, events, elections = _timeline(tables_dir, run_id)
    requests = activity.requests_per_broker(tables_dir, run_id, intervals)
    audit = None if audit_dir is None else activity.audit_checks(audit_dir, run_id, FIRST_ROWS)
    impact = None if whatif_dir is None else whatif(whatif_dir, run_id, DIFF_ROWS)
    drawn = Figures(
        windows=figures.windows_figure(
            [timeline.resample(s, span, MAX_POINTS) for s in series], events, span),
        lanes=figures.lanes_figure(brokers.broker_lanes(intervals, span, LANE_SLICES), span),
        requests=figures.requests_figure(requests) if requests else None,
        whatif=figures.whatif_figure(impact.variants) if impact and impact.variants else None,
    )
    return Page(
        run_id=run_id,
        summary=activity.run_summary(tables_dir, run_id),
        span=span,
        series=series,
        broker_events=len(events) - elections,
        controller_elections=elections,
        availability=availability.availability(tables_dir, run_id, span, TOP_ROWS),
        findings=activity.findings(tables_dir, run_id, FIRST_ROWS),
        audit=audit,
        verdict=None if audit is None else activity.verdict(audit),
        requests=requests,
        whatif=impact,
        figures=drawn,
    )


def write_report(
    tables_dir: str | Path,
    out_file: str | Path,
    run_id: str | None = None,
    audit_dir: str | Path | None = None,
    whatif_dir: str | Path | None = None,
) -> Path:
    """Write the report of one run (default: the newest in run_summary) to `out_file`.
    Raises ReportInputError for a missing or unreadable input."""
    tables = Path(tables_dir)
    run = _run_id(tables, run_id)
    page = build_page(tables, run, None if audit_dir is None else Path(audit_dir),
                      None if whatif_dir is None else Path(whatif_dir))
    return write(page, Path(out_file))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = command_parser("python -m jobs.report", __doc__)
    ap.add_argument("--tables", required=True, help="the replay's --out")
    ap.add_argument("--run-id", help="the run to show (default: the newest in run_summary)")
    ap.add_argument("--audit", help="the audit's --out (audit_checks/)")
    ap.add_argument("--whatif", help="the what-if's --out (whatif_impact/, ...)")
    ap.add_argument("--out", required=True, help="the HTML file to write")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        out = write_report(args.tables, args.out, args.run_id, args.audit, args.whatif)
    except ReportInputError as error:
        print(f"report: {(str(error).splitlines() or ['error'])[0]}", file=sys.stderr)
        return 2
    print(f"[report] {out} ({out.stat().st_size:,} bytes)")
    return 0
