"""The header's "offline at end of run" card: how many partitions the run left in
OfflinePartition (run_summary's partitions_by_state, else partition_states), red above 0,
and since when (the earliest start of the offline windows still open)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from jobs.report import write_report
from tests.jobs.report.report_fixtures import at, write_table
from tests.jobs.report.test_report_tables import attrs_of


def card(tables: Path, out: Path) -> tuple[dict[str, str | None], str]:
    html = write_report(tables, out).read_text(encoding="utf-8")
    found = attrs_of(html, "div", id="offline-at-end")
    assert len(found) == 1
    start = html.index('id="offline-at-end"')
    return found[0], html[start:html.index("</div>", start)]


def set_partitions_by_state(tables: Path, states: list[tuple[str, int]] | None) -> None:
    path = tables / "run_summary" / "run_id=r1" / "part-0.parquet"
    table = pq.read_table(path)
    index = table.schema.get_field_index("partitions_by_state")
    column = table.column(index).type

    table = table.set_column(index, "partitions_by_state", pa.array([states], column))
    pq.write_table(table, path)


def test_card_is_red_and_says_since_when(tables: Path, tmp_path: Path) -> None:
    attrs, text = card(tables, tmp_path / "r.html")
    # clicks-0 went offline at seq 31 and never came back; run_summary says 1 partition.
    assert attrs["data-partitions"] == "1"
    assert "card-alert" in (attrs["class"] or "")
    assert attrs["data-since"] == "2026-01-01 00:00:31.000 UTC"
    assert "Offline at end of run" in text
    assert "<strong>1</strong> <span class=\"since\">partition, since 2026-01-01 00:00:31.000 UTC" \
        in text


def test_card_is_not_red_at_zero(tables: Path, tmp_path: Path) -> None:
    set_partitions_by_state(tables, [("OnlinePartition", 6)])
    rows = [{"cluster": "default", "topic": "orders", "partition": 0, "kind": "offline",
             "start_seq": 10, "start_ts": at(10), "end_seq": 20, "end_ts": at(20),
             "seconds": 10.0}]
    write_table(tables, "partition_windows", rows, "r1")
    attrs, text = card(tables, tmp_path / "r.html")
    assert attrs["data-partitions"] == "0" and attrs["data-since"] == ""
    assert "card-ok" in (attrs["class"] or "") and "card-alert" not in (attrs["class"] or "")
    assert "since 20" not in text


def test_card_counts_partition_states_without_a_summary_map(tables: Path,
                                                            tmp_path: Path) -> None:
    set_partitions_by_state(tables, None)
    states = [{"cluster": "default", "topic": "t", "partition": p,
               "state": "OfflinePartition" if p < 3 else "OnlinePartition"} for p in range(5)]
    write_table(tables, "partition_states", states, "r1")
    write_table(tables, "partition_states", states[:1], "r0")  # another run's full state
    attrs, _ = card(tables, tmp_path / "r.html")
    assert attrs["data-partitions"] == "3"
    assert "card-alert" in (attrs["class"] or "")


def test_card_unknown_without_any_state(tables: Path, tmp_path: Path) -> None:
    set_partitions_by_state(tables, None)
    attrs, text = card(tables, tmp_path / "r.html")
    assert attrs["data-partitions"] == ""
    assert "unknown" in text and "card-alert" not in (attrs["class"] or "")
