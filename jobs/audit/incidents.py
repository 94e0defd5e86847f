"""The post-mortem's first lines: the run's incidents (the `incidents` table the replay
writes), one line each, in the words an on-call engineer uses: which event took how many
partitions of how many topics offline, for how long, and which event brought them back.

Only the run's rows are read (a few per night); the worst `top` by partition-seconds are
printed, in the order they started.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jobs.audit.postmortem import time_text
from jobs.engine.incident_text import cause_text, shares_text
from jobs.store.tables import read_table_or_empty


def _who(event: str | None, broker: int | None) -> str:
    what = event or "an unknown event"
    return what if broker is None else f"{what} of broker {broker}"


def _length(r: dict[str, Any], as_of: datetime | None) -> str:
    """"for 442.1 s"; an open incident "open, 120 s so far" (up to the run's last event)."""
    if r["end_seq"] is not None:
        return f"for {r['seconds'] or 0.0:.1f} s"
    if as_of is None or r["start_ts"] is None:
        return "open"
    return f"open, {max((as_of - r['start_ts']).total_seconds(), 0.0):.0f} s so far"


def incident_line(r: dict[str, Any], as_of: datetime | None = None) -> str:
    """`incident at seq 60: BrokerFailure of broker 3 at 2026-11-20 00:01:00 took 2
    partition(s) of 2 topic(s) offline or under min ISR (peak 1 offline) open, 140 s so
    far, ...; still open at the run's end` (`as_of`: the run's last event time). An
    incident of several brokers names them all, then each one's share."""
    cause = cause_text(r["cause_event"], r["cause_broker"], r.get("brokers"),
                       r.get("new_controller"))
    took = (f"incident at seq {r['cause_seq']}: {cause} "
            f"at {time_text(r['start_ts'])} took {r['partitions_affected']} partition(s) of "
            f"{r['topics_affected']} topic(s) offline or under min ISR (peak "
            f"{r['peak_partitions_offline']} offline) {_length(r, as_of)}, "
            f"{r['offline_partition_seconds'] or 0.0:.1f} partition-seconds offline")
    shares = shares_text(r.get("brokers"), r["offline_partition_seconds"])
    if shares:
        took += f" ({shares})"
    if r["end_seq"] is None:
        back = "still open at the run's end"
    else:
        back = (f"{_who(r['recovery_event'], r['recovery_broker'])} at seq {r['end_seq']} "
                f"({time_text(r['end_ts'])}) brought them back")
    unclean = (f"; {r['unclean_elections']} unclean election(s): data may be lost"
               if r["unclean_elections"] else "")
    return f"{took}; {back}{unclean}"


def incident_lines(spark: SparkSession, tables_dir: str, run_id: str,
                   cluster: str | None, top: int) -> dict[str, list[str]]:
    """Per cluster, the lines of the run's worst `top` incidents, in start order, and a
    last line saying how many more the table holds."""
    rows = read_table_or_empty(spark, tables_dir, "incidents").where(F.col("run_id") == run_id)
    if cluster is not None:
        rows = rows.where(F.col("cluster") == cluster)
    by_cluster: dict[str, list[dict[str, Any]]] = {}
    for r in rows.collect():
        by_cluster.setdefault(r["cluster"], []).append(r.asDict(recursive=True))
    elected = failover_controllers(spark, tables_dir, run_id)
    for incident in (i for found in by_cluster.values() for i in found):
        incident["new_controller"] = elected.get((incident["cluster"], incident["cause_seq"]))
    ends = {r["cluster"]: r["period_end"] for r in read_table_or_empty(
        spark, tables_dir, "run_summary").where(F.col("run_id") == run_id)
        .select("cluster", "period_end").collect()}
    out = {}
    for name, found in by_cluster.items():
        worst = sorted(found, key=lambda r: (-(r["offline_partition_seconds"] or 0.0)
                                             - (r["under_min_isr_partition_seconds"] or 0.0),
                                             r["cause_seq"]))[:top]
        lines = [incident_line(r, ends.get(name))
                 for r in sorted(worst, key=lambda r: r["cause_seq"])]
        if len(found) > top:
            lines.append(f"... {len(found) - top} more in the incidents table")
        out[name] = lines
    return out


def failover_controllers(spark: SparkSession, tables_dir: str,
                         run_id: str) -> dict[tuple[str, int], int]:
    """(cluster, seq) of each failover of the run -> the controller it elected (a few rows
    a night): an incident a failover opened without losing a broker names that one."""
    rows = read_table_or_empty(spark, tables_dir, "controller_timeline") \
        .where(F.col("run_id") == run_id).select("cluster", "seq", "controller_id").collect()
    return {(r["cluster"], r["seq"]): r["controller_id"] for r in rows
            if r["seq"] is not None and r["controller_id"] is not None}
