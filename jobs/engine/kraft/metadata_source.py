"""Finding and reading a KRaft input of `jobs.replay`: the `metadata_records` table of
`jobs.ingest` (its Parquet schema has `record_type` and `api_key`), given itself or as the
ingest output folder that holds it. Read with pyarrow on the driver.

A replay starts from the latest snapshot, as a Kafka node loads its newest `*.checkpoint`
and then replays the log from the snapshot's end offset: the records of the other
snapshots, and the log records below that end offset (already in the snapshot), are
skipped and counted. Without a snapshot the records are folded in offset order.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from pyarrow import fs as pafs

from jobs.store.filesystem import arrow_filesystem
from statemachine.kraft.records import MetadataRecord

RECORDS, SUMMARY = "metadata_records", "metadata_summary"
KRAFT_COLUMNS = frozenset(("record_type", "api_key"))
# `<end offset, 20 digits>-<epoch, 10 digits>.checkpoint`, Kafka's `Snapshots` file names.
_SNAPSHOT = re.compile(r"(?:^|/)(\d{20})-(\d{10})\.checkpoint$")
_LISTS = frozenset(("isr", "replicas", "adding_replicas", "removing_replicas", "elr",
                    "last_known_elr"))
BEFORE_SNAPSHOT = "before_snapshot"  # skipped: in the snapshot the replay starts from


@dataclass(frozen=True)
class KraftInput:
    records: str  # the metadata_records directory
    summary: str | None  # metadata_summary beside it, when the input is an ingest folder


@dataclass
class ClusterLog:
    """One cluster's records in replay order, and what was skipped before the fold."""

    records: list[MetadataRecord] = field(default_factory=list)
    rows_read: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    snapshot: str | None = None  # the snapshot the replay starts from
    from_snapshot: int = 0  # the first records of `records` are the snapshot's
    # Every snapshot read, by its end offset (it holds the records below it), and the log
    # offsets of every record read outside snapshots, folded or not (`continuity`).
    snapshot_ends: dict[str, int] = field(default_factory=dict)
    log_offsets: list[int] = field(default_factory=list)


def _dataset(path: str) -> ds.Dataset | None:
    """The Parquet dataset of a directory, its schema from its first file (a large event
    log is listed, not opened file by file), or None."""
    fmt = ds.ParquetFileFormat(read_options={"coerce_int96_timestamp_unit": "us"})
    try:
        opened = arrow_filesystem(path)
        if opened is None:
            return None
        filesystem, inner = opened
        if filesystem.get_file_info(inner).type != pafs.FileType.Directory:
            return None
        found = ds.dataset(inner, format=fmt, filesystem=filesystem, partitioning=None)
    except (OSError, ValueError):  # no client, not Parquet, nothing readable
        return None
    return found if found.files else None


def find_kraft_input(events: str) -> KraftInput | None:
    """The KRaft table `events` is or holds, or None (a ZooKeeper-mode event log, or a path
    pyarrow cannot open: those go the ZooKeeper replay's way)."""
    base = events.rstrip("/")
    for path, summary in ((f"{base}/{RECORDS}", f"{base}/{SUMMARY}"), (base, None)):
        found = _dataset(path)
        if found is not None and set(found.schema.names) >= KRAFT_COLUMNS:
            has_summary = summary is not None and _dataset(summary) is not None
            return KraftInput(path, summary if has_summary else None)
    return None


def ingest_noops(kraft: KraftInput) -> dict[str, int]:
    """Per cluster, the NoOpRecords `jobs.ingest` counted and did not write (its
    `metadata_summary` total rows); nothing without the summary."""
    if kraft.summary is None:
        return {}
    found = _dataset(kraft.summary)
    if found is None:
        return {}
    table = found.to_table(columns=["cluster", "source", "noops"],
                           filter=pc.field("source") == "*")
    out: dict[str, int] = {}
    for cluster, noops in zip(table.column("cluster").to_pylist(),
                              table.column("noops").to_pylist(), strict=True):
        out[str(cluster)] = out.get(str(cluster), 0) + int(noops or 0)
    return out


