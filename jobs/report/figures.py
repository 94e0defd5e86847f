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
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import PathPatch  # noqa: E402
from matplotlib.path import Path as MplPath  # noqa: E402
from matplotlib.ticker import MaxNLocator, StrMethodFormatter  # noqa: E402

from jobs.report.activity import REQUEST_TYPES, RequestRow  # noqa: E402
from jobs.report.brokers import (  # noqa: E402
    STATUSES,
    AxisEvent,
    ControllerBar,
    ControllerLane,
    Lane,
)
from jobs.report.timeline import StepSeries, TimeRange  # noqa: E402
from jobs.report.whatif import Variant  # noqa: E402

WIDTH_INCHES = 12.0
# Both time-axis figures share these margins so the broker lanes sit under the plot.
TIME_AXIS_MARGINS = {"left": 0.12, "right": 0.98}
# (colour, line style, width, legend label): offline is drawn first, thick and solid;
# under min ISR (usually the same partitions, and more) dashed on top of it, so a line
# equal to offline still shows.
KIND_STYLE: dict[str, tuple[str, Any, float, str]] = {
    "offline": ("#c62828", "-", 2.6, "offline"),
    "under_min_isr": ("#212121", (0, (4, 3)), 1.4, "under min ISR"),
    "under_replicated": ("#1565c0", "-", 1.3, "under-replicated"),
}
STATUS_COLOURS = {"live": "#66bb6a", "shutting_down": "#ffa726", "dead": "#e53935"}
# (colour, line style, marker, legend label), in drawing order: controlled shutdowns last,
# on top of the failure that usually follows them within a second.
EVENT_STYLE: dict[str, tuple[str, Any, str, str]] = {
    "broker_failure": ("#b71c1c", "--", "x", "broker failure"),
    "broker_startup": ("#2e7d32", "-.", "^", "broker startup"),
    "controller_failover": ("#455a64", "-", "D", "controller election"),
    "controlled_shutdown": ("#e65100", ":", "v", "controlled shutdown"),
}
# Each kind of event has its own row of symbols above the upper panel's data (axes
# fractions), so two kinds at the same instant both show.
SYMBOL_ROWS = {"broker_failure": 0.95, "controlled_shutdown": 0.89, "broker_startup": 0.83,
               "controller_failover": 0.77}
# The upper panel's y limit is the peak times this, leaving the symbol rows above the data.
SYMBOL_HEADROOM = 1.35
# The controller lane: each term coloured by its broker; a term at least this fraction of
# the span wide is labelled with the broker (and its epoch from twice that).
CONTROLLER_COLOURS = ("#1565c0", "#6a1b9a", "#00838f", "#5d4037", "#ad1457", "#37474f",
                      "#827717", "#0277bd")
LABEL_FRACTION = 0.06
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
    colour, style, width, label = KIND_STYLE[series.kind]
    times = np.concatenate([[span.start], series.times, [span.end]]).astype(np.int64)
    counts = np.concatenate([[0], series.counts, series.counts[-1:] if len(series.counts)
                             else [0]]).astype(np.int64)
    ax.step(_times(times), counts, where="post", color=colour, linestyle=style,
            linewidth=width, zorder=2 + list(KIND_STYLE).index(series.kind),
            gid=f"series-{series.kind}", label=f"{label} (peak {series.peak:,})")


def _date_numbers(micros: np.ndarray) -> np.ndarray:
    dates: Any = mdates  # the date helpers carry no type annotations
    numbers: np.ndarray = np.asarray(dates.date2num(_times(micros)), dtype=np.float64)
    return numbers


