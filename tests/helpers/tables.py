"""Output tables written by hand with pyarrow, as the replay lays them out."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def summary_row(tables: Path, run_id: str, finished_at: datetime | None) -> None:
    """One run's `run_summary` partition (run_id only in the path, as Spark writes it)."""
    where = tables / "run_summary" / f"run_id={run_id}"
    where.mkdir(parents=True)
    pq.write_table(pa.table({"finished_at": pa.array([finished_at], pa.timestamp("us"))}),
                   where / "part-00000.parquet")
