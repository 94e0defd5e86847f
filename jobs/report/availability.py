"""The worst topics, partitions and windows by partition-seconds unavailable (`offline`
windows of partition_windows; a window still open counts up to the log's last event)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from jobs.report.formats import seconds as seconds_text
from jobs.report.tables import microseconds, open_table, read
from jobs.report.timeline import TimeRange
from jobs.store.latest_state_arrow import arrow_state

KEY = ["cluster", "topic", "partition"]


class TopicRow(NamedTuple):
    cluster: str
    topic: str
    partitions: int
    windows: int
    seconds: float
    causes: str


class PartitionRow(NamedTuple):
    cluster: str
    topic: str
    partition: int
    windows: int
    seconds: float
    causes: str


class WindowRow(NamedTuple):
    cluster: str
    topic: str
    partition: int
    start_ts: int
    end_ts: int | None
    seconds: float
    cause: str
    end_event: str


class OfflineAtEnd(NamedTuple):
    """Partitions in OfflinePartition when the run ended (None: the run recorded no
    partition state) and the earliest start of the offline windows still open."""

    partitions: int | None
    since: int | None
    open_windows: int


class Availability(NamedTuple):
    offline_windows: int
    partition_seconds: float
    topics: list[TopicRow]
    partitions: list[PartitionRow]
    windows: list[WindowRow]


def cause_label(event: pa.ChunkedArray, broker: pa.ChunkedArray) -> pa.ChunkedArray:
    """"BrokerFailure of broker 3"; the event alone when it names no broker."""
    named = pc.binary_join_element_wise(
        pc.fill_null(event, "unknown event"), " of broker ", pc.cast(broker, pa.string()), ""
    )
    return pc.if_else(pc.is_null(broker), pc.fill_null(event, "unknown event"), named)


def read_offline(tables_dir: Path, run_id: str, span: TimeRange) -> pa.Table:
    """Offline windows with `effective_seconds` (open ones end at the log's last event) and
    `cause` ("BrokerFailure of broker 3")."""
    table = read(
        open_table(tables_dir, "partition_windows"), run_id,
        [*KEY, "start_ts", "end_ts", "seconds", "cause_event", "cause_broker", "end_event"],
        pc.field("kind") == "offline",
    )
    start = microseconds(table.column("start_ts"))
    open_seconds = pc.divide(pc.cast(pc.subtract(span.end, start), pa.float64()), 1e6)
    return table.append_column(
        "effective_seconds", pc.if_else(pc.is_null(table.column("end_ts")),
                                         pc.max_element_wise(open_seconds, 0.0),
                                         table.column("seconds"))
    ).append_column("cause", cause_label(table.column("cause_event"),
                                         table.column("cause_broker")))


def _causes(offline: pa.Table, keys: list[str], limit: int = 3) -> dict[tuple[object, ...], str]:
    """Per key, its windows' causes by partition-seconds ("X 120 s; Y 30 s")."""
    grouped = offline.group_by([*keys, "cause"]).aggregate([("effective_seconds", "sum")])
    grouped = grouped.sort_by([("effective_seconds_sum", "descending"), ("cause", "ascending")])
    found: dict[tuple[object, ...], list[str]] = {}
    for row in grouped.to_pylist():
        entry = found.setdefault(tuple(row[k] for k in keys), [])
        if len(entry) < limit:
            entry.append(f"{row['cause']} ({seconds_text(row['effective_seconds_sum'])} s)")
    return {k: "; ".join(v) for k, v in found.items()}


def _order(table: pa.Table, seconds: str, keys: list[str]) -> pa.Table:
    return table.sort_by([(seconds, "descending"), *[(k, "ascending") for k in keys]])


def worst_topics(offline: pa.Table, limit: int) -> list[TopicRow]:
    keys = ["cluster", "topic"]
    grouped = offline.group_by(keys).aggregate([
        ("partition", "count_distinct"), ([], "count_all"), ("effective_seconds", "sum"),
    ])
    causes = _causes(offline, keys)
    rows = _order(grouped, "effective_seconds_sum", keys).slice(0, limit).to_pylist()
    return [TopicRow(r["cluster"], r["topic"], r["partition_count_distinct"], r["count_all"],
                     r["effective_seconds_sum"], causes[(r["cluster"], r["topic"])])
            for r in rows]


def worst_partitions(offline: pa.Table, limit: int) -> list[PartitionRow]:
    grouped = offline.group_by(KEY).aggregate([([], "count_all"), ("effective_seconds", "sum")])
    causes = _causes(offline, KEY)
    rows = _order(grouped, "effective_seconds_sum", KEY).slice(0, limit).to_pylist()
    return [PartitionRow(r["cluster"], r["topic"], r["partition"], r["count_all"],
                         r["effective_seconds_sum"],
                         causes[(r["cluster"], r["topic"], r["partition"])])
            for r in rows]


def worst_windows(offline: pa.Table, limit: int) -> list[WindowRow]:
    ordered = _order(offline, "effective_seconds", [*KEY, "start_ts"]).slice(0, limit)
    starts = microseconds(ordered.column("start_ts")).to_pylist()
    ends = microseconds(ordered.column("end_ts")).to_pylist()
    return [WindowRow(r["cluster"], r["topic"], r["partition"], start, end,
                      r["effective_seconds"], r["cause"], r["end_event"] or "still open")
            for r, start, end in zip(ordered.to_pylist(), starts, ends, strict=True)]


def availability(tables_dir: Path, run_id: str, span: TimeRange, limit: int) -> Availability:
    offline = read_offline(tables_dir, run_id, span)
    total = pc.sum(offline.column("effective_seconds")).as_py() or 0.0
    return Availability(offline.num_rows, float(total), worst_topics(offline, limit),
                        worst_partitions(offline, limit), worst_windows(offline, limit))


OFFLINE_STATE = "OfflinePartition"


def _offline_partitions(tables_dir: Path, run_id: str) -> int | None:
    """OfflinePartition partitions after the run: run_summary's `partitions_by_state`
    summed over clusters, else the run's `partition_states` rows (the full state)."""
    summary = read(open_table(tables_dir, "run_summary"), run_id, ["partitions_by_state"])
    maps = [m for m in summary.column("partitions_by_state").to_pylist() if m is not None]
    if maps:
        return sum(int(dict(m).get(OFFLINE_STATE) or 0) for m in maps)
    if not (tables_dir / "partition_states").is_dir():
        return None
    states = arrow_state(tables_dir, "partition_states", run_id).column("state")
    return int(pc.sum(pc.equal(states, OFFLINE_STATE)).as_py() or 0)


def offline_at_end(tables_dir: Path, run_id: str) -> OfflineAtEnd:
    """The header's "offline at end of run": how many, and since when (the earliest
    `start_ts` of the offline windows the run left open, `end_seq` null)."""
    still_open = read(open_table(tables_dir, "partition_windows"), run_id, ["start_ts"],
                      (pc.field("kind") == "offline") & pc.field("end_seq").is_null())
    since = pc.min(microseconds(still_open.column("start_ts"))).as_py()
    return OfflineAtEnd(_offline_partitions(tables_dir, run_id),
                        None if since is None else int(since), still_open.num_rows)
