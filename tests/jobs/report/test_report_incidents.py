"""The page's incidents table and its "what changed" digest, from hand-written `incidents`
and `changes` tables: the worst incidents in time order, an open one said to be open, and
tables of an older replay (neither table) said to be missing rather than empty."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from jobs.report import write_report
from tests.jobs.report.report_fixtures import _summary, at, write_table
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
    assert ">open</strong>" in row  # a run_summary without its last event time
    start = html.index('data-incident="10"')
    assert "BrokerStartup of broker 3 (seq 25)" in html[start:html.index("</tr>", start)]
    # With the run's last event (seq 160's time), as the CLI's incident line words it.
    write_table(tables, "run_summary", [{**_summary("r1", at(300)), "period_end": at(160)}],
                "r1")
    html = write_report(tables, tmp_path / "r2.html").read_text(encoding="utf-8")
    start = html.index('data-incident="40"')
    assert ">open, 120 s so far</strong>" in html[start:html.index("</tr>", start)]


def test_an_incident_of_two_brokers_names_both_with_their_shares(tables: Path,
                                                                  tmp_path: Path) -> None:
    shares = [{"broker_id": b, "partitions": n, "offline_partition_seconds": s,
               "under_min_isr_partition_seconds": s, "seconds": back}
              for b, n, s, back in ((3, 1, 86.0, 86.0), (5, 2, 884.0, 442.0))]
    write_table(tables, "incidents", [incident(10, 970.0, end=452, brokers=shares)], "r1")
    html = write_report(tables, tmp_path / "r.html").read_text(encoding="utf-8")
    start = html.index('data-incident="10"')
    row = html[start:html.index("</tr>", start)]
    assert ("BrokerFailure of brokers 3, 5 (broker 3: 1 partition(s), 86.0 partition-seconds "
            "offline (9%), back after 86.0 s; broker 5: 2 partition(s), 884.0 "
            "partition-seconds offline (91%), back after 442.0 s)") in row


def test_a_failover_incident_names_the_lost_broker_not_the_new_controller(
        tables: Path, tmp_path: Path) -> None:
    """The fixture's failover at seq 15 elected broker 3: an incident it opened naming 3
    lost no broker; one naming broker 1 found 1 lost."""
    failover = {"cause_event": "ControllerFailover", "recovery_event": None}
    write_table(tables, "incidents", [incident(15, 4.0, **failover, cause_broker=3)], "r1")
    html = write_report(tables, tmp_path / "r.html").read_text(encoding="utf-8")
    start = html.index('data-incident="15"')
    assert "ControllerFailover to broker 3 (no broker lost)" in \
        html[start:html.index("</tr>", start)]
    write_table(tables, "incidents", [incident(15, 4.0, **failover, cause_broker=1)], "r1")
    html = write_report(tables, tmp_path / "r2.html").read_text(encoding="utf-8")
    start = html.index('data-incident="15"')
    assert "ControllerFailover that found broker 1 lost" in \
        html[start:html.index("</tr>", start)]


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


def loss(seq: int, incident_id: int | None, **kw: Any) -> dict[str, Any]:
    return {"cluster": "default", "seq": seq, "ts": at(seq), "topic": "t", "partition": 0,
            "incident_id": incident_id, "result": "exact", "messages_lost": 100,
            "detail": "100 messages lost on t-0: broker 1 truncated to 1000 from log end "
                      "offset 1100",
            "evidence": [{"role": "returning_replica", "broker_id": 1,
                          "source": "broker-1/server.log:8",
                          "text": "[2026-03-02 10:20:00,151] INFO [UnifiedLog partition=t-0, "
                                  "dir=/k] Truncating to offset 1000 (kafka.log.UnifiedLog)"}],
            **kw}


def test_an_incidents_unclean_election_shows_what_it_lost(tables: Path, tmp_path: Path) -> None:
    """The election that ended incident 10's offline window: its figure next to the
    incident, and its row with the lines that prove it; a bounded and an unknown one."""
    write_table(tables, "incidents", [incident(10, 30.0, end=25, unclean_elections=1),
                                      incident(40, 5.0, end=50, unclean_elections=1)], "r1")
    write_table(tables, "data_loss", [
        loss(25, 10),
        loss(50, 40, topic="u", result="bounded", messages_lost=None,
             messages_lost_at_least=100, messages_lost_at_most=120, detail="at least 100 "
             "and at most 120 messages lost on u-0, no truncation line of the old leader"),
        loss(60, None, topic="v", result="unknown", messages_lost=None, evidence=[],
             detail="unknown for v-0: no offset line of this partition in the broker logs"),
    ], "r1")
    html = write_report(tables, tmp_path / "r.html").read_text(encoding="utf-8")
    start = html.index('data-incident="10"')
    row = html[start:html.index("</tr>", start)]
    assert '<span class="loss" data-result="exact"' in row
    assert "t-0: exactly 100 messages lost" in row
    start = html.index('data-incident="40"')
    assert "u-0: between 100 and 120 messages lost" in html[start:html.index("</tr>", start)]
    shown = [(r["data-loss"], r["data-seq"], r["data-result"]) for r in attrs_of(html, "tr")
             if r.get("data-loss")]
    assert shown == [("t-0", "25", "exact"), ("u-0", "50", "bounded"), ("v-0", "60", "unknown")]
    assert "<code>broker-1/server.log:8</code>" in html
    assert "Truncating to offset 1000 (kafka.log.UnifiedLog)" in html
    assert ">data loss unknown</td>" in html


def test_tables_without_data_loss_say_so(tables: Path, tmp_path: Path) -> None:
    shutil.rmtree(tables / "data_loss", ignore_errors=True)
    html = write_report(tables, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "These tables have no data_loss table (written by an older replay)." in html
