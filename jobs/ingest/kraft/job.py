"""The KRaft inputs of `jobs.ingest`, over Spark: which of the listed files are KRaft
inputs (`detect` on their first bytes, read through Hadoop's FileSystem on the driver), then
their bytes (`binaryFile`), one task per log (the segments of a folder in offset order, so
that a metadata transaction may span them; a snapshot or a dump alone), decoded in the
executors by the pure `jobs.ingest.kraft.inputs`. Writes `metadata_records/` and
`metadata_summary/` under --out (`schemas.ingest`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.ingest.kraft.inputs import (
    HEAD_BYTES,
    PARTITION_METADATA,
    SEGMENT,
    Decoder,
    Input,
    classify,
    metadata_folder_by_name,
    names_metadata_topic,
)
from jobs.ingest.kraft.rows import MetadataRow, Summary
from schemas.arrow import arrow_schema
from schemas.ingest import METADATA_RECORDS_SCHEMA, METADATA_SUMMARY_SCHEMA

Log = Callable[[str], object]
BATCH_ROWS = 20_000
# What the decoding tasks emit: the record columns (`ts` in epoch microseconds, as between
# the ingest's other stages), or a summary as JSON (`summary` set).
_DECODED = T.StructType([
    T.StructField("ts", T.LongType(), True) if f.name == "ts" else f
    for f in METADATA_RECORDS_SCHEMA.fields[1:]] + [T.StructField("summary", T.StringType())])
_COLUMNS = _DECODED.fieldNames()
_SUMMARY_FIELDS = ("source", "input_kind", "records", "unreadable_lines", "corrupt_batches",
                   "error", "corrupt_reasons")
_INPUTS = T.StructType([T.StructField(n, T.StringType(), False)
                        for n in ("path", "grp", "kind", "display", "ord")])


class KraftFile(NamedTuple):
    path: str  # as Hadoop names it
    kind: str  # segment | snapshot | dump_log


def read_head(spark: SparkSession, path: str) -> bytes:
    """The first bytes of a file, through Hadoop's FileSystem (local, HDFS, object stores)."""
    jvm: Any = spark.sparkContext._jvm  # py4j: untyped
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    stream = hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).open(hpath)
    try:
        return bytes(stream.readNBytes(HEAD_BYTES))  # a byte[] comes back by value
    finally:
        stream.close()


def hadoop_exists(spark: SparkSession, path: str) -> bool:
    """Whether an input file exists, through Hadoop's FileSystem as the inputs are listed
    (an ingest reads logs wherever Spark reads them; its outputs go through the store)."""
    jvm: Any = spark.sparkContext._jvm  # py4j: untyped
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    return bool(hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).exists(hpath))


def _metadata_folder(spark: SparkSession, folder: str) -> bool:
    """Whether `folder` is the metadata log's: named so, or its `partition.metadata` names
    the metadata topic's id (`jobs.ingest.kraft.inputs`)."""
    if metadata_folder_by_name(f"{folder}/x"):
        return True
    marker = f"{folder}/{PARTITION_METADATA}"
    return hadoop_exists(spark, marker) and names_metadata_topic(read_head(spark, marker))


def split_inputs(spark: SparkSession, files: list[str]
                 ) -> tuple[list[KraftFile], list[str], list[tuple[str, str]]]:
    """(the KRaft inputs, the other files: controller logs, the files of a data directory
    that are not the metadata log's with the reason they are skipped)."""
    kraft: list[KraftFile] = []
    others: list[str] = []
    skipped: list[tuple[str, str]] = []
    folders: dict[str, bool] = {}
    for path in files:
        head = read_head(spark, path)
        kind, why = classify(path, head)
        if why is not None and not metadata_folder_by_name(path):
            # A segment outside a folder named as the metadata log's: its folder's
            # partition.metadata may still name the metadata topic (read once per folder).
            folder = path.rsplit("/", 1)[0]
            if folder not in folders:
                folders[folder] = _metadata_folder(spark, folder)
            kind, why = classify(path, head, folders[folder])
        if kind is not None:
            kraft.append(KraftFile(path, kind))
        elif why is not None:
            skipped.append((path, why))
        else:
            others.append(path)
    return kraft, others, skipped


def _plan(files: list[KraftFile], display: Callable[[str], str]) -> list[tuple[str, ...]]:
    """Per file: path, group (a segment's folder, else the file), kind, display name and
    its order in the group (segments are named by their 20-digit base offset)."""
    return [(f.path, f.path.rsplit("/", 1)[0] if f.kind == SEGMENT else f.path, f.kind,
             display(f.path), f.path.rsplit("/", 1)[-1]) for f in files]


def _row_values(r: MetadataRow) -> tuple[object, ...]:
    return (*r, None)


def _summary_values(s: Summary) -> tuple[object, ...]:
    return (*([None] * (len(_COLUMNS) - 1)), json.dumps(s.as_dict()))


def _batch(rows: list[tuple[object, ...]], schema: pa.Schema) -> pa.RecordBatch:
    columns = list(zip(*rows, strict=True))
    return pa.RecordBatch.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)], schema=schema)


