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
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.common.tables import write_table
from jobs.replay.codec import GroupCounts, decode_counts, decoder
from jobs.replay.supersede import supersede_state_rows
from schemas.state import COUNTS_TAG, OFFLINE_LISTED
from schemas.tables import REPLAY_TABLES, STATE_TABLES, TABLES


@dataclass
class ClusterCounts:
    rows_read: int = 0
    rows_applied: int = 0
    rows_duplicate: int = 0
    rows_quarantined: int = 0
    rows_late: int = 0
    findings_by_kind: Counter[str] = field(default_factory=Counter)
    rows_written: Counter[str] = field(default_factory=Counter)
    # bucket -> (partitions by state, first offline partitions), from the bucket's latest
    # batch: every batch a bucket is in reports the full state of its partitions.
    buckets: dict[int, tuple[dict[str, int], list[tuple[str, int]]]] = field(
        default_factory=dict)

    @property
    def partitions_by_state(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for states, _ in self.buckets.values():
            total.update(states)
        return total

    def offline_partitions(self, limit: int = OFFLINE_LISTED) -> list[tuple[str, int]]:
        listed = sorted(p for _, off in self.buckets.values() for p in off)
        return listed[:limit]

    def add(self, bucket: int, counts: GroupCounts) -> None:
        """One group's counts of one batch."""
        self.rows_read += counts.rows_read
        self.rows_applied += counts.rows_applied
        self.rows_duplicate += counts.rows_duplicate
        self.rows_quarantined += counts.rows_quarantined
        self.rows_late += counts.rows_late
        self.findings_by_kind.update(json.loads(counts.findings_by_kind))
        self.buckets[bucket] = (
            json.loads(counts.partitions_by_state),
            [(topic, partition) for topic, partition in json.loads(counts.offline_partitions)],
        )


@dataclass
class BatchSink:
    """Callable for `foreachBatch`; accumulates the run's counts across micro-batches."""

    out_dir: str
    run_id: str
    buckets: int
    log: Callable[[str], None] = print
    counts: dict[str, ClusterCounts] = field(default_factory=dict)
    batches: int = 0
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
            table_rows, replayed = self._tally(batch)
            self.fold_seconds += time.perf_counter() - started
            started = time.perf_counter()
            self._write_tables(batch, table_rows, replayed)
            self.write_seconds += time.perf_counter() - started
        finally:
            batch.unpersist()
        self.batches += 1
        self.log(
            f"batch {batch_id}: wrote "
            + ", ".join(f"{t}={table_rows.get(t, 0)}" for t in REPLAY_TABLES)
        )

    def _tally(self, batch: DataFrame) -> tuple[Counter[str], dict[str, set[int]]]:
        """Add the batch's counts to the run's; return the rows per table in this batch and
        the buckets it replayed per cluster. The first action on the batch: it runs the
        stateful replay."""
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
        table_rows: Counter[str] = Counter()
        replayed: dict[str, set[int]] = {}  # cluster -> buckets this batch replayed
        for r in summary:
            c = self.counts.setdefault(r["cluster"], ClusterCounts())
            if r["table"] == COUNTS_TAG:
                for group in r["counts"]:
                    bucket = int(group["bucket"])
                    replayed.setdefault(r["cluster"], set()).add(bucket)
                    c.add(bucket, decode_counts(group["payload"]))
            else:
                table_rows[r["table"]] += int(r["rows"])
                if not (r["table"] in STATE_TABLES and self.batches):
                    c.rows_written[r["table"]] += int(r["rows"])
        return table_rows, replayed

    def _write_tables(
        self, batch: DataFrame, table_rows: Counter[str], replayed: dict[str, set[int]]
    ) -> None:
        payloads = batch.select("cluster", "table", "payload")
        # One table after the other. Submitted from 4 threads (they are independent jobs over
        # the persisted batch) they were no faster: on the bench log (1M events, 2 cores) the
        # writes took 27.8 s from 4 threads against 24.2 s from one, one run each.
        for table in REPLAY_TABLES:
            self._write_table(payloads, table, table_rows.get(table, 0), replayed)

    def _write_table(
        self, payloads: DataFrame, table: str, rows: int, replayed: dict[str, set[int]]
    ) -> None:
        spark = payloads.sparkSession
        df = (
            payloads.where(F.col("table") == table)
            .select("cluster", "payload")
            .mapInArrow(decoder(table, self.run_id), TABLES[table])
        )
        # The first batch of this invocation replaces the run's partition of every table.
        replace = self.batches == 0
        if table in STATE_TABLES and not replace:
            # A later batch of a split run: its buckets' rows replace the earlier ones.
            now = supersede_state_rows(spark, df, self.out_dir, table, self.run_id,
                                       self.buckets, replayed)
            for cluster, n in now.items():
                self.counts.setdefault(cluster, ClusterCounts()).rows_written[table] = n
            return
        write_table(spark, df, self.out_dir, table, self.run_id, rows, replace)
