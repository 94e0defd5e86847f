"""The report over hand-made tables: every number on the page is the one the tables give,
the same inputs give the same bytes, the audit and what-if sections, bad inputs."""

from __future__ import annotations

import datetime as dt
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from jobs.report import main, write_report
from tests.jobs.report.report_fixtures import (
    AUDIT_CHECKS,
    BASE,
    WHATIF_IMPACT,
    WHATIF_PARTITION_DIFF,
    write_table,
)


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text inside each element with an id."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def parse(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Elements()
    parser.feed(html)
    return parser.tags


def attrs_of(html: str, tag: str, **match: str) -> list[dict[str, str | None]]:
    return [a for t, a in parse(html) if t == tag and all(a.get(k) == v for k, v in match.items())]


def report(tables: Path, out: Path, **kwargs: Any) -> str:
    return write_report(tables, out, **kwargs).read_text(encoding="utf-8")


def test_numbers_equal_the_tables(tables: Path, tmp_path: Path) -> None:
    html = report(tables, tmp_path / "r.html")
    figure = attrs_of(html, "figure", id="fig-windows")[0]
    # offline: orders-0 [10, 20), orders-1 [10, 25), clicks-0 [31, open): two at once.
    assert figure["data-peak-offline"] == "2"
    assert figure["data-peak-under-min-isr"] == "1"
    assert figure["data-peak-under-replicated"] == "2"
    # The open window counts to the log's last event (seq 40): 10 + 15 + 9 seconds.
    assert attrs_of(html, "strong", id="offline-seconds")[0]["data-seconds"] == "34.000"
    topics = [(a["data-topic"], a["data-seconds"]) for a in attrs_of(html, "tr")
              if a.get("data-topic") and a.get("data-partition") is None]
    assert topics == [("orders", "25.000"), ("clicks", "9.000")]
    assert "BrokerFailure of broker 2 (25.0 s)" in html
    assert "ControlledShutdown of broker 3 (9.0 s)" in html
    assert "run id" in html.lower() and ">r1<" in html  # the newest run by default


def requests_row(html: str, broker: str) -> list[str]:
    row = re.search(rf'<tr data-broker="{broker}">(.*?)</tr>', html, re.DOTALL)
    assert row, broker
    return re.findall(r'<td class="n">([^<]*)</td>', row.group(1))


def test_update_metadata_goes_to_every_live_or_shutting_down_broker(
    tables: Path, tmp_path: Path
) -> None:
    html = report(tables, tmp_path / "r.html")
    # LeaderAndIsr, UpdateMetadata, StopReplica, total (see conftest._requests).
    assert requests_row(html, "broker 1") == ["1", "4", "0", "5"]
    assert requests_row(html, "broker 2") == ["1", "4", "0", "5"]
    assert requests_row(html, "broker 3") == ["1", "4", "1", "6"]


def test_same_inputs_same_bytes(tables: Path, tmp_path: Path) -> None:
    first = write_report(tables, tmp_path / "a.html").read_bytes()
    second = write_report(tables, tmp_path / "b.html").read_bytes()
    assert first == second
    assert b"<!-- generated" not in first


def test_no_url_leaves_the_file(tables: Path, tmp_path: Path) -> None:
    html = report(tables, tmp_path / "r.html")
    for _, attrs in parse(html):
        for name, value in attrs.items():
            if name.endswith(("src", "href")) and value:
                assert value.startswith("#"), (name, value)
    # url() only points inside the page (the figures' clip paths).
    assert set(re.findall(r"url\((.)", html)) <= {"#"}
    assert "http:" not in html and "https:" not in html and "<script" not in html
    assert "&lt;b&gt;" in html  # table text is escaped


def audit_rows(*severities: str) -> list[dict[str, Any]]:
    return [{"cluster": "default", "check": f"check_{s}_{i}", "severity": s, "topic": "orders",
             "partition": i, "detail": f"{s} {i}", "since_ts": BASE} for i, s in
            enumerate(severities)]


@pytest.mark.parametrize(("severities", "verdict"), [
    (("critical", "warning"), "FAIL"), (("warning", "info"), "WARN"), ((), "PASS"),
])
def test_audit_section(tables: Path, tmp_path: Path, severities: tuple[str, ...],
                       verdict: str) -> None:
    write_table(tmp_path / "audit", "audit_checks", audit_rows(*severities), "r1", AUDIT_CHECKS)
    html = report(tables, tmp_path / "r.html", audit_dir=tmp_path / "audit")
    assert re.search(rf'id="audit-verdict" class="verdict verdict-{verdict}">{verdict}<', html)
    assert 'id="audit"' in html
    checks = [(a["data-severity"], a["data-check"]) for a in attrs_of(html, "tr")
              if a.get("data-check")]
    assert checks == [(s, f"check_{s}_{i}") for i, s in enumerate(severities)]


def test_whatif_section(tables: Path, tmp_path: Path) -> None:
    def impact(variant: str, rank: int, seconds: float, unclean: int) -> dict[str, Any]:
        return {"cluster": "default", "variant": variant, "rank": rank,
                "offline_partition_seconds": seconds, "unclean_elections": unclean,
                "offline_partition_seconds_vs_baseline": seconds - 34.0,
                "unclean_elections_vs_baseline": unclean - 1}

    root = tmp_path / "whatif"
    write_table(root, "whatif_impact", [impact("no-failure", 2, 0.0, 0),
                                        impact("baseline", 1, 34.0, 1),
                                        impact("kill-all", 3, 900.0, 4)], "r1", WHATIF_IMPACT)
    diffs = [{"cluster": "default", "variant": "kill-all", "topic": "orders", "partition": p,
              "field": "leader", "baseline": "1", "value": "-1"} for p in range(60)]
    write_table(root, "whatif_partition_diff", diffs, "r1", WHATIF_PARTITION_DIFF)
    html = report(tables, tmp_path / "r.html", whatif_dir=root)
    ranking = [a["data-variant"] for a in attrs_of(html, "tr") if a.get("data-variant")]
    assert ranking == ["baseline", "no-failure", "kill-all"]
    assert "first 50 of 60" in html
    figure = re.search(r'<figure id="fig-whatif".*?</figure>', html, re.DOTALL)
    assert figure and "<path" in figure.group(0)


def test_cli_exit_codes(tables: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    assert main(["--tables", str(tables), "--out", str(out), "--run-id", "r1"]) == 0
    assert out.stat().st_size > 0
    assert main(["--tables", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert main(["--tables", str(tables), "--out", str(out), "--run-id", "r9"]) == 2
    assert main(["--tables", str(tables), "--out", str(out), "--audit", str(tmp_path)]) == 2
    (tables / "findings" / "run_id=r1" / "part-0.parquet").write_bytes(b"not parquet")
    assert main(["--tables", str(tables), "--out", str(out)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 4 and all(e.startswith("[report] ERROR: ") for e in errors)


def test_run_ids_stay_strings(tables: Path, tmp_path: Path) -> None:
    # A run id that looks like a number keeps its leading zero.
    for name in ("run_summary", "partition_windows", "broker_timeline", "controller_timeline",
                 "findings", "state_changes", "leader_and_isr_requests",
                 "update_metadata_requests", "stop_replica_requests"):
        (tables / name / "run_id=r1").rename(tables / name / "run_id=007")
    html = report(tables, tmp_path / "r.html", run_id="007")
    assert ">007<" in html
    assert dt.datetime.now().year > 2000  # keeps the datetime import honest for ruff