def _decode_fn() -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    schema = arrow_schema(_DECODED)

    def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        out: list[tuple[object, ...]] = []
        group, decoder = None, Decoder()
        for b in batches:
            cols = {n: b.column(n).to_pylist() for n in ("grp", "kind", "display", "content")}
            for grp, kind, name, content in zip(*cols.values(), strict=True):
                if grp != group:
                    out.extend(map(_row_values, decoder.flush()))
                    out.extend(map(_summary_values, decoder.summaries.values()))
                    group, decoder = grp, Decoder()
                for r in decoder.decode(Input(name, kind, content)):
                    out.append(_row_values(r))
                    if len(out) >= BATCH_ROWS:
                        yield _batch(out, schema)
                        out = []
        out.extend(map(_row_values, decoder.flush()))
        out.extend(map(_summary_values, decoder.summaries.values()))
        if out:
            yield _batch(out, schema)

    return decode


def decode(spark: SparkSession, files: list[KraftFile], display: Callable[[str], str]
           ) -> DataFrame:
    """_DECODED rows of every input, persisted."""
    plan = spark.createDataFrame(_plan(files, display), _INPUTS)
    content = spark.read.format("binaryFile").load([f.path for f in files]) \
        .select("path", "content")
    groups = max(1, min(len({p[1] for p in _plan(files, display)}),
                        spark.sparkContext.defaultParallelism))
    return (content.join(F.broadcast(plan), "path")
            .repartition(groups, "grp").sortWithinPartitions("grp", "ord")
            .mapInArrow(_decode_fn(), _DECODED).persist())


def summary_rows(cluster: str, docs: list[dict[str, Any]]) -> list[tuple[object, ...]]:
    """A row per input by source, then the total (`source = "*"`)."""
    keys = ("batches", "records", "rows", "noops", "aborted", "open_transaction", "unknown",
            "corrupt_batches", "unreadable_lines")
    rows = []
    for d in sorted(docs, key=lambda d: str(d["source"])):
        rows.append((cluster, d["source"], d["input_kind"], *(d[k] for k in keys),
                     d["first_offset"], d["last_offset"], d["records_by_type"],
                     d["unknown_types"], d["error"], d["corrupt_reasons"]))
    by_type: dict[str, int] = {}
    unknown: dict[str, int] = {}
    for d in docs:
        for total, counts in ((by_type, d["records_by_type"]), (unknown, d["unknown_types"])):
            for k, v in counts.items():
                total[k] = total.get(k, 0) + v
    firsts = [d["first_offset"] for d in docs if d["first_offset"] is not None]
    lasts = [d["last_offset"] for d in docs if d["last_offset"] is not None]
    errors = [f"{d['source']}: {d['error']}" for d in docs if d["error"]]
    rows.append((cluster, "*", None, *(sum(d[k] for d in docs) for k in keys),
                 min(firsts, default=None), max(lasts, default=None), by_type, unknown,
                 "; ".join(errors) or None,
                 [f"{d['source']}: {r}" for d in docs for r in d["corrupt_reasons"]]))
    return rows


def run(spark: SparkSession, files: list[KraftFile], display: Callable[[str], str],
        cluster: str, out: str, log: Log) -> dict[str, Any]:
    """Decode and write; the total summary row as a dict."""
    decoded = decode(spark, files, display)
    records = decoded.filter(F.col("summary").isNull()).select(
        F.lit(cluster).alias("cluster"),
        *[F.timestamp_micros("ts").alias("ts") if c == "ts" else F.col(c)
          for c in _COLUMNS[:-1]]).to(METADATA_RECORDS_SCHEMA)
    records.write.mode("overwrite").parquet(f"{out}/metadata_records")
    docs = [json.loads(r["summary"]) for r in
            decoded.filter(F.col("summary").isNotNull()).select("summary").collect()]
    rows = summary_rows(cluster, docs)
    spark.createDataFrame(rows, METADATA_SUMMARY_SCHEMA).coalesce(1).write.mode(
        "overwrite").parquet(f"{out}/metadata_summary")
    decoded.unpersist()
    total = dict(zip(METADATA_SUMMARY_SCHEMA.fieldNames(), rows[-1], strict=True))
    for r in rows[:-1]:
        if r[-2]:
            log(f"KRaft: {r[1]}: {r[-2]}")
    # Inputs of which nothing could be read: the command fails on them (`jobs.ingest`).
    total["nothing_read"] = sorted(
        f"{d['source']} ({why})" for d in docs
        if (why := Summary(**{k: v for k, v in d.items() if k in _SUMMARY_FIELDS}
                           ).nothing_read()) is not None)
    log(f"KRaft: {len(docs)} KRaft inputs, {total['batches']} batches, "
        f"{total['records']} records ({total['noops']} NoOps counted, {total['rows']} rows "
        f"written, {total['aborted']} in aborted transactions, {total['unknown']} unknown, "
        f"{total['corrupt_batches']} corrupt batches) -> {out}/metadata_records")
    return total
