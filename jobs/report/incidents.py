"""The page's incidents, what their unclean elections lost, and its "what changed"
digest: the replay's `incidents`, `data_loss` and `changes` tables of one run (small: one
row per incident, per election, per change). Tables written before one existed read as
None, and the page says so."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow.compute as pc

from jobs.engine.change_digest import named
from jobs.engine.data_loss_lines import figure
from jobs.engine.incident_text import cause_text, shares_text
from jobs.report.tables import microseconds, open_table, read

INCIDENT_COLUMNS = [
    "cluster", "incident_id", "cause_event", "cause_broker", "start_ts", "end_ts", "end_seq",
    "seconds", "peak_partitions_offline", "partitions_affected", "topics_affected",
    "offline_partition_seconds", "under_min_isr_partition_seconds", "unclean_elections",
    "recovery_event", "recovery_broker", "worst_topics", "brokers",
]


class Incidents(NamedTuple):
    total: int
    rows: list[dict[str, Any]]  # the worst, in time order; each with its `losses`


class Loss(NamedTuple):
    """A `data_loss` row as the page shows it."""

    cluster: str
    incident_id: int | None
    seq: int
    ts: int | None
    partition: str  # t-0
    result: str
    figure: str  # `jobs.engine.data_loss_lines.figure`
    detail: str
    proof: list[tuple[str, str]]  # (file:line, the line)


LOSS_COLUMNS = ["cluster", "incident_id", "seq", "ts", "topic", "partition", "result",
                "messages_lost", "messages_lost_at_least", "messages_lost_at_most", "detail",
                "evidence"]


def losses(tables_dir: Path, run_id: str) -> list[Loss] | None:
    """The run's unclean elections and what they lost, in seq order; None when the replay
    wrote no `data_loss`."""
    if not (tables_dir / "data_loss").is_dir():
        return None
    table = read(open_table(tables_dir, "data_loss"), run_id, LOSS_COLUMNS)
    table = table.set_column(table.schema.get_field_index("ts"), "ts",
                             microseconds(table.column("ts")))
    rows = sorted(table.to_pylist(), key=lambda r: (r["cluster"], r["seq"], r["topic"],
                                                    r["partition"]))
    return [Loss(r["cluster"], r["incident_id"], r["seq"], r["ts"],
                 f"{r['topic']}-{r['partition']}", r["result"], figure(r), r["detail"],
                 [(e["source"], e["text"]) for e in r["evidence"] or []]) for r in rows]


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


def incidents(tables_dir: Path, run_id: str, top: int,
              lost: list[Loss] | None = None) -> Incidents | None:
    """The run's `top` incidents with the most offline, then under-min-ISR,
    partition-seconds, in start order, each with what its unclean elections lost
    (`losses`: those whose election closed one of its offline windows); None when the
    replay wrote no `incidents`."""
    if not (tables_dir / "incidents").is_dir():
        return None
    table = read(open_table(tables_dir, "incidents"), run_id, INCIDENT_COLUMNS)
    for column in ("start_ts", "end_ts"):
        table = table.set_column(table.schema.get_field_index(column), column,
                                 microseconds(table.column(column)))
    rows = table.to_pylist()
    ends = run_ends(tables_dir, run_id)
    elected = failover_controllers(tables_dir, run_id)
    for r in rows:
        r["open_for"] = open_for(r["start_ts"], ends.get(r["cluster"]))
    worst = sorted(rows, key=lambda r: (-(r["offline_partition_seconds"] or 0.0),
                                        -(r["under_min_isr_partition_seconds"] or 0.0),
                                        r["cluster"], r["incident_id"]))[:top]
    for r in worst:
        shares = shares_text(r["brokers"], r["offline_partition_seconds"])
        r["cause"] = cause_text(r["cause_event"], r["cause_broker"], r["brokers"],
                                elected.get((r["cluster"], r["incident_id"]))) + (
            f" ({shares})" if shares else "")
        r["recovery"] = who(r["recovery_event"], r["recovery_broker"])
        r["topics"] = ", ".join(t["topic"] for t in r["worst_topics"] or [])
        r["losses"] = [x for x in lost or [] if (x.cluster, x.incident_id) == (
            r["cluster"], r["incident_id"])]
    return Incidents(len(rows), sorted(worst, key=lambda r: (r["start_ts"] or 0, r["cluster"],
                                                             r["incident_id"])))


def failover_controllers(tables_dir: Path, run_id: str) -> dict[tuple[str, int], int]:
    """(cluster, seq) of each failover of the run -> the controller it elected: an
    incident a failover opened without losing a broker names that one."""
    if not (tables_dir / "controller_timeline").is_dir():
        return {}
    table = read(open_table(tables_dir, "controller_timeline"), run_id,
                 ["cluster", "seq", "controller_id"])
    return {(c, s): b for c, s, b in zip(*(table.column(n).to_pylist() for n in table.column_names),
                                          strict=True) if s is not None and b is not None}


def run_ends(tables_dir: Path, run_id: str) -> dict[str, int]:
    """Each cluster's last event time of the run (microseconds), from `run_summary`."""
    if not (tables_dir / "run_summary").is_dir():
        return {}
    table = read(open_table(tables_dir, "run_summary"), run_id, ["cluster", "period_end"])
    ends = microseconds(table.column("period_end")).to_pylist()
    return {c: e for c, e in zip(table.column("cluster").to_pylist(), ends, strict=True)
            if e is not None}


def open_for(start: int | None, end: int | None) -> str:
    """An open incident as the CLI words it: "open, 120 s so far" (to the run's last event)."""
    if start is None or end is None:
        return "open"
    return f"open, {max(end - start, 0) / 1e6:.0f} s so far"


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
