"""`run_summary` rows (one per run and cluster) and the human summary printed at the end."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pyarrow as pa
from pyspark.sql import functions as F

from jobs.io_tables import table_path
from jobs.replay_codec import rows_to_record_batch
from jobs.replay_sink import BatchSink


def _micros(t: datetime) -> int:
    return int(t.timestamp() * 1_000_000)


def summary_batches(
    sink: BatchSink,
    run_id: str,
    buckets: int,
    started_at: datetime,
    finished_at: datetime,
    seconds: dict[str, float],
) -> list[pa.RecordBatch]:
    stage = sorted((k, round(v, 3)) for k, v in seconds.items())
    out = []
    for cluster in sorted(sink.counts):
        c = sink.counts[cluster]
        row = (
            _micros(started_at), _micros(finished_at), buckets, sink.batches,
            c.rows_read, c.rows_applied, c.rows_duplicate, c.rows_quarantined, c.rows_late,
            sorted(c.findings_by_kind.items()), sorted(c.rows_written.items()), stage,
        )
        out.append(rows_to_record_batch("run_summary", cluster, run_id, [row]))
    return out


def print_summary(spark: Any, out_dir: str, run_id: str, sink: BatchSink) -> None:
    """Partitions by state, offline partitions, findings by kind, where the tables are."""
    states = (
        spark.read.parquet(table_path(out_dir, "partition_states"))
        .where(F.col("run_id") == run_id)
        if sink.counts and any(c.rows_written["partition_states"] for c in sink.counts.values())
        else None
    )
    print(f"\n== replay run {run_id} ==")
    for cluster in sorted(sink.counts):
        c = sink.counts[cluster]
        print(f"cluster {cluster}: rows read {c.rows_read} = applied {c.rows_applied}"
              f" + duplicate {c.rows_duplicate} + quarantined {c.rows_quarantined}"
              f" + late {c.rows_late}")
        if states is not None:
            mine = states.where(F.col("cluster") == cluster)
            by_state = {r["state"]: r["count"] for r in mine.groupBy("state").count().collect()}
            print("  partitions by state: "
                  + (", ".join(f"{k} {v}" for k, v in sorted(by_state.items())) or "none"))
            offline = (
                mine.where(F.col("state") == "OfflinePartition")
                .select("topic", "partition").orderBy("topic", "partition").limit(10).collect()
            )
            total_offline = by_state.get("OfflinePartition", 0)
            listed = ", ".join(f"{r['topic']}-{r['partition']}" for r in offline)
            more = " ..." if total_offline > len(offline) else ""
            print(f"  offline partitions: {total_offline}"
                  + (f" ({listed}{more})" if offline else ""))
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(c.findings_by_kind.items()))
        print(f"  findings by kind: {kinds or 'none'}")
    print(f"tables written under {out_dir}/<table>/run_id={run_id}\n", flush=True)
