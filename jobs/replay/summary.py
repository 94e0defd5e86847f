"""`run_summary` rows (one per run and cluster) and the human summary printed at the end."""

from __future__ import annotations

from datetime import datetime

import pyarrow as pa

from jobs.replay.codec import rows_to_record_batch
from jobs.replay.sink import BatchSink


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
            sorted(c.findings_by_kind.items()), sorted(c.partitions_by_state.items()),
            sorted(c.rows_written.items()), stage,
        )
        out.append(rows_to_record_batch("run_summary", cluster, run_id, [row]))
    return out


def print_summary(out_dir: str, run_id: str, sink: BatchSink) -> None:
    """Partitions by state, offline partitions, findings by kind, where the tables are."""
    print(f"\n== replay run {run_id} ==")
    for cluster in sorted(sink.counts):
        c = sink.counts[cluster]
        print(f"cluster {cluster}: rows read {c.rows_read} = applied {c.rows_applied}"
              f" + duplicate {c.rows_duplicate} + quarantined {c.rows_quarantined}"
              f" + late {c.rows_late}")
        by_state = c.partitions_by_state
        print("  partitions by state: "
              + (", ".join(f"{k} {v}" for k, v in sorted(by_state.items())) or "none"))
        offline = c.offline_partitions()
        total_offline = by_state.get("OfflinePartition", 0)
        listed = ", ".join(f"{t}-{p}" for t, p in offline)
        more = " ..." if total_offline > len(offline) else ""
        print(f"  offline partitions: {total_offline}" + (f" ({listed}{more})" if offline else ""))
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(c.findings_by_kind.items()))
        print(f"  findings by kind: {kinds or 'none'}")
    print(f"tables written under {out_dir}/<table>/run_id={run_id}\n", flush=True)
