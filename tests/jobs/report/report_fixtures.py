"""Helpers of the report's tests: tables written by hand in the replay's, the audit's and
the what-if's layouts (`<root>/<table>/run_id=<id>/`), the sample replayed for real, and
headless Chromium (Debian's `chromium`; `make browser` installs it). The fixtures are in
conftest.py."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemas.arrow import arrow_schema
from schemas.tables import TABLES

BASE = dt.datetime(2026, 1, 1)
CHROMIUM = "/usr/bin/chromium"

# The audit's and the what-if's tables, stated here so the tests need neither job.
AUDIT_CHECKS = pa.schema([
    ("cluster", pa.string()), ("run_id", pa.string()), ("check", pa.string()),
    ("severity", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
    ("broker_id", pa.int32()), ("detail", pa.string()), ("since_ts", pa.timestamp("us")),
])
WHATIF_IMPACT = pa.schema([
    ("cluster", pa.string()), ("run_id", pa.string()), ("variant", pa.string()),
    ("rank", pa.int32()), ("partitions_offline_at_end", pa.int64()),
    ("max_partitions_offline_at_once", pa.int64()), ("offline_partition_seconds", pa.float64()),
    ("under_min_isr_partition_seconds", pa.float64()), ("unclean_elections", pa.int64()),
    ("topics_losing_only_isr", pa.int64()), ("leader_and_isr_requests", pa.int64()),
    ("update_metadata_requests", pa.int64()), ("stop_replica_requests", pa.int64()),
    ("findings_by_kind", pa.map_(pa.string(), pa.int64())),
    ("offline_partition_seconds_vs_baseline", pa.float64()),
    ("max_partitions_offline_at_once_vs_baseline", pa.int64()),
    ("unclean_elections_vs_baseline", pa.int64()),
    ("partitions_offline_at_end_vs_baseline", pa.int64()),
])
WHATIF_PARTITION_DIFF = pa.schema([
    ("cluster", pa.string()), ("run_id", pa.string()), ("variant", pa.string()),
    ("topic", pa.string()), ("partition", pa.int32()), ("field", pa.string()),
    ("baseline", pa.string()), ("value", pa.string()),
])


def at(seq: int) -> dt.datetime:
    """The time of event `seq` in the hand-made logs: one event per second."""
    return BASE + dt.timedelta(seconds=seq)


def write_table(root: Path, name: str, rows: list[dict[str, Any]], run_id: str,
                schema: pa.Schema | None = None) -> None:
    """Rows (missing columns null) as `<root>/<name>/run_id=<run_id>/part-0.parquet`."""
    full = schema if schema is not None else arrow_schema(TABLES[name])
    stored = pa.schema([f for f in full if f.name != "run_id"])
    table = pa.Table.from_pylist([{f.name: r.get(f.name) for f in stored} for r in rows],
                                 schema=stored)
    directory = root / name / f"run_id={run_id}"
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, directory / "part-0.parquet")


def _windows() -> list[dict[str, Any]]:
    def window(topic: str, partition: int, kind: str, start: int, end: int | None,
               cause: str, broker: int | None) -> dict[str, Any]:
        return {"cluster": "default", "topic": topic, "partition": partition, "kind": kind,
                "start_seq": start, "start_ts": at(start), "end_seq": end,
                "end_ts": None if end is None else at(end),
                "seconds": None if end is None else float(end - start),
                "cause_event": cause, "cause_broker": broker,
                "end_event": None if end is None else "BrokerStartup"}

    return [
        window("orders", 0, "offline", 10, 20, "BrokerFailure", 2),
        window("orders", 1, "offline", 10, 25, "BrokerFailure", 2),
        window("clicks", 0, "offline", 31, None, "ControlledShutdown", 3),
        window("orders", 0, "under_min_isr", 10, 20, "BrokerFailure", 2),
        window("orders", 2, "under_replicated", 5, 12, "IsrChanged", None),
        window("orders", 3, "under_replicated", 6, None, "IsrChanged", None),
    ]


def _brokers() -> list[dict[str, Any]]:
    spans = [(1, "live", 1, None), (2, "live", 1, 10), (2, "dead", 10, 20),
             (2, "live", 20, None), (3, "live", 1, 30), (3, "shutting_down", 30, 31),
             (3, "dead", 31, None)]
    return [{"cluster": "default", "broker_id": b, "status": s, "seq_from": f, "seq_to": t,
             "ts_from": at(f), "ts_to": None if t is None else at(t)} for b, s, f, t in spans]


def _requests() -> dict[str, list[dict[str, Any]]]:
    def row(seq: int, **more: Any) -> dict[str, Any]:
        return {"cluster": "default", "seq": seq, "ts": at(seq), "topic": "orders",
                "partition": 0, **more}

    return {
        "leader_and_isr_requests": [row(5, broker_id=1), row(5, broker_id=2),
                                    row(12, broker_id=3)],
        # seq 5: brokers 1, 2, 3 are live; seq 12: 1 and 3 (2 is dead); seq 30: 1, 2 and the
        # shutting-down 3; seq 20 names its recipient.
        "update_metadata_requests": [row(5), row(5, partition=1), row(12), row(30),
                                     row(20, to_brokers=[2])],
        "stop_replica_requests": [row(31, broker_id=3)],
    }


def _summary(run_id: str, finished: dt.datetime) -> dict[str, Any]:
    return {"cluster": "default", "started_at": finished - dt.timedelta(minutes=1),
            "finished_at": finished, "buckets": 2, "batches": 1, "rows_read": 40,
            "rows_applied": 37, "rows_duplicate": 1, "rows_quarantined": 2, "rows_late": 0,
            "findings_by_kind": [("election_failed", 2)],
            # clicks-0's offline window is still open at the end (see _windows).
            "partitions_by_state": [("OfflinePartition", 1), ("OnlinePartition", 5)]}


def small_tables(root: Path) -> Path:
    """A run `r1` of three brokers (2 fails and returns, 3 shuts down and dies) and an
    older run `r0` that has only its run_summary row."""
    run = "r1"
    write_table(root, "run_summary", [_summary("r0", BASE)], "r0")
    write_table(root, "run_summary", [_summary(run, BASE + dt.timedelta(days=1))], run)
    write_table(root, "partition_windows", _windows(), run)
    write_table(root, "broker_timeline", _brokers(), run)
    write_table(root, "controller_timeline", [
        {"cluster": "default", "controller_id": 1, "controller_epoch": 1, "seq": 1, "ts": at(1)},
        {"cluster": "default", "controller_id": 3, "controller_epoch": 2, "seq": 15,
         "ts": at(15)},
    ], run)
    write_table(root, "findings", [
        {"cluster": "default", "seq": s, "ts": at(s), "topic": "orders", "partition": 0,
         "kind": "election_failed", "detail": f"failed at {s} <b>"} for s in (10, 11)
    ], run)
    write_table(root, "state_changes", [
        {"cluster": "default", "seq": 40, "ts": at(40), "topic": "orders", "partition": 0,
         "machine": "partition", "from_state": "OnlinePartition", "to_state": "OnlinePartition",
         "outcome": "applied"},
    ], run)
    for name, rows in _requests().items():
        write_table(root, name, rows, run)
    return root


def run_chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium with no network: every host resolves to nothing and the proxy is
    a closed port, so only a file:, data: or about: URL could load."""
    if shutil.which("chromium") is None and not Path(CHROMIUM).exists():
        pytest.fail("chromium is missing: run `make browser` (apt-get install chromium)")
    command = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", f"--user-data-dir={profile}",
        "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)




