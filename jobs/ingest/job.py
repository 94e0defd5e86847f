"""Ingest Kafka controller.log / state-change.log text into the event log (DESIGN §4).

    .venv/bin/python -m jobs.ingest --logs PATH... --out DIR [--cluster NAME]
        [--timezone ZONE] [--assume-controller ID --assume-live 1,2,3] [--master URL]
    spark-submit --py-files dist/replay.zip jobs/ingest_logs.py <same arguments>

PATHs are files (plain or gzip) or folders (read recursively: one folder per broker).
Writes Parquet tables under --out:

    events/                  the controller events, EVENT_SCHEMA exactly, `seq` in order
    observed_state_changes/  every transition, leader, ISR, epoch and request Kafka logged
    ingest_summary/          lines read / used (extracted, informational) / ignored /
                             unparsed per file, and a total row (file = "*")
    unparsed/                controller-looking lines no template knows: file, line, text

Stages: read lines with Spark (file path and split offset from `_metadata`) -> parse every
split in the executors (`mapInArrow`, the pure `jobs.ingest.logparse`) -> line offsets, display
names and carried timestamps from the per-split counts (driver, tiny) -> sort the facts by
(timestamp, file, line, index) in one partition -> assemble events and observations.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator
from itertools import groupby
from operator import itemgetter
from typing import Any

import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.window import Window

from jobs.ingest.logparse import blocks
from jobs.ingest.logparse.assemble import NEW, NONEXISTENT, EventRow, ObservedRow
from jobs.ingest.logparse.envelope import Clock
from jobs.ingest.logparse.facts import EVENT_KINDS, OBSERVED_EVENT_KINDS
from jobs.ingest.logparse.pipeline import DEFAULT_INCLUDE, wanted
from schemas.event_types import DEFAULT_CLUSTER
from schemas.events import EVENT_SCHEMA

_INTS = T.ArrayType(T.IntegerType(), True)
_FACT_TYPES: dict[str, T.DataType] = {
    "kind": T.StringType(), "topic": T.StringType(), "partition": T.IntegerType(),
    "broker_id": T.IntegerType(), "from_state": T.StringType(), "to_state": T.StringType(),
    "leader": T.IntegerType(), "leader_epoch": T.IntegerType(), "isr": _INTS,
    "zk_version": T.IntegerType(), "replicas": _INTS, "brokers": _INTS,
    "controller_id": T.IntegerType(), "controller_epoch": T.IntegerType(),
    "valid": T.BooleanType(), "error": T.StringType(), "detail": T.StringType(),
}
_PARSED_TYPES: dict[str, T.DataType] = {
    "rtype": T.StringType(), "path": T.StringType(), "block": T.LongType(),
    "rline": T.LongType(), "fidx": T.IntegerType(), "ts": T.LongType(),
    "ts_fill": T.LongType(), "observed_by": T.StringType(), **_FACT_TYPES,
    "text": T.StringType(), "reason": T.StringType(), "n_lines": T.LongType(),
    "n_extracted": T.LongType(), "n_informational": T.LongType(), "n_ignored": T.LongType(),
    "n_unparsed": T.LongType(), "first_ts": T.LongType(), "last_ts": T.LongType(),
}
PARSED_SCHEMA = T.StructType([T.StructField(c, _PARSED_TYPES[c], True)
                              for c in blocks.PARSED_COLUMNS])

# Output tables (beside events/, whose schema is the input contract).
OBSERVED_SCHEMA = T.StructType([
    T.StructField("cluster", T.StringType(), True),
    T.StructField("seq", T.LongType(), True),
    T.StructField("pos", T.LongType(), True),
    T.StructField("ts", T.TimestampType(), True),
    T.StructField("source", T.StringType(), True),
    T.StructField("observed_by", T.StringType(), True),
    *[T.StructField(c, _FACT_TYPES[c], True) for c in ObservedRow._fields[5:]],
])
SUMMARY_SCHEMA = T.StructType([
    T.StructField("cluster", T.StringType(), True),
    T.StructField("file", T.StringType(), True),
    *[T.StructField(c, T.LongType(), True) for c in (
        "lines_read", "lines_used", "lines_extracted", "lines_informational",
        "lines_ignored", "lines_unparsed", "events", "observations")],
])
UNPARSED_SCHEMA = T.StructType([
    T.StructField("cluster", T.StringType(), True),
    T.StructField("file", T.StringType(), True),
    T.StructField("line", T.LongType(), True),
    T.StructField("ts", T.TimestampType(), True),
    T.StructField("text", T.StringType(), True),
    T.StructField("reason", T.StringType(), True),
])
# What the assembly step emits: a tag, then the union of event and observation fields.
_ASSEMBLED_TYPES: dict[str, T.DataType] = {
    "rtype": T.StringType(), "seq": T.LongType(), "pos": T.LongType(), "ts": T.LongType(),
    "source": T.StringType(), "observed_by": T.StringType(), "event_type": T.StringType(),
    "unclean_leader_election": T.BooleanType(), **_FACT_TYPES,
}
ASSEMBLED_COLUMNS = tuple(_ASSEMBLED_TYPES)
ASSEMBLED_SCHEMA = T.StructType([T.StructField(c, _ASSEMBLED_TYPES[c], True)
                                 for c in ASSEMBLED_COLUMNS])
BATCH_ROWS = 20_000


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="jobs.ingest", description=__doc__.split("\n\n")[0])
    p.add_argument("--logs", nargs="+", required=True, help="log files or folders (recursive)")
    p.add_argument("--out", required=True, help="output directory of the tables")
    p.add_argument("--cluster", default=DEFAULT_CLUSTER, help="cluster name of every event")
    p.add_argument("--timezone", default="UTC",
                   help="zone of timestamps written without one (log4j %%d): default UTC")
    p.add_argument("--assume-controller", type=int,
                   help="the log starts mid-life: emit a ControllerFailover of this broker at "
                        "seq 0 (source 'assumed:...')")
    p.add_argument("--assume-live", default="",
                   help="with --assume-controller: comma-separated live brokers")
    p.add_argument("--include", default=",".join(DEFAULT_INCLUDE),
                   help="file-name globs read inside folders (files named on the command "
                        "line are always read); default: %(default)s")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    return p.parse_args(argv)


def list_inputs(spark: Any, paths: list[str], include: tuple[str, ...]
                ) -> tuple[list[str], list[str]]:
    """(files to read, files skipped) through Hadoop's FileSystem, so local folders, HDFS and
    object stores behave alike: folders recursively, the same rule as the pure pipeline
    (`jobs.ingest.logparse.pipeline.wanted`); globs in `paths` are expanded."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    files: list[str] = []
    skipped: list[str] = []
    for p in paths:
        hpath = jvm.org.apache.hadoop.fs.Path(p)
        fs = hpath.getFileSystem(conf)
        statuses = fs.globStatus(hpath) or []
        if not statuses:
            raise FileNotFoundError(f"no such log file or folder: {p}")
        for st in statuses:
            if not st.isDirectory():
                files.append(st.getPath().toString())
                continue
            root = st.getPath().toString().rstrip("/") + "/"
            it = fs.listFiles(st.getPath(), True)
            while it.hasNext():
                path = it.next().getPath().toString()
                below = path[len(root):] if path.startswith(root) else path
                parts = below.split("/")
                if any(x.startswith((".", "_")) for x in parts[:-1]):
                    continue  # hidden folders, as Spark's own listing
                (files if wanted(parts[-1], include) else skipped).append(path)
    return sorted(set(files)), sorted(set(skipped))


