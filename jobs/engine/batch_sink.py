"""`foreachBatch` of the replay query: the batch's tables, then its ledger record.

Where pyarrow can open `--out` (local disks, HDFS, S3: `jobs.store.staging`), the workers
that fold the groups write the tables' files themselves into a staging directory; the batch
comes back to the driver as its tagged rows, one small row per (group, table) that only
counts (and one counts row per group), and the driver commits the staged files.

Elsewhere the tagged rows carry the tables' rows as payloads: the batch is persisted once,
one small aggregation gives the per-(cluster, table) row counts and collects the groups'
counts payloads (no output row comes to the driver), then each table is decoded from its
payloads with `mapInArrow` and written by Spark's Parquet writer.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from pyspark import StorageLevel
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.common import kill_points
from jobs.common.uris import scheme_of
from jobs.engine.codec import GroupCounts, decode_counts, decoder
from jobs.store.ledger import BatchCounts, ClusterCounts, RunLedger
from jobs.store.staging import STAGING_PROPERTY, StagingArea, file_schema
from jobs.store.supersede import supersede_state_rows
from jobs.store.tables import path_exists, write_table
from schemas.state import COUNTS_TAG, SHARED_TAGS, SHARED_WHOLE_TAG
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


def add_shared(c: ClusterCounts, tag: str, events: int, groups: int = 1) -> None:
    """What-if variant's groups that took rows from the reference's fold."""
    c.events_shared += events
    if tag == SHARED_WHOLE_TAG:
        c.groups_shared += groups


def tally_rows(tagged: list[Row]) -> tuple[BatchCounts, Counter[str]]:
    """The batch's counts per cluster and its rows per table, from its tagged rows (staged
    tables: they hold no output row)."""
    counts: BatchCounts = {}
    table_rows: Counter[str] = Counter()
    for r in tagged:
        c = counts.setdefault(r["cluster"], ClusterCounts())
        if r["table"] == COUNTS_TAG:
            add_group(c, int(r["bucket"]), decode_counts(r["payload"]))
        elif r["table"] in SHARED_TAGS:
            add_shared(c, r["table"], int(r["rows"]))
        else:
            table_rows[r["table"]] += int(r["rows"])
            c.rows_written[r["table"]] += int(r["rows"])
    return counts, table_rows


def staged_frame(spark: SparkSession, staging: StagingArea, table: str) -> DataFrame:
    """The rows this batch staged for `table`, in the table's schema."""
    body = T.StructType([f for f in TABLES[table].fields if f.name != "run_id"])
    assert body.fieldNames() == file_schema(table).names
    if not path_exists(spark, staging.batch_dir(table)):
        return spark.createDataFrame([], TABLES[table])
    return (spark.read.schema(body).parquet(staging.batch_dir(table))
            .withColumn("run_id", F.lit(staging.run_id))
            .select(*TABLES[table].fieldNames()))


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
        # Rows of an earlier batch of this run (this invocation's or a killed one's) are in
        # the run's partitions already: append to them, never replace them.
        first = not self.ledger.earlier_than(batch_id)
        if StagingArea.usable(self.out_dir):
            counts, table_rows = self._staged_batch(batch, batch_id, first)
        else:
            counts, table_rows = self._payload_batch(batch, first)
        self.ledger.record(batch_id, counts)
        kill_points.reached("batch_written")
        self.batches += 1
        self.log(
            f"batch {batch_id}: wrote "
            + ", ".join(f"{t}={table_rows.get(t, 0)}" for t in REPLAY_TABLES)
        )

    def _staged_batch(self, batch: DataFrame, batch_id: int,
                      first: bool) -> tuple[BatchCounts, Counter[str]]:
        """The workers write the tables while they fold; the driver commits the files."""
        spark = batch.sparkSession
        out = os.path.abspath(self.out_dir) if scheme_of(self.out_dir) == "" else self.out_dir
        staging = StagingArea(out, self.run_id, batch_id)
        staging.clear(spark, REPLAY_TABLES)
        started = time.perf_counter()
        spark.sparkContext.setLocalProperty(STAGING_PROPERTY, staging.to_property())
        try:
            tagged = batch.select("cluster", "bucket", "table", "rows", "payload").collect()
        finally:
            spark.sparkContext.setLocalProperty(STAGING_PROPERTY, None)  # type: ignore[arg-type]
        self.fold_seconds += time.perf_counter() - started
        started = time.perf_counter()
        counts, table_rows = tally_rows(tagged)
        for table in REPLAY_TABLES:
            if table in STATE_TABLES and not first:
                now = supersede_state_rows(
                    spark, staged_frame(spark, staging, table), self.out_dir, table,
                    self.run_id, staged_frame(spark, staging, "partition_states"))
                for cluster, n in now.items():
                    counts.setdefault(cluster, ClusterCounts()).rows_written[table] = n
            elif not staging.commit(spark, table, replace=first) and first:
                staging.write_empty(spark, table)
        staging.clean(spark, REPLAY_TABLES)
        self.write_seconds += time.perf_counter() - started
        return counts, table_rows

    def _payload_batch(self, batch: DataFrame,
                       first: bool) -> tuple[BatchCounts, Counter[str]]:
        # On disk, not in the JVM heap: the batch holds every output row of the run
        # (compressed), so in memory it would grow with the events.
        batch = batch.persist(StorageLevel.DISK_ONLY)
        try:
            started = time.perf_counter()
            counts, table_rows = self._tally(batch)
            self.fold_seconds += time.perf_counter() - started
            started = time.perf_counter()
            self._write_tables(batch, table_rows, counts, first)
            self.write_seconds += time.perf_counter() - started
        finally:
            batch.unpersist()
        return counts, table_rows

    def _tally(self, batch: DataFrame) -> tuple[BatchCounts, Counter[str]]:
        """The batch's counts per cluster and its rows per table. The first action on the
        batch: it runs the stateful replay."""
        summary = (
            batch.groupBy("cluster", "table")
            .agg(
                F.sum("rows").alias("rows"),
                F.count("*").alias("groups"),
                F.collect_list(  # nulls are left out: only the counts rows are collected
                    F.when(F.col("table") == COUNTS_TAG, F.struct("bucket", "payload"))
                ).alias("counts"),
            )
            .collect()
        )
        counts: BatchCounts = {}
        table_rows: Counter[str] = Counter()
        for r in summary:
            c = counts.setdefault(r["cluster"], ClusterCounts())
            if r["table"] == COUNTS_TAG:
                for group in r["counts"]:
                    add_group(c, int(group["bucket"]), decode_counts(group["payload"]))
            elif r["table"] in SHARED_TAGS:
                add_shared(c, r["table"], int(r["rows"]), int(r["groups"]))
            else:
                table_rows[r["table"]] += int(r["rows"])
                c.rows_written[r["table"]] += int(r["rows"])
        return counts, table_rows

    def _write_tables(self, batch: DataFrame, table_rows: Counter[str], counts: BatchCounts,
                      first: bool) -> None:
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
                # A later batch of the run: its partitions' rows replace the earlier ones.
                changed = (payloads.where(F.col("table") == "partition_states")
                           .select("cluster", "payload")
                           .mapInArrow(decoder("partition_states", self.run_id),
                                       TABLES["partition_states"]))
                now = supersede_state_rows(batch.sparkSession, df, self.out_dir, table,
                                           self.run_id, changed)
                for cluster, n in now.items():
                    counts.setdefault(cluster, ClusterCounts()).rows_written[table] = n
                continue
            write_table(batch.sparkSession, df, self.out_dir, table, self.run_id,
                        table_rows.get(table, 0), replace=first)
