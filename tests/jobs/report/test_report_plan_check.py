"""The plan-check section: the plan check's verdict, its steps and ranked partitions with
the advice, from the `plan_check` table a `jobs.whatif --from-state --plan` wrote."""

from __future__ import annotations

from pathlib import Path

from jobs.report import main, write_report
from jobs.whatif.job import main as whatif_main
from tests.jobs.report.test_report_tables import attrs_of
from tests.jobs.whatif.plan_check.test_rack_plan import PLAN, zookeeper_tables


def test_the_plan_check_section_shows_the_ranked_rows(tables: Path, tmp_path: Path) -> None:
    plan = tmp_path / "rack-a.toml"
    plan.write_text(PLAN)
    out = tmp_path / "plan"
    assert whatif_main(["--from-state", str(zookeeper_tables(tmp_path / "state")), "--plan",
                        str(plan), "--out", str(out)]) == 1
    html = write_report(tables, tmp_path / "r.html", plan_check_dir=out).read_text("utf-8")
    assert 'href="#plan-check"' in html and '<strong id="plan-check-run">rack-a</strong>' in html
    assert "Not safe: 1 partition(s) taken offline" in html
    findings = [a["data-finding"] for a in attrs_of(html, "tr") if a.get("data-finding")]
    assert findings == ["offline"] + ["under_min_isr"] * 4  # ranked: offline first
    assert "reassign clicks-0 to [4, 2]" in html


def test_a_missing_plan_check_run_is_exit_2(tables: Path, tmp_path: Path) -> None:
    assert main(["--tables", str(tables), "--plan-check", str(tmp_path / "none"),
                 "--out", str(tmp_path / "r.html")]) == 2
    assert main(["--tables", str(tables), "--plan-check-run-id", "x",
                 "--out", str(tmp_path / "r.html")]) == 2


def test_no_plan_check_no_section(tables: Path, tmp_path: Path) -> None:
    html = write_report(tables, tmp_path / "r.html").read_text("utf-8")
    assert "plan-check" not in html
