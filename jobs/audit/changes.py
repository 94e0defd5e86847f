"""The post-mortem's "what changed" lines: the run's `changes` table (written by the
replay, `jobs.engine.changes_table`), one line per change with its count and first rows."""

from __future__ import annotations

from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jobs.engine.change_digest import CHANGES, named
from jobs.store.tables import read_table_or_empty

SHOWN = 3  # first rows per line (the table keeps five)


def listed(row: dict[str, Any]) -> str:
    """`seq 701 t-0 (6 -> 5)`, `seq 857 broker 6`, `seq 2 events (32 partitions)`."""
    detail = f" ({row['detail']})" if row["detail"] else ""
    return f"seq {row['seq']} {named(row)}{detail}".replace("  ", " ").rstrip()


def change_line(change: str, count: int, first: list[dict[str, Any]]) -> str:
    more = ", ..." if count > min(len(first), SHOWN) else ""
    shown = ", ".join(listed(r) for r in first[:SHOWN])
    return f"{change.replace('_', ' ')} {count}: {shown}{more}"


def change_lines(spark: SparkSession, tables_dir: str, run_id: str,
                 cluster: str | None) -> dict[str, list[str]]:
    """Per cluster, one line per change of the run, in the digest's order."""
    rows = read_table_or_empty(spark, tables_dir, "changes").where(F.col("run_id") == run_id)
    if cluster is not None:
        rows = rows.where(F.col("cluster") == cluster)
    rank = {name: i for i, name in enumerate(CHANGES)}
    found = sorted((r.asDict(recursive=True) for r in rows.collect()),
                   key=lambda r: (r["cluster"], rank.get(r["change"], len(rank)), r["change"]))
    out: dict[str, list[str]] = {}
    for r in found:
        if r["count"]:
            out.setdefault(r["cluster"], []).append(
                change_line(r["change"], r["count"], r["first"] or []))
    return out
