"""The `changes` digest's counts that grow with a large run's rows, as one Spark query over
its committed tables: the partitions it created (`topic_created`, `partitions_added`, as
`jobs.engine.change_digest.created` defines them) and the elections that moved a leader
(`leader_moved`, as `change_digest.leaders_moved` defines them). The driver receives per
cluster and change its count and its first `FIRST` rows, never the rows.

* creations: the partition machine's applied NonExistentPartition -> NewPartition
  transitions of the run; per (cluster, topic) the seq that created partition 0 (the
  topic's birth: one listed row with its partition count), every other creation adds a
  partition;
* leader moves: the run's writes that may set a leader (`rollup_carry.LEADER_CAUSES`)
  with, per partition, the earlier runs' last one (the carry), in (seq, write) order; an
  `election` write of the run whose leader differs from the write before it (both
  brokers, not -1) moved the leader.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from jobs.engine.change_digest import Change
from jobs.engine.requested import FIRST, Listed
from jobs.store.layout import partition_path

# The changes this query counts, in the order the digest builds them.
COUNTED = ("topic_created", "partitions_added", "leader_moved")
PARTITION = ("cluster", "topic", "partition")
LISTED = ("cluster", "change", "seq", "ts", "topic", "partition", "detail", "tiebreak")


def _table(spark: SparkSession, out_dir: str, table: str, run_id: str) -> DataFrame:
    return spark.read.parquet(partition_path(out_dir, table, run_id))


def _listed(frame: DataFrame, change: str, seq: Column, ts: Column, partition: Column,
            detail: Column, tiebreak: Column) -> DataFrame:
    return frame.select("cluster", F.lit(change).alias("change"), seq.alias("seq"),
                        ts.alias("ts"), "topic", partition.cast("int").alias("partition"),
                        detail.cast("string").alias("detail"),
                        tiebreak.cast("int").alias("tiebreak"))


def creations(spark: SparkSession, out_dir: str, run_id: str) -> DataFrame:
    """`topic_created` and `partitions_added` rows (LISTED) of the run."""
    found = _table(spark, out_dir, "state_changes", run_id).filter(
        (F.col("machine") == "partition") & (F.col("outcome") == "applied")
        & (F.col("from_state") == "NonExistentPartition")
        & (F.col("to_state") == "NewPartition")).select(
        "cluster", "seq", F.unix_micros("ts").alias("ts"), "topic", "partition")
    born = found.groupBy("cluster", "topic").agg(
        F.min(F.when(F.col("partition") == 0, F.col("seq"))).alias("born"))
    rows = found.join(born, ["cluster", "topic"])
    at_birth = rows.filter(F.col("seq") == F.col("born")).groupBy("cluster", "topic").agg(
        F.first("born").alias("seq"), F.min("ts").alias("ts"), F.count("*").alias("n"))
    topics = _listed(at_birth, "topic_created", F.col("seq"), F.col("ts"), F.lit(None),
                     F.concat(F.col("n").cast("string"), F.lit(" partition"),
                              F.when(F.col("n") == 1, F.lit("")).otherwise(F.lit("s"))),
                     F.lit(0))
    added = _listed(rows.filter(F.col("born").isNull() | (F.col("seq") != F.col("born"))),
                    "partitions_added", F.col("seq"), F.col("ts"), F.col("partition"),
                    F.lit(None), F.lit(0))
    return topics.unionByName(added)


def leader_moves(spark: SparkSession, out_dir: str, run_id: str, carried: pa.Table,
                 causes: list[str]) -> DataFrame:
    """`leader_moved` rows (LISTED) of the run; `carried`: the earlier runs' last
    leader-setting write per partition (`rollup_carry.LEADER_SCHEMA`)."""
    mine = _table(spark, out_dir, "partition_state_writes", run_id) \
        .filter(F.col("cause").isin(causes)).select(
            *PARTITION, "seq", "write", F.unix_micros("ts").alias("ts"), "leader", "cause",
            F.lit(True).alias("own"))
    writes = mine
    if carried.num_rows:
        n = carried.num_rows
        before = spark.createDataFrame(pa.table({
            **{c: carried.column(c) for c in (*PARTITION, "seq", "write", "leader")},
            "ts": pa.nulls(n, pa.int64()), "cause": pa.repeat(pa.scalar(""), n),
            "own": pa.repeat(pa.scalar(False), n)}))
        writes = mine.unionByName(before)
    was = F.lag("leader").over(Window.partitionBy(*PARTITION).orderBy("seq", "write", "own"))
    moved = writes.withColumn("was", was).filter(
        F.col("own") & (F.col("cause") == "election") & (F.col("was") >= 0)
        & (F.col("leader") >= 0) & (F.col("leader") != F.col("was")))
    return _listed(moved, "leader_moved", F.col("seq"), F.col("ts"), F.col("partition"),
                   F.concat_ws(" -> ", F.col("was").cast("string"),
                               F.col("leader").cast("string")), F.col("write"))


def counted_on_executors(spark: SparkSession, out_dir: str, run_id: str, carried: pa.Table,
                         causes: list[str]) -> dict[str, list[Change]]:
    """Per cluster with a row of one, its COUNTED changes (a change without rows counted
    0), each with its count and first FIRST rows in the digest's order."""
    listed = creations(spark, out_dir, run_id).unionByName(
        leader_moves(spark, out_dir, run_id, carried, causes))
    group = Window.partitionBy("cluster", "change")
    order = group.orderBy("seq", F.coalesce(F.col("topic"), F.lit("")),
                          F.coalesce(F.col("partition"), F.lit(-1)), "tiebreak")
    rows = listed.withColumn("n", F.count("*").over(group)) \
        .withColumn("rank", F.row_number().over(order)) \
        .filter(F.col("rank") <= FIRST).collect()
    counts: dict[tuple[str, str], int] = {}
    first: dict[tuple[str, str], list[tuple[int, Listed]]] = {}
    for r in rows:
        key = (r["cluster"], r["change"])
        counts[key] = r["n"]
        first.setdefault(key, []).append(
            (r["rank"], (r["seq"], r["ts"], r["topic"], r["partition"], None, r["detail"])))
    out: dict[str, list[Change]] = {}
    for cluster in sorted({c for c, _ in counts}):
        out[cluster] = [Change(change, counts.get((cluster, change), 0),
                               tuple(row for _, row in sorted(first.get((cluster, change),
                                                                        []))))
                        for change in COUNTED]
    return out


def leaders_after_on_executors(spark: SparkSession, out_dir: str, run_id: str,
                               carried: pa.Table, causes: list[str]) -> pa.Table:
    """The carry's `leaders` after the run (`rollup_carry.last_leader_writes` of the
    earlier runs' `carried` and the run's writes that may set a leader): per partition,
    the last by seq, then write, the run's on a tie; one row per partition reaches the
    driver, in the partitions' order."""
    writes = _table(spark, out_dir, "partition_state_writes", run_id) \
        .filter(F.col("cause").isin(causes)) \
        .select(*PARTITION, "seq", "write", "leader", F.lit(True).alias("own"))
    if carried.num_rows:
        writes = writes.unionByName(spark.createDataFrame(carried.append_column(
            "own", pa.repeat(pa.scalar(False), carried.num_rows))))
    last = writes.groupBy(*PARTITION).agg(F.max_by(
        F.struct("seq", "write", "leader"), F.struct("seq", "write", "own")).alias("w"))
    return last.select(*PARTITION, "w.seq", "w.write", "w.leader") \
        .orderBy(*PARTITION).toArrow()
