"""The report's figures: matplotlib drawn to SVG text that goes inline into the page.

The bytes are deterministic: a fixed hash salt per figure (so two figures in one page never
share an element id), no date in the metadata, text kept as text (`svg.fonttype none`: no
glyph outlines, so smaller files), and the XML prologue, metadata block and namespace
attributes dropped, which an SVG inside HTML does not need (and which hold URLs)."""

from __future__ import annotations

import io
import re
from contextlib import AbstractContextManager
from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib import dates as mdates  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import PathPatch  # noqa: E402
from matplotlib.path import Path as MplPath  # noqa: E402

from jobs.report.activity import REQUEST_TYPES, RequestRow  # noqa: E402
from jobs.report.brokers import STATUSES, AxisEvent, Lane  # noqa: E402
from jobs.report.timeline import StepSeries, TimeRange  # noqa: E402
from jobs.report.whatif import Variant  # noqa: E402

WIDTH_INCHES = 12.0
# Both time-axis figures share these margins so the broker lanes sit under the plot.
TIME_AXIS_MARGINS = {"left": 0.12, "right": 0.98}
KIND_STYLE = {
    "offline": ("#c62828", "offline"),
    "under_min_isr": ("#ef6c00", "under min ISR"),
    "under_replicated": ("#1565c0", "under-replicated"),
}
STATUS_COLOURS = {"live": "#66bb6a", "shutting_down": "#ffa726", "dead": "#e53935"}
EVENT_STYLE: dict[str, tuple[str, Any, str]] = {
    "broker_failure": ("#b71c1c", "--", "broker failure"),
    "controlled_shutdown": ("#e65100", ":", "controlled shutdown"),
    "broker_startup": ("#2e7d32", "-.", "broker startup"),
    "controller_failover": ("#6a1b9a", "-", "controller election"),
}
# Events closer than one of these slices of the span are drawn as one line.
MARKER_SLICES = 1200
REQUEST_COLOURS = ("#3949ab", "#00897b", "#8d6e63")
RC: dict[str, Any] = {"svg.fonttype": "none", "font.size": 10.0, "font.family": "sans-serif",
      "axes.spines.top": False, "axes.spines.right": False}
_PROLOGUE = re.compile(r"\A.*?(?=<svg)", re.DOTALL)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)
_NAMESPACES = re.compile(r'\s+xmlns(?::xlink)?="[^"]*"')


def _style(extra: dict[str, Any] | None = None) -> AbstractContextManager[None]:
    # matplotlib types rc keys as literals; the settings are the fixed RC above.
    settings: Any = {**RC, **(extra or {})}
    context: AbstractContextManager[None] = matplotlib.rc_context(settings)
    return context


