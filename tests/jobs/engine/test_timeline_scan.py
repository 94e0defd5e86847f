"""The timeline scan (`jobs.engine.timeline.scan_log`): the pyarrow read of the files and
Spark's own scan give the same `LogScan`, quarantined cluster rows excluded; where pyarrow
might read a file differently from Spark, Spark scans it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.engine import sizing
from jobs.engine.event_log import read_events
from jobs.engine.plausibility import Plausibility
from jobs.engine.timeline import LogScan, ScanContext, scan_log, spark_scan
from jobs.engine.timeline_scan import read_timeline_rows
from schemas import event_types as ET
from tests.helpers.event_log import (
    ARROW_EVENT_SCHEMA,
    T0,
    created,
    ev,
    failover,
    ts_of,
    write_log,
)

BUCKETS = 4


def scans(spark: Any, events: Path) -> tuple[LogScan, LogScan]:
    df = read_events(spark, str(events))
    return scan_log(df, BUCKETS), spark_scan(df, BUCKETS)


def bad_cluster_rows() -> list[dict[str, Any]]:
    return [
        failover(1, 1, [1, 2, 3]),
        failover(1, 1, [1, 2, 3]),  # an exact duplicate: one event
        ev(2, ET.BROKER_FAILURE, broker_id=2),
        ev(3, ET.BROKER_FAILURE),  # missing broker_id: quarantined
        ev(4, ET.BROKER_STARTUP, broker_id=-2),  # negative broker_id: quarantined
        failover(5, 3, [3, 3], cluster="west"),  # duplicate broker ids: quarantined
        failover(6, 3, [3, 4], cluster="west"),
        ev(-7, ET.BROKER_STARTUP, broker_id=2),  # negative seq: quarantined
        ev(8, ET.TOPIC_DELETION_REQUESTED, topic="t"),
        ev(9, ET.TOPIC_DELETION_REQUESTED, topic="bad/name"),  # illegal topic: quarantined
        ev(10, ET.STOP_REPLICA_RESPONSE, broker_id=2, topic="t", partition=0),
        ev(10, ET.STOP_REPLICA_RESPONSE, broker_id=2, topic="t", partition=1),
        created(11, "t", 0, [1, 2], cluster="east"),  # a cluster with no cluster event
        ev(12, ET.BROKER_STARTUP, broker_id=2, cluster="west"),
    ]


def test_pyarrow_and_spark_scans_agree_on_bad_cluster_rows(spark: Any, tmp_path: Path) -> None:
    write_log(tmp_path / "events", bad_cluster_rows())
    write_log(tmp_path / "events" / "more", [ev(13, ET.BROKER_STARTUP, broker_id=3)], "b")
    assert read_timeline_rows(read_events(spark, str(tmp_path / "events")).inputFiles())
    fast, slow = scans(spark, tmp_path / "events")
    assert fast == slow
    assert sorted(fast.buckets) == [ET.DEFAULT_CLUSTER, "east", "west"]
    seqs = {c: [e.seq for e in evs] for c, evs in fast.cluster_events.items()}
    # Quarantined rows (3, 4, 5, -7, 9) are absent; duplicates collapse (1, 10).
    assert seqs == {ET.DEFAULT_CLUSTER: [1, 2, 8, 10, 13], "east": [], "west": [6, 12]}


def test_pyarrow_and_spark_scans_agree_on_the_sample_log(spark: Any, tmp_path: Path) -> None:
    from jobs.sim.cli import write_log as simulate

    simulate(str(tmp_path / "events"), preset="sample", seed=1, bad_rows=0.02)
    fast, slow = scans(spark, tmp_path / "events")
    assert fast == slow
    assert sum(len(evs) for evs in fast.cluster_events.values()) > 10


def test_narrow_types_and_missing_columns_read_as_spark_reads_them(
    spark: Any, tmp_path: Path
) -> None:
    """A file whose seq is int32 and that lacks the optional columns: pyarrow casts and
    fills with nulls as Spark does."""
    table = pa.table({
        "seq": pa.array([1, 2, 3], pa.int32()),
        "ts": pa.array([1_000_000, 2_000_000, 3_000_000], pa.timestamp("ms", tz="UTC")),
        "event_type": [ET.CONTROLLER_FAILOVER, ET.BROKER_FAILURE, ET.BROKER_STARTUP],
        "broker_id": pa.array([1, 2, None], pa.int32()),
        "brokers": pa.array([[1, 2], None, None], pa.list_(pa.int32())),
    })
    (tmp_path / "events").mkdir()
    pq.write_table(table, tmp_path / "events" / "narrow.parquet")
    df = read_events(spark, str(tmp_path / "events"))
    assert read_timeline_rows(df.inputFiles()) is not None
    fast, slow = scans(spark, tmp_path / "events")
    assert fast == slow
    assert [e.seq for e in fast.cluster_events[ET.DEFAULT_CLUSTER]] == [1, 2]


def test_a_timestamp_without_time_zone_is_left_to_spark(spark: Any, tmp_path: Path) -> None:
    rows = pa.Table.from_pylist(bad_cluster_rows()[:3], schema=ARROW_EVENT_SCHEMA)
    naive = rows.set_column(rows.schema.get_field_index("ts"), "ts",
                            rows.column("ts").cast(pa.timestamp("us")))
    (tmp_path / "events").mkdir()
    pq.write_table(naive, tmp_path / "events" / "naive.parquet")
    df = read_events(spark, str(tmp_path / "events"))
    assert read_timeline_rows(df.inputFiles()) is None
    assert scan_log(df, BUCKETS) == spark_scan(df, BUCKETS)


def test_an_empty_log_has_no_cluster(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "events").mkdir()
    fast, slow = scans(spark, tmp_path / "events")
    assert fast == slow == LogScan({}, {})


def messy_rows() -> list[dict[str, Any]]:
    """Two clusters' rows with every finding of the log checks: late seqs (1, 2 under a
    checkpoint that applied seq 2), a hole (4), two contents at one seq (6), a time before
    `ts_min` (7), time running back an hour (8), and a requested preferred election (9)."""
    def isr(seq: int, members: list[int], **kw: Any) -> dict[str, Any]:
        return ev(seq, ET.ISR_CHANGED, topic="t", partition=0, isr=members, **kw)

    return [
        failover(1, 1, [1, 2]), isr(2, [1, 2]), isr(3, [1]), isr(5, [1, 2]),
        isr(6, [1]), isr(6, [2]),
        {**isr(7, [1]), "ts": datetime(1970, 1, 1, tzinfo=UTC)},
        {**isr(8, [1, 2]), "ts": ts_of(8) - timedelta(hours=1)},
        ev(9, ET.PREFERRED_LEADER_ELECTION, topic="t", partition=0),
        ev(None, ET.ISR_CHANGED, topic="t", partition=0),  # no seq: not a check's row
        failover(1, 3, [3], cluster="west"), isr(3, [3], cluster="west"),
    ]


def test_a_small_read_is_checked_on_the_driver_as_spark_checks_it(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = messy_rows()
    write_log(tmp_path / "events", rows[:6], "a")
    write_log(tmp_path / "events", rows[6:], "b")
    events = read_events(spark, str(tmp_path / "events"))
    small = read_timeline_rows(events.inputFiles(), check_up_to=len(rows))
    assert small is not None and small.narrow is not None
    assert small.narrow.num_rows == len(rows) - 1  # the row without a seq is left out
    larger = read_timeline_rows(events.inputFiles(), check_up_to=len(rows) - 1)
    assert larger is not None and larger.narrow is None

    rules = Plausibility(ts_min_us=int(T0.timestamp() * 1_000_000) - 86_400_000_000)
    context = ScanContext(rules, seen_through={ET.DEFAULT_CLUSTER: 2},
                          applied_through={ET.DEFAULT_CLUSTER: 2})
    on_driver = scan_log(events, BUCKETS, context)
    monkeypatch.setattr(sizing, "SMALL_LOG_ROWS", 0)  # the same read, checked by Spark
    assert scan_log(events, BUCKETS, context) == on_driver
    facts = on_driver.facts[ET.DEFAULT_CLUSTER]
    assert (facts.seq_min, facts.seq_max, facts.late, facts.gaps, facts.conflicting) == (
        1, 9, (1, 2), ((4, 4),), (6,))
    assert (facts.ts_backwards, facts.requested[0][1]) == ((8,), 1)
    assert on_driver.facts["west"].gaps == ((2, 2),)
