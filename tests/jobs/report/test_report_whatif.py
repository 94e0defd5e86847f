"""The what-if section: it shows the what-if output's latest run whatever the replay's run
id (or --whatif-run-id), its figures carry one number of decimals per kind, and a what-if
output passed as --tables (which would add its variants up as one cluster) is refused."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.report import main, write_report
from tests.jobs.report.report_fixtures import BASE, impact_row, whatif_output
from tests.jobs.report.test_report_tables import attrs_of

DAY = dt.timedelta(days=1)


def variants(html: str) -> list[str]:
    return [str(a["data-variant"]) for a in attrs_of(html, "tr") if a.get("data-variant")]


def shown_run(html: str) -> str:
    found = re.search(r'<strong id="whatif-run">([^<]*)</strong>', html)
    assert found
    return found.group(1)


def two_runs(root: Path, summaries: bool) -> Path:
    """`sweep-old` (finished first, its run id sorts last) and `night` (finished last)."""
    whatif_output(root, "sweep-old", [impact_row("old-variant", 1, 10.0, 0)],
                  BASE + DAY if summaries else None)
    whatif_output(root, "night", [impact_row("fail-broker-2", 1, 5.0, 0),
                                  impact_row("fail-broker-3", 2, 9.0, 1)],
                  BASE + 2 * DAY if summaries else None)
    return root


def test_whatif_shows_its_latest_run_not_the_replays(tables: Path, tmp_path: Path) -> None:
    # The replay's run is r1; neither what-if run is called r1.
    root = two_runs(tmp_path / "whatif", summaries=True)
    html = write_report(tables, tmp_path / "r.html", whatif_dir=root).read_text("utf-8")
    assert variants(html) == ["fail-broker-2", "fail-broker-3"]
    assert shown_run(html) == "night"
    assert "No variant" not in html


def test_whatif_run_id_picks_another_run(tables: Path, tmp_path: Path) -> None:
    root = two_runs(tmp_path / "whatif", summaries=True)
    out = tmp_path / "r.html"
    assert main(["--tables", str(tables), "--whatif", str(root), "--whatif-run-id",
                 "sweep-old", "--out", str(out)]) == 0
    html = out.read_text("utf-8")
    assert variants(html) == ["old-variant"] and shown_run(html) == "sweep-old"


def test_bad_whatif_run_id_exits_2(tables: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = two_runs(tmp_path / "whatif", summaries=True)
    out = str(tmp_path / "r.html")
    assert main(["--tables", str(tables), "--whatif", str(root), "--whatif-run-id", "nope",
                 "--out", out]) == 2
    assert main(["--tables", str(tables), "--whatif-run-id", "night", "--out", out]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and "'nope'" in errors[0] and "needs --whatif" in errors[1]


def test_whatif_without_summary_takes_the_last_written_run(tables: Path,
                                                           tmp_path: Path) -> None:
    root = two_runs(tmp_path / "whatif", summaries=False)
    for run, when in (("night", 1_000_000), ("sweep-old", 2_000_000)):
        for table in ("whatif_impact", "whatif_partition_diff"):
            for file in (root / table / f"run_id={run}").iterdir():
                os.utime(file, (when, when))
    html = write_report(tables, tmp_path / "r.html", whatif_dir=root).read_text("utf-8")
    assert shown_run(html) == "sweep-old" and variants(html) == ["old-variant"]


def ranking_cells(html: str) -> list[list[str]]:
    table = re.search(r'<table id="whatif-ranking".*?</table>', html, re.DOTALL)
    assert table
    rows = re.findall(r"<tr data-variant[^>]*>(.*?)</tr>", table.group(0), re.DOTALL)
    return [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in rows]


SECONDS = r"[\d,]+\.\d"
SIGNED_SECONDS = r"(?:[+-][\d,]+\.\d|0\.0)"
COUNT = r"[\d,]+"
SIGNED_COUNT = r"(?:[+-][\d,]+|0)"
# rank, variant, offline partition-seconds, vs baseline, most offline at once, offline at
# end, unclean elections, vs baseline, under-min-ISR partition-seconds
RANKING_FORMATS = [COUNT, r".+", SECONDS, SIGNED_SECONDS, COUNT, COUNT, COUNT, SIGNED_COUNT,
                   SECONDS]


def test_every_figure_of_a_kind_has_the_same_decimals(tables: Path, tmp_path: Path) -> None:
    rows = [impact_row("a", 1, 34.0, 1), impact_row("b", 2, 1234.5678, 0),
            impact_row("c", 3, 7.0, 4), impact_row("d", 4, 0.04, 1)]
    rows[1]["max_partitions_offline_at_once"] = 12_345
    root = whatif_output(tmp_path / "whatif", "sweep", rows, BASE)
    html = write_report(tables, tmp_path / "r.html", whatif_dir=root).read_text("utf-8")
    cells = ranking_cells(html)
    for row in cells:
        for cell, pattern in zip(row, RANKING_FORMATS, strict=True):
            assert re.fullmatch(pattern, cell), (cell, pattern, row)
    assert cells[1][2:6] == ["1,234.6", "+1,200.6", "12,345", "1"]
    assert cells[0][3] == "0.0" and cells[2][8] == "3.5" and cells[3][8] == "0.0"
    # The worst-of tables and the causes print partition-seconds the same way.
    for table in ("worst-topics", "worst-partitions", "worst-windows"):
        body = re.search(rf'<table id="{table}">.*?</table>', html, re.DOTALL)
        assert body
        numbers = re.findall(r'<td class="n">([^<]*)</td>', body.group(0))
        assert numbers and all(re.fullmatch(rf"{SECONDS}|{COUNT}", n) for n in numbers)
    assert all(re.fullmatch(SECONDS, s) for s in re.findall(r"\(([^()]*) s\)", html))


def add_variant(path: Path, value: str) -> None:
    table = pq.read_table(path)
    pq.write_table(table.add_column(1, "variant", pa.array([value] * table.num_rows,
                                                           pa.string())), path)


def test_whatif_output_as_tables_is_refused(tables: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    for file in sorted(tables.glob("*/run_id=*/*.parquet")):
        add_variant(file, "kill-all")
    assert main(["--tables", str(tables), "--out", str(out)]) == 2
    assert not out.exists()
    error, = capsys.readouterr().err.strip().splitlines()
    assert f"--tables {tables} is a what-if output" in error
    assert "pass it as --whatif, and the replay's tables as --tables" in error


def test_one_table_with_variants_is_refused(tables: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    add_variant(tables / "partition_windows" / "run_id=r1" / "part-0.parquet", "kill-all")
    assert main(["--tables", str(tables), "--out", str(tmp_path / "r.html")]) == 2
    error, = capsys.readouterr().err.strip().splitlines()
    assert "'partition_windows' has a 'variant' column" in error


def test_audit_of_a_whatif_output_is_refused(tables: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    audit = tmp_path / "audit" / "audit_checks" / "run_id=r1"
    audit.mkdir(parents=True)
    pq.write_table(pa.table({"cluster": ["default"], "variant": ["kill-all"],
                             "check": ["x"], "severity": ["critical"]}),
                   audit / "part-0.parquet")
    assert main(["--tables", str(tables), "--audit", str(tmp_path / "audit"),
                 "--out", str(tmp_path / "r.html")]) == 2
    error, = capsys.readouterr().err.strip().splitlines()
    assert "--audit" in error and "is a what-if output" in error


LONG_NAMES = [
    "fail-broker-3-at-00:45-with-unclean.leader.election.enable=true-and-min.insync.replicas=2",
    "controlled-shutdown-of-every-broker-in-turn-then-restart-broker-1-after-fifteen-minutes",
    "baseline",
]


def test_whatif_table_fits_a_1200_px_column(tables: Path, tmp_path: Path,
                                            chromium: Callable[..., Any]) -> None:
    from PIL import Image

    rows = [impact_row(name, rank, 123_456_789.25 * rank, 12_345 * rank)
            for rank, name in enumerate(LONG_NAMES, start=1)]
    root = whatif_output(tmp_path / "whatif", "r1", rows, BASE)
    page = write_report(tables, tmp_path / "r.html", whatif_dir=root)
    shot = tmp_path / "shot.png"
    # Taller than the page, so no vertical scrollbar: the page is 1200 px wide, its column
    # 1200 px less 24 px of padding on each side.
    done = chromium(tmp_path / "profile", f"--screenshot={shot}", "--window-size=1200,9000",
                    page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 9000)
    # Nothing is drawn in the right padding (a table running past the column draws its
    # rules, header band and text there), and no horizontal scrollbar at the bottom.
    right = image.crop((1178, 0, 1200, 9000))
    bottom = image.crop((0, 9000 - 20, 1200, 9000))
    white = (255, 255, 255)
    assert right.getcolors() == [(22 * 9000, white)], "something runs past the right edge"
    assert bottom.getcolors() == [(1200 * 20, white)], "the page scrolls sideways"
    html = page.read_text("utf-8")
    # A long name is in the cell whole, and in its title.
    assert f'title="{LONG_NAMES[0]}">{LONG_NAMES[0]}</td>' in html
