"""The by-topic split of `jobs.bench.kraft_split` run on Spark: what grouping a KRaft log by
(cluster, topic bucket) on the executors costs, measured (the replay does not do this).

    python -m jobs.bench.kraft_spark_split EVENTS --buckets N --out DIR

The driver reads with pyarrow only the cluster-scope records and the `TopicRecord`s (a
filter on `record_type`, pushed into the Parquet scan), and broadcasts them. The topic
records are read by Spark, named from their topic id by a broadcast join with the
`TopicRecord`s, keyed by `crc32(name) % N` and grouped by (cluster, bucket); each group
(`applyInArrow`) folds the cluster-scope records and its own in offset order
(`statemachine.kraft.fold.KraftFold`) and returns its partitions' states, written as
Parquet. Only `partition_states` and a count of windows come out: the figure is the
grouping's cost against the single-process fold, not a replay. Prints one JSON line:
seconds of the session, the driver's read and the grouped fold, the rows written, and the
Python workers' own CPU seconds for converting and folding (summed over the groups).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from jobs.bench.kraft_split import TOPIC_RECORDS
from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.engine.kraft.metadata_source import records_of
from statemachine.kraft import records as K
from statemachine.kraft.records import MetadataRecord

COLUMNS = ["cluster", *MetadataRecord._fields]
OUT = pa.schema([("cluster", pa.string()), ("bucket", pa.int32()), ("topic", pa.string()),
                 ("partition", pa.int32()), ("leader", pa.int32()),
                 ("leader_epoch", pa.int32()), ("windows", pa.int32()),
                 ("convert_cpu_s", pa.float64()), ("fold_cpu_s", pa.float64())])


def fold_group(shared: pa.Table, key: tuple[pa.Scalar, pa.Scalar],
               table: pa.Table) -> pa.Table:
    """One (cluster, bucket) group folded with its cluster's cluster-scope records."""
    from statemachine.kraft.fold import KraftFold
    from statemachine.kraft.profiles import kraft_profile_for

    c0 = time.process_time()
    cluster, bucket = key[0].as_py(), key[1].as_py()
    mine = shared.filter(pc.equal(shared.column("cluster"), cluster))
    both = pa.concat_tables([table.select(COLUMNS).cast(mine.schema), mine])
    both = both.take(pc.sort_indices(both, [("offset", "ascending")]))
    records = records_of(both)
    c1 = time.process_time()
    fold = KraftFold(1, kraft_profile_for("3.7"))
    fold.feed(records)
    out = fold.finish()
    c2 = time.process_time()
    windows: dict[tuple[str, int], int] = {}
    for w in out.partition_windows:
        windows[(w.topic, w.partition)] = windows.get((w.topic, w.partition), 0) + 1
    rows = [{"cluster": cluster, "bucket": bucket, "topic": s.topic, "partition": s.partition,
             "leader": s.leader, "leader_epoch": s.leader_epoch,
             "windows": windows.get((s.topic, s.partition), 0),
             "convert_cpu_s": c1 - c0 if i == 0 else 0.0,
             "fold_cpu_s": c2 - c1 if i == 0 else 0.0}
            for i, s in enumerate(out.partition_states)]
    return pa.Table.from_pylist(rows, schema=OUT)


def run_split(events: str, buckets: int, out: str) -> dict[str, Any]:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    t0 = time.perf_counter()
    spark = (SparkSession.builder.master("local[*]").appName("bench-kraft-spark-split")
             .config("spark.sql.shuffle.partitions", str(buckets))
             .config("spark.ui.enabled", "false").getOrCreate())
    t1 = time.perf_counter()
    records = f"{events.rstrip('/')}/metadata_records"
    found = ds.dataset(records, format="parquet")
    of_topic = (pc.field("record_type").isin(sorted(TOPIC_RECORDS))
                | ((pc.field("record_type") == K.CONFIG)
                   & (pc.field("config_resource_type") == "TOPIC")))
    shared = found.to_table(columns=COLUMNS, filter=~of_topic)
    named = found.to_table(columns=["cluster", "topic_id", "topic"],
                           filter=pc.field("record_type") == K.TOPIC)
    t2 = time.perf_counter()
    everywhere = spark.sparkContext.broadcast(shared)
    names = spark.createDataFrame(
        named.rename_columns(["cluster", "topic_id", "name"]).to_pylist(),
        "cluster string, topic_id string, name string")
    rows = spark.read.parquet(records).filter(
        F.col("record_type").isin(sorted(TOPIC_RECORDS))
        | ((F.col("record_type") == K.CONFIG) & (F.col("config_resource_type") == "TOPIC")))
    keyed = (rows.join(F.broadcast(names), ["cluster", "topic_id"], "left")
             .withColumn("key", F.coalesce("topic", "name", F.concat(F.lit("id:"), "topic_id")))
             .withColumn("bucket", (F.crc32("key") % buckets).cast("int"))
             .select("bucket", *COLUMNS))
    schema = ", ".join(f"{f.name} {_ddl(f.type)}" for f in OUT)
    folded = keyed.groupBy("cluster", "bucket").applyInArrow(
        lambda key, table: fold_group(everywhere.value, key, table), schema)
    folded.write.mode("overwrite").parquet(out)
    t3 = time.perf_counter()
    spark.stop()
    written = ds.dataset(out, format="parquet").to_table(
        columns=["topic", "partition", "convert_cpu_s", "fold_cpu_s"])
    partitions = len(set(zip(*(written.column(c).to_pylist() for c in ("topic", "partition")),
                             strict=True)))
    return {"buckets": buckets, "cluster_scope_rows": shared.num_rows,
            "partitions": partitions,
            "topic_records": named.num_rows, "rows_written": written.num_rows,
            "session_s": round(t1 - t0, 2), "driver_read_s": round(t2 - t1, 2),
            "grouped_fold_s": round(t3 - t2, 2),
            "workers_convert_cpu_s": round(pc.sum(written.column("convert_cpu_s")).as_py(), 2),
            "workers_fold_cpu_s": round(pc.sum(written.column("fold_cpu_s")).as_py(), 2)}


def _ddl(t: pa.DataType) -> str:
    return {pa.string(): "string", pa.int32(): "int", pa.float64(): "double"}[t]


def main(argv: Sequence[str] | None = None) -> int:
    return run_job("bench-kraft-spark-split", None if argv is None else list(argv), _run)


def _run(argv: list[str], _spark: object) -> int:
    ap = command_parser("python -m jobs.bench.kraft_spark_split", __doc__)
    ap.add_argument("events", help="the ingest output folder (metadata_records under it)")
    ap.add_argument("--buckets", type=int, default=16)
    ap.add_argument("--out", required=True, help="where the groups' rows are written")
    args = ap.parse_args(argv)
    print(json.dumps(run_split(args.events, args.buckets, str(Path(args.out)))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
