"""The page: everything the template shows, gathered into one `Page`, rendered by Jinja2
(autoescape on; the inline SVG is the only markup passed through, and matplotlib escapes
the text inside it)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, NamedTuple

import jinja2
from markupsafe import Markup

from jobs.report import formats
from jobs.report.activity import REQUEST_TYPES, Group, RequestRow, Summary
from jobs.report.availability import Availability, OfflineAtEnd
from jobs.report.incidents import ChangeRow, Incidents, Loss
from jobs.report.plan_check import PlanCheckView
from jobs.report.timeline import StepSeries, TimeRange
from jobs.report.whatif import WhatIf


class Figures(NamedTuple):
    windows: str
    lanes: str
    requests: str | None
    whatif: str | None


class Page(NamedTuple):
    run_id: str
    summary: Summary
    offline_at_end: OfflineAtEnd
    incidents: Incidents | None  # None: tables written before the replay wrote incidents
    data_loss: list[Loss] | None  # None: likewise for `data_loss`
    changes: list[ChangeRow] | None  # None: likewise for `changes`
    span: TimeRange
    series: list[StepSeries]
    broker_events: int
    controller_elections: int
    availability: Availability
    findings: list[Group]
    audit: list[Group] | None
    verdict: str | None
    requests: list[RequestRow]
    whatif: WhatIf | None
    figures: Figures
    plan_check: PlanCheckView | None = None  # --plan-check: a plan checked before acting


def utc(micros: int | None) -> str:
    """"2026-01-01 00:11:24.348 UTC" (milliseconds; the log's own order is by seq)."""
    if micros is None:
        return "open"
    moment = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=micros)
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d} UTC"


def cell(value: Any) -> str:
    """A table cell: timestamps in UTC, lists as `[1, 2]`, null as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return utc(int((moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(
            microseconds=1)))
    if isinstance(value, float):
        return formats.seconds(value)  # the only floats the tables hold are seconds
    return str(value)


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("jobs.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["utc"] = utc
    env.filters["cell"] = cell
    env.filters["int"] = formats.count
    env.filters["count"] = formats.count
    env.filters["signed_count"] = formats.signed_count
    env.filters["seconds"] = formats.seconds
    env.filters["signed_seconds"] = formats.signed_seconds
    env.filters["exact"] = formats.exact
    return env


def render(page: Page) -> str:
    def trusted(svg: str | None) -> str | None:
        return None if svg is None else Markup(svg)

    shown = page.figures
    figures = Figures(Markup(shown.windows), Markup(shown.lanes), trusted(shown.requests),
                      trusted(shown.whatif))
    template = _environment().get_template("report.html.j2")
    return template.render(page=page._replace(figures=figures),
                           request_types=[name for name, _ in REQUEST_TYPES])


def write(page: Page, out_file: Path) -> Path:
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(render(page), encoding="utf-8")
    return out_file
