"""The page's incidents table and its "what changed" digest, from hand-written `incidents`
and `changes` tables: the worst incidents in time order, an open one said to be open, and
tables of an older replay (neither table) said to be missing rather than empty."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from jobs.report import write_report
from tests.jobs.report.report_fixtures import at, write_table
from tests.jobs.report.test_report_tables import attrs_of


def incident(seq: int, offline: float, end: int | None = None, **kw: Any) -> dict[str, Any]:
    return {"cluster": "default", "incident_id": seq, "cause_event": "BrokerFailure",
            "cause_broker": 3, "cause_seq": seq, "start_ts": at(seq), "end_seq": end,
            "end_ts": None if end is None else at(end),
            "seconds": None if end is None else float(end - seq),
            "peak_partitions_offline": 2, "partitions_affected": 2, "topics_affected": 1,
            "offline_partition_seconds": offline, "under_min_isr_partition_seconds": offline,
            "unclean_elections": 0, "recovery_event": None if end is None else "BrokerStartup",
            "recovery_broker": None if end is None else 3,
            "worst_topics": [{"topic": "t", "offline_partition_seconds": offline,
                              "under_min_isr_partition_seconds": offline}], **kw}


def test_worst_incidents_in_time_order_and_an_open_one(tables: Path, tmp_path: Path) -> None:
    write_table(tables, "incidents", [incident(40, 5.0), incident(10, 30.0, end=25),
                                      *[incident(100 + i, 1.0, end=200) for i in range(25)]],
                "r1")
    html = write_report(tables, tmp_path / "r.html").read_text(encoding="utf-8")
    rows = attrs_of(html, "tr", **{"data-cluster": "default"})
    ids = [r["data-incident"] for r in rows if r.get("data-incident")]
    # The 20 with the most partition-seconds of 27, shown in time order.
    assert ids[:2] == ["10", "40"] and len(ids) == 20
    assert '<strong id="incident-count">27</strong>' in html
    start = html.index('data-incident="40"')
    row = html[start:html.index("</tr>", start)]
    assert ">open</strong>" in row
    start = html.index('data-incident="10"')
    assert "BrokerStartup of broker 3 (seq 25)" in html[start:html.index("</tr>", start)]


def test_changes_are_listed_in_the_digest_order(tables: Path, tmp_path: Path) -> None:
    first = [{"seq": 7, "ts": at(7), "topic": "t", "partition": 1, "broker_id": None,
              "detail": "2 -> 3"}]
    write_table(tables, "changes", [
        {"cluster": "default", "change": "broker_failed", "count": 1,
         "first": [{"seq": 5, "ts": at(5), "topic": None, "partition": None, "broker_id": 2,
                    "detail": None}]},
        {"cluster": "default", "change": "leader_moved", "count": 9, "first": first},
        {"cluster": "default", "change": "topic_created", "count": 1,
         "first": [{"seq": 1, "ts": at(1), "topic": "t", "partition": None, "broker_id": None,
                    "detail": "2 partitions"}]},
    ], "r1")
    html = write_report(tables, tmp_path / "r.html").read_text(encoding="utf-8")
    shown = [(r["data-change"], r["data-count"]) for r in attrs_of(html, "tr")
             if r.get("data-change")]
    assert shown == [("topic_created", "1"), ("leader_moved", "9"), ("broker_failed", "1")]
    assert "seq 7 t-1 (2 -&gt; 3)</span>; …" in html
    assert "seq 5 broker 2" in html and "seq 1 t (2 partitions)" in html


def test_tables_of_an_older_replay_say_what_is_missing(tables: Path, tmp_path: Path) -> None:
    for name in ("incidents", "changes"):
        shutil.rmtree(tables / name, ignore_errors=True)
    html = write_report(tables, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "These tables have no incidents table (written by an older replay)." in html
    assert "These tables have no changes table (written by an older replay)." in html