def _marker_times(events: list[AxisEvent], kind: str, span: TimeRange) -> tuple[int, Any]:
    """How many events of `kind`, and the distinct slices (of MARKER_SLICES) they fall in,
    as matplotlib date numbers."""
    length = max(span.end - span.start, 1)
    times = np.array([e.ts for e in events if e.kind == kind], dtype=np.int64)
    slices = np.unique((times - span.start) * MARKER_SLICES // length)
    return len(times), _date_numbers(span.start + slices * length // MARKER_SLICES)


def _markers(ax: Axes, events: list[AxisEvent], span: TimeRange, panel: int) -> None:
    """One line per kind of event, through every event of that kind (one SVG path however
    many events), and in the upper panel (0) a row of that kind's symbol above the data; events
    closer than one of MARKER_SLICES of the span share a line and a symbol."""
    for order, (kind, (colour, style, marker, _)) in enumerate(EVENT_STYLE.items()):
        found, drawn = _marker_times(events, kind, span)
        if not found:
            continue
        xs = np.repeat(drawn, 3)
        ys = np.tile([0.0, 1.0, np.nan], len(drawn))
        xs[2::3] = np.nan
        ax.plot(xs, ys, transform=ax.get_xaxis_transform(), color=colour, linestyle=style,
                linewidth=1.0, alpha=0.8, zorder=5 + order, gid=f"events-{panel}-{kind}")
        if panel == 0:
            ax.plot(drawn, np.full(len(drawn), SYMBOL_ROWS[kind]),
                    transform=ax.get_xaxis_transform(), linestyle="none", marker=marker,
                    markersize=5, color=colour, markeredgewidth=1.2, zorder=9 + order,
                    clip_on=False, gid=f"symbols-{kind}")


def _legend_handles(series: list[StepSeries], events: list[AxisEvent],
                    span: TimeRange) -> tuple[list[Line2D], list[str]]:
    handles, labels = [], []
    for s in series:
        colour, style, width, label = KIND_STYLE[s.kind]
        handles.append(Line2D([], [], color=colour, linestyle=style, linewidth=width))
        labels.append(f"{label} (peak {s.peak:,})")
    for kind, (colour, style, marker, label) in EVENT_STYLE.items():
        found, _ = _marker_times(events, kind, span)
        if found:
            handles.append(Line2D([], [], color=colour, linestyle=style, marker=marker,
                                  markersize=5, linewidth=1.0))
            labels.append(f"{label} ({found:,})")
    return handles, labels


PANELS = (
    (("offline", "under_min_isr"), "Offline and under-min-ISR partitions",
     "partitions offline\nor under min ISR"),
    (("under_replicated",), "Under-replicated partitions", "partitions\nunder-replicated"),
)


def windows_figure(series: list[StepSeries], events: list[AxisEvent], span: TimeRange) -> str:
    """Partitions in an open window of each kind over time, broker and controller events
    marked on the time axis: offline and under min ISR in the upper panel (under min ISR
    dashed on top), under-replicated (usually far more partitions) in its own panel below,
    both on one time axis; the upper panel carries a row of symbols per kind of event."""
    by_kind = {s.kind: s for s in series}
    with _style():
        fig = _figure(6.4)
        axes = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
        for panel, (ax, (kinds, title, ylabel)) in enumerate(zip(axes, PANELS, strict=True)):
            for kind in kinds:
                if kind in by_kind:
                    _step(ax, by_kind[kind], span)
            upper = panel == 0
            _markers(ax, events, span, panel)
            ax.set_title(title, loc="left", fontsize=11, fontweight="bold")
            ax.set_ylabel(ylabel)
            peak = max([by_kind[k].peak for k in kinds if k in by_kind] + [1])
            ax.set_ylim(bottom=0, top=peak * (SYMBOL_HEADROOM if upper else 1.08))
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        _time_axis(axes[1], span)
        handles, labels = _legend_handles(series, events, span)
        fig.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.06, 0.0), ncol=4,
                   frameon=False, fontsize=9)
        fig.subplots_adjust(top=0.95, bottom=0.2, hspace=0.3, **TIME_AXIS_MARGINS)
        return to_svg(fig, "windows")


def lanes_figure(lanes: list[Lane], controllers: list[ControllerLane],
                 span: TimeRange) -> str:
    """The controller lane(s) on top (who was controller when), then one lane per broker:
    live, shutting down and dead intervals, all on the windows figure's time axis."""
    with _style():
        rows = len(controllers) + len(lanes)
        height = 0.9 + 0.28 * max(rows, 1)
        fig = _figure(height)
        ax = fig.add_subplot()
        for row, lane in enumerate(controllers):
            _controller_bars(ax, row, lane, span)
        for status in STATUSES:
            _status_bars(ax, lanes, status, len(controllers))
        if controllers and lanes:
            ax.axhline(len(controllers) - 0.5, color="#57606a", linewidth=0.8)
        ax.set_yticks(range(rows), [c.label for c in controllers] + [b.label for b in lanes])
        ax.set_ylim(rows - 0.5, -0.5)
        _time_axis(ax, span)
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3, frameon=False,
                  fontsize=9)
        fig.subplots_adjust(top=1 - 0.35 / height, bottom=0.45 / height, **TIME_AXIS_MARGINS)
        return to_svg(fig, "lanes")