def to_svg(fig: Figure, salt: str) -> str:
    buffer = io.StringIO()
    with _style({"svg.hashsalt": salt}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = _PROLOGUE.sub("", buffer.getvalue(), count=1)
    text = _METADATA.sub("", text, count=1)
    return _NAMESPACES.sub("", text.split(">", 1)[0]) + ">" + text.split(">", 1)[1]


def _times(micros: np.ndarray) -> np.ndarray:
    return micros.astype("datetime64[us]")


def _time_axis(ax: Axes, span: TimeRange) -> None:
    end = span.end if span.end > span.start else span.start + 1_000_000
    limits: Any = _times(np.array([span.start, end], dtype=np.int64))
    ax.set_xlim(limits[0], limits[1])
    dates: Any = mdates  # the date locators carry no type annotations
    locator = dates.AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(dates.ConciseDateFormatter(locator))


def _figure(height: float) -> Figure:
    with _style():
        return Figure(figsize=(WIDTH_INCHES, height))


def _step(ax: Axes, series: StepSeries, span: TimeRange) -> None:
    colour, label = KIND_STYLE[series.kind]
    times = np.concatenate([[span.start], series.times, [span.end]]).astype(np.int64)
    counts = np.concatenate([[0], series.counts, series.counts[-1:] if len(series.counts)
                             else [0]]).astype(np.int64)
    ax.step(_times(times), counts, where="post", color=colour,
            linewidth={"offline": 1.4, "under_min_isr": 3.2}.get(series.kind, 1.2),
            alpha=0.55 if series.kind == "under_min_isr" else 1.0,
            label=f"{label} (peak {series.peak:,})")


def _date_numbers(micros: np.ndarray) -> np.ndarray:
    dates: Any = mdates  # the date helpers carry no type annotations
    numbers: np.ndarray = np.asarray(dates.date2num(_times(micros)), dtype=np.float64)
    return numbers


def _markers(ax: Axes, events: list[AxisEvent], span: TimeRange) -> None:
    """One line per kind of event, through every event of that kind (one SVG path however
    many events); events closer than one of MARKER_SLICES of the span share a line."""
    length = max(span.end - span.start, 1)
    for kind, (colour, style, label) in EVENT_STYLE.items():
        times = np.array([e.ts for e in events if e.kind == kind], dtype=np.int64)
        if not len(times):
            continue
        slices = np.unique((times - span.start) * MARKER_SLICES // length)
        drawn = _date_numbers(span.start + slices * length // MARKER_SLICES)
        xs = np.repeat(drawn, 3)
        ys = np.tile([0.0, 1.0, np.nan], len(drawn))
        xs[2::3] = np.nan
        ax.plot(xs, ys, transform=ax.get_xaxis_transform(), color=colour, linestyle=style,
                linewidth=0.9, alpha=0.75, label=f"{label} ({len(times):,})")


def windows_figure(series: list[StepSeries], events: list[AxisEvent], span: TimeRange) -> str:
    """Partitions in an open window of each kind over time, broker and controller events
    marked on the time axis: offline and under min ISR above, under-replicated (usually
    far more partitions) in its own panel below, both on one time axis."""
    by_kind = {s.kind: s for s in series}
    with _style():
        fig = _figure(5.4)
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
        for ax, kinds in ((top, ("under_min_isr", "offline")), (bottom, ("under_replicated",))):
            for kind in kinds:
                if kind in by_kind:
                    _step(ax, by_kind[kind], span)
            _markers(ax, events, span)
            ax.set_ylabel("partitions")
            ax.set_ylim(bottom=0, top=max([by_kind[k].peak for k in kinds if k in by_kind]
                                          + [1]) * 1.08)
        _time_axis(bottom, span)
        handles, labels = top.get_legend_handles_labels()
        more, more_labels = bottom.get_legend_handles_labels()
        top.legend(handles + more[:1], labels + more_labels[:1], loc="upper left",
                   bbox_to_anchor=(0.0, -0.02 - 2 / 3 - 0.33), ncol=4, frameon=False, fontsize=9)
        fig.subplots_adjust(top=0.97, bottom=0.24, hspace=0.08, **TIME_AXIS_MARGINS)
        return to_svg(fig, "windows")


def lanes_figure(lanes: list[Lane], span: TimeRange) -> str:
    """One lane per broker: live, shutting down and dead intervals on the same time axis."""
    with _style():
        height = 0.9 + 0.28 * max(len(lanes), 1)
        fig = _figure(height)
        ax = fig.add_subplot()
        for status in STATUSES:
            _status_bars(ax, lanes, status)
        ax.set_yticks(range(len(lanes)), [lane.label for lane in lanes])
        ax.set_ylim(len(lanes) - 0.5, -0.5)
        _time_axis(ax, span)
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3, frameon=False,
                  fontsize=9)
        fig.subplots_adjust(top=1 - 0.35 / height, bottom=0.45 / height, **TIME_AXIS_MARGINS)
        return to_svg(fig, "lanes")


def _status_bars(ax: Axes, lanes: list[Lane], status: str) -> None:
    """Every lane's bars of one status as one compound path (one SVG element, a few bytes
    per bar), so a page with many brokers and many short outages stays small."""
    corners = []
    for row, lane in enumerate(lanes):
        for bar in lane.bars:
            if bar.status == status:
                left, right = _date_numbers(np.array([bar.start, bar.end], dtype=np.int64))
                low, high = row - 0.38, row + 0.38
                corners.append([(left, low), (right, low), (right, high), (left, high)])
    if corners:
        path = MplPath.make_compound_path_from_polys(np.array(corners, dtype=np.float64))
        ax.add_patch(PathPatch(path, facecolor=STATUS_COLOURS[status], edgecolor="none",
                               label=status.replace("_", " ")))


def requests_figure(rows: list[RequestRow]) -> str:
    """Requests each broker was sent, stacked by type."""
    with _style():
        height = 1.2 + 0.28 * max(len(rows), 1)
        fig = _figure(height)
        ax = fig.add_subplot()
        left = np.zeros(len(rows), dtype=np.int64)
        for index, (name, _) in enumerate(REQUEST_TYPES):
            widths = np.array([r.counts[index] for r in rows], dtype=np.int64)
            ax.barh(range(len(rows)), widths, left=left, color=REQUEST_COLOURS[index],
                    label=name, height=0.7)
            left += widths
        ax.set_yticks(range(len(rows)), [r.broker for r in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlabel("requests (partition updates)")
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3, frameon=False)
        fig.subplots_adjust(top=1 - 0.4 / height, bottom=0.55 / height, **TIME_AXIS_MARGINS)
        return to_svg(fig, "requests")


def whatif_figure(variants: list[Variant]) -> str:
    """Offline partition-seconds and unclean elections per variant; a black tick marks the
    baseline's value on each bar."""
    labels = [v.name if len({x.cluster for x in variants}) == 1 else f"{v.cluster} · {v.name}"
              for v in variants]
    with _style():
        height = 1.3 + 0.3 * max(len(variants), 1)
        fig = _figure(height)
        panels = fig.subplots(1, 2, sharey=True)
        values = (([v.offline_seconds for v in variants],
                   [v.baseline_offline_seconds for v in variants], "offline partition-seconds"),
                  ([v.unclean_elections for v in variants],
                   [v.baseline_unclean_elections for v in variants], "unclean elections"))
        for ax, (value, baseline, title), colour in zip(panels, values, ("#c62828", "#6a1b9a"),
                                                        strict=True):
            ax.barh(range(len(variants)), value, color=colour, height=0.6)
            ax.scatter(baseline, range(len(variants)), marker="|", s=260, color="black",
                       label="baseline", zorder=3)
            ax.set_xlabel(title)
        panels[0].set_yticks(range(len(variants)), labels)
        panels[0].set_ylim(len(variants) - 0.5, -0.5)
        panels[0].legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), frameon=False)
        fig.subplots_adjust(top=1 - 0.4 / height, bottom=0.6 / height, wspace=0.08,
                            **TIME_AXIS_MARGINS)
        return to_svg(fig, "whatif")