def records_of(table: pa.Table) -> list[MetadataRecord]:
    """The `metadata_records` rows as the core's records: the columns to Python once, then
    one tuple a row."""
    columns: list[list[Any]] = []
    for name in MetadataRecord._fields:
        column = table.column(name)
        if name == "ts":
            column = pc.cast(column, pa.int64())
        values = column.to_pylist()
        if name in _LISTS:
            values = [None if v is None else tuple(v) for v in values]
        columns.append(values)
    return [MetadataRecord(*row) for row in zip(*columns, strict=True)]


def read_clusters(kraft: KraftInput) -> dict[str, ClusterLog]:
    """Per cluster, its records in replay order (module docstring)."""
    found = _dataset(kraft.records)
    assert found is not None  # find_kraft_input opened it
    table = found.to_table(columns=["cluster", "source", *MetadataRecord._fields])
    clusters = [str(c) for c in table.column("cluster").to_pylist()]
    sources = [str(s or "") for s in table.column("source").to_pylist()]
    records = records_of(table)
    by_cluster: dict[str, list[tuple[str, MetadataRecord]]] = {}
    for cluster, source, r in zip(clusters, sources, records, strict=True):
        by_cluster.setdefault(cluster, []).append((source, r))
    return {c: in_replay_order(rows) for c, rows in sorted(by_cluster.items())}


def in_replay_order(rows: list[tuple[str, MetadataRecord]],
                    snapshots: dict[str, int] | None = None) -> ClusterLog:
    """The records of one cluster from its latest snapshot on (module docstring).
    `snapshots`: the cluster's, when `rows` are some of its rows (a topic bucket's)."""
    out = ClusterLog(rows_read=len(rows))
    if snapshots is None:
        snapshots = {s: int(m.group(1)) for s, _ in rows if (m := _SNAPSHOT.search(s))}
    start = max(snapshots.items(), key=lambda kv: (kv[1], kv[0]), default=None)
    head: list[tuple[int, int, MetadataRecord]] = []
    log: list[tuple[int, int, MetadataRecord]] = []
    for i, (source, r) in enumerate(rows):
        if start is not None and source == start[0]:
            head.append((-1 if r.offset is None else r.offset, i, r))
        elif source in snapshots or (start is not None and r.offset is not None
                                     and r.offset < start[1]):
            out.skipped[BEFORE_SNAPSHOT] += 1
        else:
            log.append((-1 if r.offset is None else r.offset, i, r))
    head.sort(key=lambda t: (t[0], t[1]))
    log.sort(key=lambda t: (t[0], t[1]))
    out.records = [r for _, _, r in head] + [r for _, _, r in log]
    out.snapshot = None if start is None else start[0]
    out.from_snapshot = len(head)
    out.snapshot_ends = snapshots
    out.log_offsets = sorted(r.offset for s, r in rows
                             if s not in snapshots and r.offset is not None)
    return out


def segment_ranges(kraft: KraftInput) -> dict[str, list[tuple[int, int]]] | None:
    """Per cluster, the offsets each segment or dump held, first to last, NoOps included
    (`metadata_summary`: the rows miss the NoOps `jobs.ingest` counted without writing);
    None without the summary (an offset missing from the rows may then be a NoOp)."""
    found = None if kraft.summary is None else _dataset(kraft.summary)
    if found is None:
        return None
    table = found.to_table(columns=["cluster", "input_kind", "first_offset", "last_offset"],
                           filter=(pc.field("source") != "*")
                           & (pc.field("input_kind") != "snapshot"))
    out: dict[str, list[tuple[int, int]]] = {}
    for cluster, first, last in zip(table.column("cluster").to_pylist(),
                                    table.column("first_offset").to_pylist(),
                                    table.column("last_offset").to_pylist(), strict=True):
        ranges = out.setdefault(str(cluster), [])
        if first is not None and last is not None:
            ranges.append((int(first), int(last)))
    return out