def impact_row(variant: str, rank: int, seconds: float, unclean: int,
               cluster: str = "default") -> dict[str, Any]:
    """A whatif_impact row against a baseline of 34 offline partition-seconds and one
    unclean election."""
    return {"cluster": cluster, "variant": variant, "rank": rank,
            "offline_partition_seconds": seconds, "unclean_elections": unclean,
            "max_partitions_offline_at_once": 2 * rank, "partitions_offline_at_end": rank - 1,
            "under_min_isr_partition_seconds": seconds / 2,
            "offline_partition_seconds_vs_baseline": seconds - 34.0,
            "unclean_elections_vs_baseline": unclean - 1}


def whatif_output(root: Path, run_id: str, rows: list[dict[str, Any]],
                  finished: dt.datetime | None = None) -> Path:
    """A what-if's --out holding run `run_id`: whatif_impact, an empty whatif_partition_diff
    and, when `finished` is given, run_summary rows (one per variant, with `variant`, as
    `jobs.whatif` writes every replay table)."""
    write_table(root, "whatif_impact", rows, run_id, WHATIF_IMPACT)
    write_table(root, "whatif_partition_diff", [], run_id, WHATIF_PARTITION_DIFF)
    if finished is not None:
        summary = [{**_summary(run_id, finished), "variant": r["variant"]} for r in rows]
        write_table(root, "run_summary", summary, run_id, with_variant("run_summary"))
    return root


def with_variant(name: str) -> pa.Schema:
    """A replay table's Arrow schema with the what-if's `variant` column after `cluster`."""
    fields = list(arrow_schema(TABLES[name]))
    return pa.schema([fields[0], pa.field("variant", pa.string()), *fields[1:]])
