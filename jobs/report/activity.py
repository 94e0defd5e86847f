"""What the run did and found: the run summary, findings by kind, audit checks by
severity, and requests sent per broker and type."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from jobs.report.brokers import Interval
from jobs.report.tables import (
    batches,
    first_rows,
    grouped_count,
    open_table,
    read,
    scanner,
)

REQUEST_TYPES: tuple[tuple[str, str], ...] = (
    ("LeaderAndIsr", "leader_and_isr_requests"),
    ("UpdateMetadata", "update_metadata_requests"),
    ("StopReplica", "stop_replica_requests"),
)
SEVERITY_ORDER: tuple[str, ...] = ("critical", "warning", "info")
FINDING_COLUMNS = ["cluster", "seq", "ts", "topic", "partition", "broker_id", "detail"]
AUDIT_COLUMNS = ["cluster", "topic", "partition", "broker_id", "detail", "since_ts"]


class Summary(NamedTuple):
    clusters: list[str]
    read: int
    applied: int
    duplicate: int
    quarantined: int
    late: int


class Group(NamedTuple):
    """A kind of finding or an audit check: how many rows, and the first ones."""

    name: str
    severity: str
    rows: int
    first: list[dict[str, Any]]


class RequestRow(NamedTuple):
    broker: str
    counts: tuple[int, ...]  # in REQUEST_TYPES order

    @property
    def total(self) -> int:
        return sum(self.counts)


def run_summary(tables_dir: Path, run_id: str) -> Summary:
    counts = ["rows_read", "rows_applied", "rows_duplicate", "rows_quarantined", "rows_late"]
    table = read(open_table(tables_dir, "run_summary"), run_id, ["cluster", *counts])
    totals = [int(pc.sum(table.column(c)).as_py() or 0) for c in counts]
    clusters = sorted({str(c) for c in table.column("cluster").to_pylist()})
    return Summary(clusters, *totals)


def findings(tables_dir: Path, run_id: str, limit: int) -> list[Group]:
    dataset = open_table(tables_dir, "findings")
    counts = grouped_count(scanner(dataset, run_id, ["kind"]), ["kind"]).to_pylist()
    groups = []
    for row in sorted(counts, key=lambda r: (-r["rows"], str(r["kind"]))):
        scan = scanner(dataset, run_id, FINDING_COLUMNS, pc.field("kind") == row["kind"])
        first = first_rows(scan, ["seq", "cluster", "topic", "partition", "detail"], limit)
        groups.append(Group(str(row["kind"]), "", row["rows"], first.to_pylist()))
    return groups


def audit_checks(audit_dir: Path, run_id: str, limit: int) -> list[Group]:
    dataset = open_table(audit_dir, "audit_checks")
    keys = ["severity", "check"]
    counts = grouped_count(scanner(dataset, run_id, keys), keys).to_pylist()

    def rank(row: dict[str, Any]) -> tuple[int, int, str]:
        severity = str(row["severity"])
        known = SEVERITY_ORDER.index(severity) if severity in SEVERITY_ORDER else 99
        return known, -row["rows"], str(row["check"])

    groups = []
    for row in sorted(counts, key=rank):
        where = (pc.field("severity") == row["severity"]) & (pc.field("check") == row["check"])
        scan = scanner(dataset, run_id, AUDIT_COLUMNS, where)
        first = first_rows(scan, ["cluster", "topic", "partition", "broker_id", "detail"], limit)
        groups.append(Group(str(row["check"]), str(row["severity"]), row["rows"],
                            first.to_pylist()))
    return groups


def verdict(checks: list[Group]) -> str:
    """FAIL if any critical check, WARN if any warning, else PASS: the word `jobs.audit`
    prints with its default `--fail-on critical`."""
    severities = {g.severity for g in checks if g.rows}
    if "critical" in severities:
        return "FAIL"
    return "WARN" if "warning" in severities else "PASS"


def _recipient_counts(tables_dir: Path, run_id: str, table: str) -> dict[tuple[str, int], int]:
    scan = scanner(open_table(tables_dir, table), run_id, ["cluster", "broker_id"])
    return {(str(r["cluster"]), int(r["broker_id"])): int(r["rows"])
            for r in grouped_count(scan, ["cluster", "broker_id"]).to_pylist()}


def _listed_recipients(scan: ds.Scanner) -> dict[tuple[str, int], int]:
    """UpdateMetadata rows that list their recipients: one request per listed broker."""
    counts: dict[tuple[str, int], int] = defaultdict(int)
    for batch in batches(scan):
        lists = batch.column("to_brokers")
        parents = pc.list_parent_indices(lists)
        flat = pa.table({"cluster": pc.take(batch.column("cluster"), parents),
                         "broker_id": pc.list_flatten(lists)})
        grouped = flat.group_by(["cluster", "broker_id"]).aggregate([([], "count_all")])
        for row in grouped.to_pylist():
            counts[(str(row["cluster"]), int(row["broker_id"]))] += int(row["count_all"])
    return counts


def _broadcast_recipients(
    scan: ds.Scanner, intervals: list[Interval]
) -> dict[tuple[str, int], int]:
    """UpdateMetadata rows with no recipient list go to every live or shutting-down broker
    at their event: per event, the rows sent; per broker, the sum over the events inside
    its live and shutting-down intervals ([seq_from, seq_to))."""
    per_event = grouped_count(scan, ["cluster", "seq"])
    counts: dict[tuple[str, int], int] = defaultdict(int)
    for cluster in sorted({str(c) for c in per_event.column("cluster").to_pylist()}):
        rows = per_event.filter(pc.equal(per_event.column("cluster"), cluster))
        rows = rows.sort_by([("seq", "ascending")])
        seqs = rows.column("seq").to_numpy()
        running = np.concatenate([[0], np.cumsum(rows.column("rows").to_numpy())])
        for interval in intervals:
            if interval.cluster != cluster or interval.status == "dead":
                continue
            low = np.searchsorted(seqs, interval.seq_from, side="left")
            high = (len(seqs) if interval.seq_to is None
                    else np.searchsorted(seqs, interval.seq_to, side="left"))
            counts[(cluster, interval.broker_id)] += int(running[high] - running[low])
    return counts


def requests_per_broker(
    tables_dir: Path, run_id: str, intervals: list[Interval]
) -> list[RequestRow]:
    """Requests each broker was sent, by type: LeaderAndIsr and StopReplica rows name their
    recipient; an UpdateMetadata row counts once per recipient (one partition update)."""
    um = open_table(tables_dir, "update_metadata_requests")
    listed = _listed_recipients(scanner(um, run_id, ["cluster", "to_brokers"],
                                        pc.field("to_brokers").is_valid()))
    broadcast = _broadcast_recipients(
        scanner(um, run_id, ["cluster", "seq"], pc.field("to_brokers").is_null()), intervals
    )
    by_type = [
        _recipient_counts(tables_dir, run_id, "leader_and_isr_requests"),
        {k: listed.get(k, 0) + broadcast.get(k, 0) for k in {*listed, *broadcast}},
        _recipient_counts(tables_dir, run_id, "stop_replica_requests"),
    ]
    brokers = sorted({k for counts in by_type for k in counts})
    clusters = len({c for c, _ in brokers})
    return [
        RequestRow(f"broker {b}" if clusters == 1 else f"{c} · broker {b}",
                   tuple(counts.get((c, b), 0) for counts in by_type))
        for c, b in brokers
        if any(counts.get((c, b), 0) for counts in by_type)
    ]
