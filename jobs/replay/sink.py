"""`foreachBatch` of the replay query: split the tagged rows by table, decode, write.

The batch is persisted once; one small aggregation gives the per-(cluster, table) row counts
and collects the groups' counts payloads (one small row per group; no output row is
collected to the driver); then each table is decoded from its payloads with `mapInArrow`
and written as Parquet.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.common.tables import write_table
from jobs.replay import faults
from jobs.replay.codec import GroupCounts, decode_counts, decoder
from jobs.replay.ledger import BatchCounts, ClusterCounts, RunLedger
from jobs.replay.supersede import supersede_state_rows
from schemas.state import COUNTS_TAG
from schemas.tables import REPLAY_TABLES, STATE_TABLES, TABLES


def add_group(counts: ClusterCounts, bucket: int, group: GroupCounts) -> None:
    """One group's counts of one batch."""
    counts.rows_read += group.rows_read
    counts.rows_applied += group.rows_applied
    counts.rows_duplicate += group.rows_duplicate
    counts.rows_quarantined += group.rows_quarantined
    counts.rows_late += group.rows_late
    counts.findings_by_kind.update(json.loads(group.findings_by_kind))
    counts.buckets[bucket] = (
        json.loads(group.partitions_by_state),
        [(topic, partition) for topic, partition in json.loads(group.offline_partitions)],
    )
    counts.applied_through = max(counts.applied_through, group.watermark)
    counts.last_ts = max(counts.last_ts, group.last_ts)


@dataclass
class BatchSink:
    """Callable for `foreachBatch`: writes each batch's tables, then records its counts in
    the run's ledger (before Spark commits the batch)."""

    out_dir: str
    run_id: str
    buckets: int
    ledger: RunLedger
    log: Callable[[str], None] = print
    batches: int = 0  # micro-batches this invocation wrote
    # The stateful replay runs when the persisted batch is first computed (the summary
    # aggregation), so its time is `fold_seconds`; decoding and writing is `write_seconds`.
    fold_seconds: float = 0.0
    write_seconds: float = 0.0

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        # On disk, not in the JVM heap: the batch holds every output row of the run
        # (compressed), so in memory it would grow with the events.
        batch = batch.persist(StorageLevel.DISK_ONLY)
        try:
            started = time.perf_counter()
            counts, table_rows, replayed = self._tally(batch)
            self.fold_seconds += time.perf_counter() - started
            started = time.perf_counter()
            # Rows of an earlier batch of this run (this invocation's or a killed one's)
            # are in the run's partitions already: append to them, never replace them.
            first = not self.ledger.earlier_than(batch_id)
            self._write_tables(batch, table_rows, replayed, counts, first)
            self.write_seconds += time.perf_counter() - started
        finally:
            batch.unpersist()
        self.ledger.record(batch_id, counts)
        faults.reached("batch_written")
        self.batches += 1
        self.log(
            f"batch {batch_id}: wrote "
            + ", ".join(f"{t}={table_rows.get(t, 0)}" for t in REPLAY_TABLES)
        )

    def _tally(self, batch: DataFrame) -> tuple[BatchCounts, Counter[str], dict[str, set[int]]]:
        """The batch's counts per cluster, its rows per table and the buckets it replayed
        per cluster. The first action on the batch: it runs the stateful replay."""
        summary = (
            batch.groupBy("cluster", "table")
            .agg(
                F.sum("rows").alias("rows"),
                F.collect_list(  # nulls are left out: only the counts rows are collected
                    F.when(F.col("table") == COUNTS_TAG, F.struct("bucket", "payload"))
                ).alias("counts"),
            )
            .collect()
        )
        counts: BatchCounts = {}
        table_rows: Counter[str] = Counter()
        replayed: dict[str, set[int]] = {}  # cluster -> buckets this batch replayed
        for r in summary:
            c = counts.setdefault(r["cluster"], ClusterCounts())
            if r["table"] == COUNTS_TAG:
                for group in r["counts"]:
                    bucket = int(group["bucket"])
                    replayed.setdefault(r["cluster"], set()).add(bucket)
                    add_group(c, bucket, decode_counts(group["payload"]))
            else:
                table_rows[r["table"]] += int(r["rows"])
                c.rows_written[r["table"]] += int(r["rows"])
        return counts, table_rows, replayed

    def _write_tables(self, batch: DataFrame, table_rows: Counter[str],
                      replayed: dict[str, set[int]], counts: BatchCounts, first: bool) -> None:
        payloads = batch.select("cluster", "table", "payload")
        # One table after the other. Submitted from 4 threads (they are independent jobs over
        # the persisted batch) they were no faster: on the bench log (1M events, 2 cores) the
        # writes took 27.8 s from 4 threads against 24.2 s from one, one run each.
        for table in REPLAY_TABLES:
            df = (
                payloads.where(F.col("table") == table)
                .select("cluster", "payload")
                .mapInArrow(decoder(table, self.run_id), TABLES[table])
            )
            if table in STATE_TABLES and not first:
                # A later batch of the run: its buckets' rows replace the earlier ones.
                now = supersede_state_rows(batch.sparkSession, df, self.out_dir, table,
                                           self.run_id, self.buckets, replayed)
                for cluster, n in now.items():
                    counts.setdefault(cluster, ClusterCounts()).rows_written[table] = n
                continue
            write_table(batch.sparkSession, df, self.out_dir, table, self.run_id,
                        table_rows.get(table, 0), replace=first)
