"""`foreachBatch` of the replay query: the batch's tables, then its ledger record.

The workers that fold the groups write the tables' files themselves into a staging
directory (`jobs.store.staging`, through the one file-system layer, `jobs.store.filesystem`);
the batch comes back to the driver as its tagged rows, one small row per (group, table) that
only counts (and one counts row per group), and the driver commits the staged files.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.common import kill_points
from jobs.common.uris import scheme_of
from jobs.engine.codec import GroupCounts, decode_counts
from jobs.store.filesystem import path_exists
from jobs.store.ledger import BatchCounts, ClusterCounts, RunLedger
from jobs.store.staging import STAGING_PROPERTY, StagingArea
from jobs.store.supersede import supersede_state_rows
from jobs.store.tables import file_schema
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
    if not path_exists(staging.batch_dir(table)):
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
    # The stateful replay runs while the batch's tagged rows are collected, so that is
    # `fold_seconds`; committing the staged files is `write_seconds`.
    fold_seconds: float = 0.0
    write_seconds: float = 0.0

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        # Rows of an earlier batch of this run (this invocation's or a killed one's) are in
        # the run's partitions already: append to them, never replace them.
        first = not self.ledger.earlier_than(batch_id)
        counts, table_rows = self._staged_batch(batch, batch_id, first)
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