def _box(row: int, start: int, end: int) -> list[tuple[float, float]]:
    left, right = _date_numbers(np.array([start, end], dtype=np.int64))
    low, high = row - 0.38, row + 0.38
    return [(left, low), (right, low), (right, high), (left, high)]


def _controller_bars(ax: Axes, row: int, lane: ControllerLane, span: TimeRange) -> None:
    """A lane's terms, one compound path per controller (its colour); a term wide enough
    is labelled "broker 3" ("broker 3, epoch 2" when wider)."""
    by_broker: dict[int | None, list[ControllerBar]] = {}
    for bar in lane.bars:
        by_broker.setdefault(bar.controller_id, []).append(bar)
    for broker, bars in sorted(by_broker.items(), key=lambda item: (item[0] is None,
                                                                     item[0] or 0)):
        colour = "#9e9e9e" if broker is None else CONTROLLER_COLOURS[
            broker % len(CONTROLLER_COLOURS)]
        corners = np.array([_box(row, b.start, b.end) for b in bars], dtype=np.float64)
        path = MplPath.make_compound_path_from_polys(corners)
        ax.add_patch(PathPatch(path, facecolor=colour, edgecolor="white", linewidth=0.6,
                               gid=f"controller-lane-{row}-broker-{broker}"))
    length = max(span.end - span.start, 1)
    for bar in lane.bars:
        share = (bar.end - bar.start) / length
        if share < LABEL_FRACTION:
            continue
        text = f"broker {bar.controller_id}" + (
            f", epoch {bar.epoch}" if share >= 2 * LABEL_FRACTION else "")
        middle = _date_numbers(np.array([(bar.start + bar.end) // 2], dtype=np.int64))[0]
        ax.text(middle, row, text, ha="center", va="center", color="white", fontsize=8.5,
                fontweight="bold")


def _status_bars(ax: Axes, lanes: list[Lane], status: str, first_row: int) -> None:
    """Every lane's bars of one status as one compound path (one SVG element, a few bytes
    per bar), so a page with many brokers and many short outages stays small."""
    corners = [_box(first_row + row, bar.start, bar.end)
               for row, lane in enumerate(lanes) for bar in lane.bars if bar.status == status]
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


# The what-if figure's left margin (a fraction of its width) holds the variants' names, cut
# to VARIANT_CHARS (the ranking table under the figure gives them whole).
WHATIF_LEFT = 0.25
VARIANT_CHARS = 36


def short_name(variant: Variant, with_cluster: bool) -> str:
    """"2. fail-broker-3-…": rank and name, cut to VARIANT_CHARS characters."""
    name = f"{variant.cluster} · {variant.name}" if with_cluster else variant.name
    rank = "" if variant.rank is None else f"{variant.rank}. "
    text = rank + name
    return text if len(text) <= VARIANT_CHARS else text[:VARIANT_CHARS - 1] + "…"


def whatif_figure(variants: list[Variant]) -> str:
    """Offline partition-seconds and unclean elections per variant; a black tick marks the
    baseline's value on each bar."""
    labels = [short_name(v, len({x.cluster for x in variants}) > 1) for v in variants]
    with _style():
        height = 1.3 + 0.3 * max(len(variants), 1)
        fig = _figure(height)
        panels = fig.subplots(1, 2, sharey=True)
        values: tuple[tuple[list[float], list[float], str], ...] = (
                  ([v.offline_seconds for v in variants],
                   [v.baseline_offline_seconds for v in variants], "offline partition-seconds"),
                  ([float(v.unclean_elections) for v in variants],
                   [float(v.baseline_unclean_elections) for v in variants],
                   "unclean elections"))
        for ax, (value, baseline, title), colour in zip(panels, values, ("#c62828", "#6a1b9a"),
                                                        strict=True):
            ax.barh(range(len(variants)), value, color=colour, height=0.6)
            ax.scatter(baseline, range(len(variants)), marker="|", s=260, color="black",
                       label="baseline", zorder=3)
            ax.set_xlabel(title)
            if max([*value, *baseline, 0]) >= 10:  # no "1e8" offset: whole numbers, commas
                ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        panels[0].set_yticks(range(len(variants)), labels)
        panels[0].set_ylim(len(variants) - 0.5, -0.5)
        panels[0].legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), frameon=False)
        fig.subplots_adjust(top=1 - 0.4 / height, bottom=0.6 / height, wspace=0.08,
                            left=WHATIF_LEFT, right=TIME_AXIS_MARGINS["right"])
        return to_svg(fig, "whatif")
