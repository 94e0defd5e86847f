"""A large run's report stays small: about 100,000 partitions, each with offline,
under-min-ISR and under-replicated windows, 60 brokers with many short outages."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from jobs.report import write_report
from tests.jobs.report.report_fixtures import BASE, small_tables, write_table

PARTITIONS = 100_000
BROKERS = 60


def _large_windows(rng: np.random.Generator) -> pa.Table:
    rows = []
    starts = rng.integers(1, 500_000, size=PARTITIONS)
    lengths = rng.integers(1, 5_000, size=PARTITIONS)
    for kind in ("offline", "under_min_isr", "under_replicated"):
        for p in range(PARTITIONS):
            start, end = int(starts[p]), int(starts[p] + lengths[p])
            rows.append({"cluster": "default", "topic": f"topic-{p // 50:05d}",
                         "partition": p % 50, "kind": kind, "start_seq": start,
                         "start_ts": BASE + dt.timedelta(seconds=start), "end_seq": end,
                         "end_ts": BASE + dt.timedelta(seconds=end),
                         "seconds": float(end - start), "cause_event": "BrokerFailure",
                         "cause_broker": p % BROKERS})
    return rows  # type: ignore[return-value]


def _brokers() -> list[dict[str, object]]:
    rows = []
    for broker in range(BROKERS):
        seq = 1
        for outage in range(200):
            down = 1 + broker * 10 + outage * 2_500
            rows.append({"cluster": "default", "broker_id": broker, "status": "live",
                         "seq_from": seq, "seq_to": down,
                         "ts_from": BASE + dt.timedelta(seconds=seq),
                         "ts_to": BASE + dt.timedelta(seconds=down)})
            rows.append({"cluster": "default", "broker_id": broker, "status": "dead",
                         "seq_from": down, "seq_to": down + 3,
                         "ts_from": BASE + dt.timedelta(seconds=down),
                         "ts_to": BASE + dt.timedelta(seconds=down + 3)})
            seq = down + 3
    return rows


@pytest.mark.slow
def test_large_run_report_is_small(tmp_path: Path) -> None:
    tables = small_tables(tmp_path / "tables")
    write_table(tables, "partition_windows", _large_windows(np.random.default_rng(1)), "r1")
    write_table(tables, "broker_timeline", _brokers(), "r1")
    started = time.perf_counter()
    out = write_report(tables, tmp_path / "report.html")
    seconds = time.perf_counter() - started
    size = out.stat().st_size
    print(f"\n[report] {3 * PARTITIONS:,} windows, {BROKERS} brokers x 400 intervals: "
          f"{size / 1e6:.2f} MB in {seconds:.1f} s")
    assert size < 5_000_000
