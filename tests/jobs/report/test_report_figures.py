"""The figures say what they show: panel titles and specific y-axis labels, under min ISR
drawn dashed on top of offline (so equal lines both show), each kind of event with its own
row of symbols (a controlled shutdown beside a failure stays visible), and the controller
lane of the broker timeline."""

from __future__ import annotations

import re
from pathlib import Path

from jobs.report import write_report
from jobs.report.brokers import Election, controller_lanes
from jobs.report.timeline import TimeRange


def figure(html: str, name: str) -> str:
    found = re.search(rf'<figure id="{name}".*?</figure>', html, re.DOTALL)
    assert found, name
    return found.group(0)


def texts(svg: str) -> list[str]:
    return [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def test_panels_have_titles_and_specific_labels(tables: Path, tmp_path: Path) -> None:
    svg = figure(write_report(tables, tmp_path / "r.html").read_text(encoding="utf-8"),
                 "fig-windows")
    shown = texts(svg)
    assert "Offline and under-min-ISR partitions" in shown
    assert "Under-replicated partitions" in shown
    # Each y-axis label names its kinds (matplotlib writes one <text> per line).
    upper = shown.index("partitions offline")
    assert shown[upper + 1] == "or under min ISR"
    lower = shown.index("under-replicated")
    assert shown[lower - 1] == "partitions"


def test_under_min_isr_is_dashed_on_top_of_offline(tables: Path, tmp_path: Path) -> None:
    svg = figure(write_report(tables, tmp_path / "r.html").read_text(encoding="utf-8"),
                 "fig-windows")
    offline = svg.index('<g id="series-offline">')
    under = svg.index('<g id="series-under_min_isr">')
    assert offline < under  # drawn later = on top
    dashed = svg[under:svg.index("</g>", under)]
    assert "stroke-dasharray" in dashed
    solid = svg[offline:svg.index("</g>", offline)]
    assert "stroke-dasharray" not in solid
    colours = re.findall(r"stroke: (#[0-9a-f]{6})", dashed + solid)
    assert len(set(colours)) == 2


def test_each_kind_of_event_has_its_own_symbol_row(tables: Path, tmp_path: Path) -> None:
    svg = figure(write_report(tables, tmp_path / "r.html").read_text(encoding="utf-8"),
                 "fig-windows")
    # Broker 3 shuts down at seq 30 and dies at 31: one pixel apart on this span.
    rows = {}
    for kind in ("broker_failure", "controlled_shutdown"):
        start = svg.index(f'<g id="symbols-{kind}">')
        group = svg[start:svg.index("</g>", start)]
        ys = {round(float(y), 1) for y in re.findall(r'<use [^>]*y="([0-9.]+)"', group)}
        assert ys, kind
        rows[kind] = ys
    assert rows["broker_failure"].isdisjoint(rows["controlled_shutdown"])
    # Controlled shutdowns are drawn last of the event lines (on top of the failures).
    assert svg.index('id="events-0-controlled_shutdown"') > svg.index(
        'id="events-0-broker_failure"')
    assert "controlled shutdown (1)" in texts(svg)


def test_controller_lane_shows_who_was_controller(tables: Path, tmp_path: Path) -> None:
    svg = figure(write_report(tables, tmp_path / "r.html").read_text(encoding="utf-8"),
                 "fig-lanes")
    shown = texts(svg)
    # controller_timeline: broker 1 elected at seq 1 (epoch 1), broker 3 at seq 15 (epoch 2).
    assert "controller" in shown
    assert "broker 1, epoch 1" in shown and "broker 3, epoch 2" in shown
    assert 'id="controller-lane-0-broker-1"' in svg and 'id="controller-lane-0-broker-3"' in svg
    # The controller lane comes above the brokers' lanes.
    assert shown.index("controller") < shown.index("broker 1")


def test_controller_lanes_are_bounded_and_in_order() -> None:
    span = TimeRange(0, 1_000_000_000)
    # 10,000 elections, alternating brokers 1 and 2, then broker 7 from the middle on.
    elections = [Election("c", 1 + i % 2, i, i, i * 50_000) for i in range(10_000)]
    elections.append(Election("c", 7, 10_000, 10_000, 500_000_000))
    lane, = controller_lanes(elections, span, 100)
    assert lane.label == "controller"
    assert len(lane.bars) <= 100
    assert lane.bars[-1].controller_id == 7 and lane.bars[-1].epoch == 10_000
    assert lane.bars[-1].start == 500_000_000 - 10_000_000 and lane.bars[-1].end == span.end
    # Bars tile the span from the first election on, without gaps.
    assert all(a.end == b.start for a, b in zip(lane.bars, lane.bars[1:], strict=False))


def test_controller_lanes_per_cluster_start_at_the_first_election() -> None:
    elections = [Election("a", 1, 1, 5, 500), Election("b", 2, 1, 1, 0)]
    lanes = controller_lanes(elections, TimeRange(0, 1000), 10)
    assert [lane.label for lane in lanes] == ["a · controller", "b · controller"]
    assert lanes[0].bars[0].start == 400  # the slice [400, 500) ends with broker 1 in office
    assert lanes[1].bars[0].start == 0