# -- executor side -------------------------------------------------------------------------

def _to_batch(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.RecordBatch:
    cols: list[Any] = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    return pa.RecordBatch.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(cols, schema, strict=True)], schema=schema)


def _parse_fn(tz: str) -> Any:
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow_schema = to_arrow_schema(PARSED_SCHEMA)

    def parse(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        clock = Clock(tz)

        def lines() -> Iterator[tuple[str, int, str]]:
            for b in batches:
                for v, p, k in zip(b.column(0).to_pylist(), b.column(1).to_pylist(),
                                   b.column(2).to_pylist(), strict=True):
                    yield p, k, v

        out: list[tuple[Any, ...]] = []
        # Lines arrive in file order within a split; a partition may hold several splits.
        for (path, block), group in groupby(lines(), key=itemgetter(0, 1)):
            for row in blocks.parse_block(path, block, (x[2] for x in group), clock):
                out.append(row)
                if len(out) >= BATCH_ROWS:
                    yield _to_batch(out, arrow_schema)
                    out = []
        if out:
            yield _to_batch(out, arrow_schema)

    return parse


def _assemble_fn(assume_controller: int | None, assume_live: list[int]) -> Any:
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow_schema = to_arrow_schema(ASSEMBLED_SCHEMA)
    ev_index = {c: i for i, c in enumerate(EventRow._fields)}

    def assemble(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        a = blocks.Assembler(assume_controller, assume_live)
        for b in batches:
            for file, line, _fidx, ts, by, *fact in zip(*(c.to_pylist() for c in b.columns),
                                                        strict=True):
                a.add(blocks.Located(file, line, None, by, blocks.Fact(*fact)), ts)
            a.observations.clear()  # observations are placed by Spark (see `run`)
        rows = [tuple(blocks.EVENT if c == "rtype" else e[ev_index[c]] if c in ev_index
                      else None for c in ASSEMBLED_COLUMNS) for e in a.finish()]
        for i in range(0, len(rows), BATCH_ROWS):
            yield _to_batch(rows[i:i + BATCH_ROWS], arrow_schema)

    return assemble


# -- driver side ---------------------------------------------------------------------------

def _display_root(paths: list[str]) -> str:
    """Common folder of the input files (as Spark names them), so that `source` reads
    `broker-1/controller.log:12` rather than a full URI."""
    dirs = [p.rsplit("/", 1)[0] for p in paths]
    root = os.path.commonprefix(dirs)
    if not all(d == root or d.startswith(root.rstrip("/") + "/") for d in dirs):
        root = root.rsplit("/", 1)[0]
    return root.rstrip("/") + "/"


def _block_table(counts: list[Any]) -> tuple[list[tuple[Any, ...]], dict[str, dict[str, int]]]:
    """Per block: (path, block, file, line offset, timestamp carried in, file's first ts);
    per file: the summary counts."""
    by_path: dict[str, list[Any]] = {}
    for r in counts:
        by_path.setdefault(r["path"], []).append(r)
    root = _display_root(sorted(by_path))
    table: list[tuple[Any, ...]] = []
    summary: dict[str, dict[str, int]] = {}
    for path in sorted(by_path):
        rows = sorted(by_path[path], key=lambda r: r["block"])
        name = path[len(root):] if path.startswith(root) else path
        first = next((r["first_ts"] for r in rows if r["first_ts"] is not None), None)
        offset, carried = 0, None
        s = summary.setdefault(name, dict.fromkeys(
            ("lines_read", "lines_extracted", "lines_informational", "lines_ignored",
             "lines_unparsed"), 0))
        for r in rows:
            table.append((path, r["block"], name, offset, carried, first))
            offset += r["n_lines"]
            if r["last_ts"] is not None:
                carried = r["last_ts"]
            s["lines_read"] += r["n_lines"]
            s["lines_extracted"] += r["n_extracted"]
            s["lines_informational"] += r["n_informational"]
            s["lines_ignored"] += r["n_ignored"]
            s["lines_unparsed"] += r["n_unparsed"]
    return table, summary


def run(spark: Any, args: argparse.Namespace, log: Any = print) -> dict[str, Any]:
    t0 = time.time()
    # Spark's default INT96 timestamps read back as nanoseconds in Arrow; the replay's schema
    # check (and most readers) want the standard microsecond type.
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    cluster = args.cluster or DEFAULT_CLUSTER
    live = [int(x) for x in args.assume_live.split(",") if x.strip()]
    include = tuple(g.strip() for g in args.include.split(",") if g.strip())
    files, skipped = list_inputs(spark, args.logs, include)
    if skipped:
        log(f"ingest_logs: skipped {len(skipped)} file(s) not matching --include "
            f"{','.join(include)}: {', '.join(x.rsplit('/', 1)[-1] for x in skipped[:10])}"
            + (" ..." if len(skipped) > 10 else ""))
    lines = (
        spark.read.text(files)
        .select(F.col("value"), F.col("_metadata.file_path").alias("path"),
                F.col("_metadata.file_block_start").alias("block"))
    )
    parsed = lines.mapInArrow(_parse_fn(args.timezone), PARSED_SCHEMA).persist()

    counts = parsed.filter(F.col("rtype") == blocks.COUNT).select(
        "path", "block", "n_lines", "n_extracted", "n_informational", "n_ignored",
        "n_unparsed", "first_ts", "last_ts").collect()
    t_parse = time.time()
    table, summary = _block_table(counts)
    block_df = spark.createDataFrame(table, "path string, block long, file string, "
                                            "offset long, carried long, file_first long")
    located = (
        parsed.filter(F.col("rtype") != blocks.COUNT)
        .join(F.broadcast(block_df), on=["path", "block"], how="inner")
        .withColumn("line", F.col("rline") + F.col("offset") + 1)
        .withColumn("ts_eff", F.coalesce("ts_fill", "carried", "file_first", F.lit(0)))
    )

    unparsed = located.filter(F.col("rtype") == blocks.UNPARSED).select(
        F.lit(cluster).alias("cluster"), "file", "line",
        F.timestamp_micros("ts").alias("ts"), "text", "reason").to(UNPARSED_SCHEMA)
    facts = located.filter(F.col("rtype") == blocks.FACT).select(*blocks.SORTED_COLUMNS)
    order = ["ts_eff", "file", "line", "fidx"]
    # Events: only the event facts walk through the (sequential) assembler, in one partition
    # sorted by the controller's order.
    is_event = F.col("kind").isin(*EVENT_KINDS) | (
        (F.col("kind") == "partition_transition") & (F.col("from_state") == NONEXISTENT)
        & (F.col("to_state") == NEW) & F.col("valid"))
    assembled = (
        facts.filter(is_event).repartition(1).sortWithinPartitions(*order)
        .mapInArrow(_assemble_fn(args.assume_controller, live), ASSEMBLED_SCHEMA).persist()
    )
    # `.to(schema)`: the exact contract, nullability included (a literal is not nullable).
    events = assembled.select(
        *[_col(f.name, f.dataType, cluster) for f in EVENT_SCHEMA.fields]).to(EVENT_SCHEMA)
    # Observations never enter Python again: their position in the merged order and the
    # seq of the last event at or before them come from two windows over the same order
    # (an event's marker sorts before the facts of its own record, as in the assembler).
    markers = (
        assembled.filter(~F.col("source").startswith("assumed:"))
        .select(F.col("ts").alias("ts_eff"),
                F.regexp_extract("source", r"^(.*):(\d+)$", 1).alias("file"),
                F.regexp_extract("source", r"^(.*):(\d+)$", 2).cast("long").alias("line"),
                F.lit(-1).alias("fidx"), F.col("seq").alias("mark"))
        .dropDuplicates(["ts_eff", "file", "line"])
    )
    w = Window.orderBy(*order)
    with_pos = (
        facts.withColumn("pos", F.row_number().over(w) - 1)
        .filter(~F.col("kind").isin(*EVENT_KINDS) | F.col("kind").isin(*OBSERVED_EVENT_KINDS))
        .withColumn("mark", F.lit(None).cast("long"))
    )
    observed = (
        with_pos.unionByName(markers, allowMissingColumns=True)
        .withColumn("seq", F.coalesce(F.max("mark").over(
            w.rowsBetween(Window.unboundedPreceding, Window.currentRow)), F.lit(0)))
        .filter(F.col("pos").isNotNull())
        .withColumn("source", F.concat_ws(":", "file", F.col("line").cast("string")))
        .withColumn("ts", F.col("ts_eff"))
        .select(*[_col(f.name, f.dataType, cluster) for f in OBSERVED_SCHEMA.fields])
        .to(OBSERVED_SCHEMA)
        .persist()
    )

    out = args.out.rstrip("/")
    events.write.mode("overwrite").parquet(f"{out}/events")
    observed.write.mode("overwrite").parquet(f"{out}/observed_state_changes")
    unparsed.write.mode("overwrite").parquet(f"{out}/unparsed")

    per_file: dict[tuple[str, str], int] = {}
    for tag, df in ((blocks.EVENT, events), (blocks.OBSERVATION, observed)):
        for r in (df.select(F.regexp_extract("source", r"^(.*):(\d+)$", 1).alias("file"))
                  .groupBy("file").count().collect()):
            per_file[(tag, r["file"])] = r["count"]
    rows = []
    total = dict.fromkeys(("lines_read", "lines_extracted", "lines_informational",
                           "lines_ignored", "lines_unparsed", "events", "observations"), 0)
    for name in sorted(summary):
        s = dict(summary[name])
        s["events"] = per_file.get((blocks.EVENT, name), 0)
        s["observations"] = per_file.get((blocks.OBSERVATION, name), 0)
        for k in total:
            total[k] += s[k]
        rows.append((cluster, name, *_summary_values(s)))
    total["events"] = events.count()  # with an assumed failover, which has no file
    rows.append((cluster, "*", *_summary_values(total)))
    spark.createDataFrame(rows, SUMMARY_SCHEMA).coalesce(1).write.mode("overwrite").parquet(
        f"{out}/ingest_summary")
    parsed.unpersist()
    assembled.unpersist()
    observed.unpersist()
    t_end = time.time()
    result = {**total, "files": len(summary), "skipped_files": len(skipped),
              "seconds": round(t_end - t0, 1),
              "parse_seconds": round(t_parse - t0, 1)}
    log(f"ingest_logs: {result['files']} files, {total['lines_read']} lines read, "
        f"{total['lines_extracted'] + total['lines_informational']} used "
        f"({total['lines_extracted']} extracted), {total['lines_ignored']} ignored, "
        f"{total['lines_unparsed']} unparsed; {total['events']} events, "
        f"{total['observations']} observations; {result['seconds']} s -> {out}")
    return result


def _summary_values(s: dict[str, int]) -> tuple[int, ...]:
    used = s["lines_extracted"] + s["lines_informational"]
    return (s["lines_read"], used, s["lines_extracted"], s["lines_informational"],
            s["lines_ignored"], s["lines_unparsed"], s["events"], s["observations"])


def _col(name: str, dtype: T.DataType, cluster: str) -> Any:
    if name == "cluster":
        return F.lit(cluster).cast(dtype).alias(name)
    if name == "ts":
        return F.timestamp_micros("ts").alias(name)
    return F.col(name).cast(dtype).alias(name)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    args = parse_args(argv)
    print(f"ingest_logs: logs={args.logs} out={args.out} cluster={args.cluster} "
          f"timezone={args.timezone}")
    if spark is None:
        from jobs.common.session import build_session

        spark = build_session("kafka-controller-ingest", master=args.master)
    run(spark, args)
    return 0

