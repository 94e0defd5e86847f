"""The page's incidents and its "what changed" digest: the replay's `incidents` and
`changes` tables of one run (small: one row per incident, one per change). Tables written
before either existed read as None, and the page says so."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow.compute as pc

from jobs.engine.change_digest import named
from jobs.report.tables import microseconds, open_table, read

INCIDENT_COLUMNS = [
    "cluster", "incident_id", "cause_event", "cause_broker", "start_ts", "end_ts", "end_seq",
    "seconds", "peak_partitions_offline", "partitions_affected", "topics_affected",
    "offline_partition_seconds", "under_min_isr_partition_seconds", "unclean_elections",
    "recovery_event", "recovery_broker", "worst_topics",
]


class Incidents(NamedTuple):
    total: int
    rows: list[dict[str, Any]]  # the worst, in time order


@dataclass(frozen=True)
class ChangeRow:
    cluster: str
    change: str
    count: int
    first: list[dict[str, Any]]


def who(event: str | None, broker: int | None) -> str:
    """"BrokerFailure of broker 3"; the event alone when it names no broker."""
    if event is None:
        return ""
    return event if broker is None else f"{event} of broker {broker}"


def incidents(tables_dir: Path, run_id: str, top: int) -> Incidents | None:
    """The run's `top` incidents with the most offline, then under-min-ISR,
    partition-seconds, in start order; None when the replay wrote no `incidents`."""
    if not (tables_dir / "incidents").is_dir():
        return None
    table = read(open_table(tables_dir, "incidents"), run_id, INCIDENT_COLUMNS)
    for column in ("start_ts", "end_ts"):
        table = table.set_column(table.schema.get_field_index(column), column,
                                 microseconds(table.column(column)))
    rows = table.to_pylist()
    worst = sorted(rows, key=lambda r: (-(r["offline_partition_seconds"] or 0.0),
                                        -(r["under_min_isr_partition_seconds"] or 0.0),
                                        r["cluster"], r["incident_id"]))[:top]
    for r in worst:
        r["cause"] = who(r["cause_event"], r["cause_broker"])
        r["recovery"] = who(r["recovery_event"], r["recovery_broker"])
        r["topics"] = ", ".join(t["topic"] for t in r["worst_topics"] or [])
    return Incidents(len(rows), sorted(worst, key=lambda r: (r["start_ts"] or 0, r["cluster"],
                                                             r["incident_id"])))


def changes(tables_dir: Path, run_id: str, order: tuple[str, ...]) -> list[ChangeRow] | None:
    """The run's changes, per cluster in `order`; None when the replay wrote no `changes`."""
    if not (tables_dir / "changes").is_dir():
        return None
    table = read(open_table(tables_dir, "changes"), run_id,
                 ["cluster", "change", "count", "first"])
    table = table.filter(pc.greater(table.column("count"), 0))
    rank = {name: i for i, name in enumerate(order)}
    rows = sorted(table.to_pylist(), key=lambda r: (r["cluster"], rank.get(r["change"], 99),
                                                    r["change"]))
    return [ChangeRow(r["cluster"], r["change"], r["count"], [_listed(f) for f in r["first"]])
            for r in rows]


def _listed(row: dict[str, Any]) -> dict[str, Any]:
    """A first row with what it names as one text: `t-0`, `t`, `broker 3`."""
    return {"seq": row["seq"], "ts": row["ts"], "what": named(row),
            "detail": row["detail"] or ""}
