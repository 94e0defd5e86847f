"""Ingest Kafka controller.log / state-change.log text into the event log (the input
contract of the replay, docs/tables.md), and KRaft metadata logs (segments, snapshots,
kafka-dump-log text) into a table of their records.

    .venv/bin/python -m jobs.ingest --logs PATH... --out DIR [--cluster NAME]
        [--timezone ZONE] [--assume-controller ID --assume-live 1,2,3]
        [--continue-from EVENTS] [--master URL]
    spark-submit --py-files dist/replay.zip jobs/submit.py ingest <same arguments>

PATHs are files (plain or gzip) or folders (read recursively: one folder per broker).
Writes Parquet tables under --out (schemas in `schemas.ingest`):

    events/                  the controller events, EVENT_SCHEMA exactly, `seq` in order
    observed_state_changes/  every transition, leader, ISR, epoch and request Kafka logged
    ingest_summary/          lines read / used (extracted, informational) / ignored /
                             unparsed per file, and a total row (file = "*"); the Kafka
                             release lines the line formats fit (`kafka_version`)
    unparsed/                controller-looking lines no template knows: file, line, text
    events/_kafka_release.json  the release lines detected, per file and in total: the
                             replay's default `--kafka-version` (`jobs.ingest.release`)
    offset_evidence/         the broker's offset lines of server.log / state-change.log (ISR
                             shrinks, leader and follower starts, log loads, truncations,
                             the epoch cache, unclean elections), with the broker that wrote
                             each (`jobs.ingest.logparse.offsets`); what `jobs.dataloss` reads

KRaft metadata logs among the inputs (log segments of `__cluster_metadata-0/`, `*.checkpoint`
snapshots, `kafka-dump-log --cluster-metadata-decoder` text; told apart by content) are
decoded by `jobs.ingest.kraft` into `metadata_records/` and `metadata_summary/` instead;
the tables above are written only when controller logs are among the inputs too.

Stages: extract (read lines with Spark, file path and split offset from `_metadata`; parse
every split in the executors, `mapInArrow` over the pure `jobs.ingest.logparse`) ->
transform (line offsets, display names and carried timestamps from the per-split counts, on
the driver; sort the facts by (timestamp, file, line, index) in one partition; assemble the
events; place the observations) -> load (write the tables, then the summary).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from itertools import groupby
from operator import attrgetter
from typing import Any, NamedTuple

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.window import Window

from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.common.exitcodes import BadInput
from jobs.ingest.continuation import continue_log
from jobs.ingest.kraft import job as kraft_job
from jobs.ingest.logparse import blocks
from jobs.ingest.logparse.assemble import (
    EPOCH_KINDS,
    FAILOVER_KINDS,
    ISR_NOTIFICATION,
    NEW,
    NONEXISTENT,
    NOTIFIED_METADATA,
    EventRow,
)
from jobs.ingest.logparse.envelope import Clock
from jobs.ingest.logparse.facts import EVENT_KINDS, OBSERVED_EVENT_KINDS, Fact, Located
from jobs.ingest.logparse.offsets.owners import file_owners
from jobs.ingest.logparse.pipeline import DEFAULT_INCLUDE, wanted
from jobs.ingest.logparse.seeding import LEADERSHIP_KINDS, SNAPSHOT_KIND
from jobs.ingest.logparse.version import MARKERS, detect
from jobs.ingest.release import RELEASE_FILE, record_text
from jobs.store.filesystem import write_text
from schemas.arrow import arrow_schema
from schemas.event_types import DEFAULT_CLUSTER
from schemas.events import EVENT_SCHEMA
from schemas.ingest import (
    ASSEMBLED_SCHEMA,
    BLOCK_SCHEMA,
    INGEST_SUMMARY_SCHEMA,
    OBSERVED_SCHEMA,
    OFFSET_EVIDENCE_SCHEMA,
    PARSED_SCHEMA,
    UNPARSED_SCHEMA,
)
from statemachine.rows import APPLIED

BATCH_ROWS = 20_000
ASSEMBLED_COLUMNS: tuple[str, ...] = tuple(ASSEMBLED_SCHEMA.fieldNames())
# What `mapInArrow` runs in the executors.
ArrowFunction = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]
Log = Callable[[str], object]
# `source` is `file:line`; the file is what the summary counts by.
_SOURCE = r"^(.*):(\d+)$"
# The KRaft metadata log's folder, which starts with `_` like a hidden one.
METADATA_FOLDER = re.compile(r"__cluster_metadata-\d+$")

logger = logging.getLogger(__name__)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = command_parser("jobs.ingest", __doc__)
    p.add_argument("--logs", nargs="+", required=True, help="log files or folders (recursive)")
    p.add_argument("--out", required=True, help="output directory of the tables")
    p.add_argument("--cluster", default=DEFAULT_CLUSTER, help="cluster name of every event")
    p.add_argument("--timezone", default="UTC",
                   help="zone of timestamps written without one (log4j %%d): default UTC")
    p.add_argument("--assume-controller", type=int,
                   help="the log starts mid-life: emit a ControllerFailover of this broker at "
                        "seq 0 (source 'assumed:...')")
    p.add_argument("--assume-live", default="",
                   help="with --assume-controller: comma-separated live brokers (default: none)")
    p.add_argument("--include", default=",".join(DEFAULT_INCLUDE),
                   help="file-name globs read inside folders (files named on the command "
                        "line are always read); default: %(default)s")
    p.add_argument("--continue-from", metavar="EVENTS",
                   help="the replay's --events folder these logs continue: seqs follow the "
                        "cluster's last one there, events already there are not written "
                        "again, a new event older than its last one is exit 2 "
                        "(jobs.ingest.continuation)")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    args = p.parse_args(list(argv) if argv is not None else None)
    if args.continue_from and args.assume_controller is not None:
        p.error("--assume-controller starts a log; --continue-from continues one: give one")
    return args


def list_inputs(spark: SparkSession, paths: list[str], include: tuple[str, ...]
                ) -> tuple[list[str], list[str]]:
    """(files to read, files skipped) through Hadoop's FileSystem, so local folders, HDFS and
    object stores behave alike: folders recursively, the same rule as the pure pipeline
    (`jobs.ingest.logparse.pipeline.wanted`); globs in `paths` are expanded."""
    jvm: Any = spark.sparkContext._jvm  # py4j: untyped
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
                if any(x.startswith((".", "_")) and not METADATA_FOLDER.match(x)
                       for x in parts[:-1]):
                    continue  # hidden folders, as Spark's own listing (not KRaft's log)
                (files if wanted(parts[-1], include) else skipped).append(path)
    return sorted(set(files)), sorted(set(skipped))


# -- executor side -------------------------------------------------------------------------

def _to_batch(rows: Sequence[tuple[object, ...]], schema: pa.Schema) -> pa.RecordBatch:
    columns: list[Any] = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    return pa.RecordBatch.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)],
        schema=schema)


class _Line(NamedTuple):
    path: str
    block: int  # offset of the split in the file
    text: str


def _lines(batches: Iterator[pa.RecordBatch]) -> Iterator[_Line]:
    for b in batches:
        yield from map(_Line, b.column("path").to_pylist(), b.column("block").to_pylist(),
                       b.column("value").to_pylist())


def _parse_fn(tz: str) -> ArrowFunction:
    schema = arrow_schema(PARSED_SCHEMA)

    def parse(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        clock = Clock(tz)
        out: list[blocks.ParsedRow] = []
        # Lines arrive in file order within a split; a partition may hold several splits.
        for (path, block), group in groupby(_lines(batches), key=attrgetter("path", "block")):
            for row in blocks.parse_block(path, block, (x.text for x in group), clock):
                out.append(row)
                if len(out) >= BATCH_ROWS:
                    yield _to_batch(out, schema)
                    out = []
        if out:
            yield _to_batch(out, schema)

    return parse


def _sorted_facts(batch: pa.RecordBatch) -> Iterator[tuple[Located, int]]:
    """The facts of a batch of `blocks.SORTED_COLUMNS`, with their effective timestamp."""
    column = {name: batch.column(name).to_pylist() for name in blocks.SORTED_COLUMNS}
    facts = map(Fact._make, zip(*(column[f] for f in Fact._fields), strict=True))
    for file, line, ts, observed_by, fact in zip(
            column["file"], column["line"], column["ts_eff"], column["observed_by"], facts,
            strict=True):
        yield Located(file, line, None, observed_by, fact), ts


def _assembled_row(event: EventRow) -> tuple[object, ...]:
    fields = event._asdict()
    return tuple(blocks.EVENT if c == "rtype" else fields.get(c) for c in ASSEMBLED_COLUMNS)


def _assemble_fn(assume_controller: int | None, assume_live: list[int],
                 assume_epoch: int | None = None) -> ArrowFunction:
    schema = arrow_schema(ASSEMBLED_SCHEMA)

    def assemble(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        a = blocks.Assembler(assume_controller, assume_live, assume_epoch)
        for b in batches:
            for located, ts in _sorted_facts(b):
                a.add(located, ts)
            a.observations.clear()  # observations are placed by Spark (`observed_table`)
        rows = [_assembled_row(e) for e in a.finish()]
        for i in range(0, len(rows), BATCH_ROWS):
            yield _to_batch(rows[i:i + BATCH_ROWS], schema)

    return assemble


# -- extract -------------------------------------------------------------------------------

class BlockCount(NamedTuple):
    """The count row of one block (split) of a file."""

    path: str
    block: int
    n_lines: int
    n_extracted: int
    n_informational: int
    n_ignored: int
    n_unparsed: int
    first_ts: int | None
    last_ts: int | None


class Extracted(NamedTuple):
    files: list[str]
    skipped: list[str]  # files of a folder not matching --include
    parsed: DataFrame  # PARSED_SCHEMA, persisted
    counts: list[BlockCount]


def _include(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(g.strip() for g in args.include.split(",") if g.strip())


def list_logs(spark: SparkSession, args: argparse.Namespace, log: Log
              ) -> tuple[list[str], list[str]]:
    """(files to read, files of a folder skipped), the skipped ones reported."""
    include = _include(args)
    files, skipped = list_inputs(spark, args.logs, include)
    if skipped:
        log(f"skipped {len(skipped)} file(s) not matching --include "
            f"{','.join(include)}: {', '.join(x.rsplit('/', 1)[-1] for x in skipped[:10])}"
            + (" ..." if len(skipped) > 10 else ""))
    return files, skipped


def extract(spark: SparkSession, args: argparse.Namespace, files: list[str],
            skipped: list[str]) -> Extracted:
    lines = (
        spark.read.text(files)
        .select(F.col("value"), F.col("_metadata.file_path").alias("path"),
                F.col("_metadata.file_block_start").alias("block"))
    )
    parsed = lines.mapInArrow(_parse_fn(args.timezone), PARSED_SCHEMA).persist()
    counts = [BlockCount(*r) for r in parsed.filter(F.col("rtype") == blocks.COUNT)
              .select(*BlockCount._fields).collect()]
    return Extracted(files, skipped, parsed, counts)


# -- transform -----------------------------------------------------------------------------

class LineCounts(NamedTuple):
    """A file's lines by what the parser made of them (`jobs.ingest.logparse.records`)."""

    lines_read: int = 0
    lines_extracted: int = 0
    lines_informational: int = 0
    lines_ignored: int = 0
    lines_unparsed: int = 0

    def plus(self, other: LineCounts) -> LineCounts:
        return LineCounts(*(a + b for a, b in zip(self, other, strict=True)))


class BlockPlacement(NamedTuple):
    """Where a block sits (BLOCK_SCHEMA): its file's display name, the lines before it, the
    timestamp carried into it and its file's first timestamp."""

    path: str
    block: int
    file: str
    lines_before: int
    carried: int | None
    file_first: int | None


def _display_root(paths: list[str]) -> str:
    """Common folder of the input files (as Spark names them), so that `source` reads
    `broker-1/controller.log:12` rather than a full URI."""
    dirs = [p.rsplit("/", 1)[0] for p in paths]
    root = os.path.commonprefix(dirs)
    if not all(d == root or d.startswith(root.rstrip("/") + "/") for d in dirs):
        root = root.rsplit("/", 1)[0]
    return root.rstrip("/") + "/"


def place_blocks(counts: list[BlockCount]
                 ) -> tuple[list[BlockPlacement], dict[str, LineCounts]]:
    """Every block's placement in its file, and each file's line counts by display name."""
    by_path: dict[str, list[BlockCount]] = {}
    for c in counts:
        by_path.setdefault(c.path, []).append(c)
    root = _display_root(sorted(by_path))
    table: list[BlockPlacement] = []
    lines: dict[str, LineCounts] = {}
    for path in sorted(by_path):
        in_order = sorted(by_path[path], key=attrgetter("block"))
        name = path[len(root):] if path.startswith(root) else path
        first = next((c.first_ts for c in in_order if c.first_ts is not None), None)
        before, carried = 0, None
        for c in in_order:
            table.append(BlockPlacement(path, c.block, name, before, carried, first))
            before += c.n_lines
            if c.last_ts is not None:
                carried = c.last_ts
            lines[name] = lines.get(name, LineCounts()).plus(LineCounts(
                c.n_lines, c.n_extracted, c.n_informational, c.n_ignored, c.n_unparsed))
    return table, lines


def locate(spark: SparkSession, parsed: DataFrame, table: list[BlockPlacement]) -> DataFrame:
    """The parsed rows with their file's display name, line in the file and effective
    timestamp (`ts_eff`: as logged, else carried from the lines before)."""
    return (
        parsed.filter(F.col("rtype") != blocks.COUNT)
        .join(F.broadcast(spark.createDataFrame(table, BLOCK_SCHEMA)), on=["path", "block"],
              how="inner")
        .withColumn("line", F.col("rline") + F.col("lines_before") + 1)
        .withColumn("ts_eff", F.coalesce("ts_fill", "carried", "file_first", F.lit(0)))
    )


def _col(name: str, dtype: T.DataType, cluster: str) -> Column:
    if name == "cluster":
        return F.lit(cluster).cast(dtype).alias(name)
    if name == "ts":
        return F.timestamp_micros("ts").alias(name)
    return F.col(name).cast(dtype).alias(name)


def unparsed_table(located: DataFrame, cluster: str) -> DataFrame:
    return located.filter(F.col("rtype") == blocks.UNPARSED).select(
        F.lit(cluster).alias("cluster"), "file", "line",
        F.timestamp_micros("ts").alias("ts"), "text", "reason").to(UNPARSED_SCHEMA)


_ORDER = ("ts_eff", "file", "line", "fidx")  # the controller's order of the facts


def snapshot_leadership(facts: DataFrame) -> DataFrame:
    """The leadership facts a failover block's PartitionSnapshot events are made of
    (`logparse.seeding`): only those of partitions some `initial state` line names, so the
    sequential assembler does not walk every request line of the log."""
    named = facts.filter(F.col("kind") == SNAPSHOT_KIND).select("topic", "partition").distinct()
    return facts.filter(F.col("kind").isin(*sorted(LEADERSHIP_KINDS))) \
        .join(named, ["topic", "partition"], "leftsemi")


def notified_metadata(facts: DataFrame) -> DataFrame:
    """The UpdateMetadata lines that may carry an ISR change notification's new ISR (up to
    2.6, `logparse.assemble`): only those of partitions some notification names."""
    named = facts.filter(F.col("kind") == ISR_NOTIFICATION).select(
        "topic", "partition").distinct()
    return facts.filter(F.col("kind") == NOTIFIED_METADATA) \
        .join(named, ["topic", "partition"], "leftsemi")


def assumed_epoch(facts: DataFrame, controller: int | None) -> int | None:
    """`logparse.assemble.assumed_epoch` over the DataFrame of facts: the first epoch the
    assumed controller's own lines state, before any failover is logged."""
    if controller is None:
        return None
    stated = (facts.filter(F.col("kind").isin(*sorted(EPOCH_KINDS))
                           & (F.col("controller_id") == controller)
                           & F.col("controller_epoch").isNotNull())
              .orderBy(*_ORDER).select(*_ORDER, "controller_epoch").first())
    if stated is None:
        return None
    failover = (facts.filter(F.col("kind").isin(*sorted(FAILOVER_KINDS)))
                .orderBy(*_ORDER).select(*_ORDER).first())
    if failover is not None and tuple(failover) < tuple(stated)[:len(_ORDER)]:
        return None
    return int(stated["controller_epoch"])


def assemble_events(facts: DataFrame, assume_controller: int | None, assume_live: list[int]
                    ) -> DataFrame:
    """Only the event facts (and what a failover block's PartitionSnapshot rows are made
    of: its `initial state` lines and `snapshot_leadership`; the `notified_metadata` lines)
    walk through the (sequential) assembler, in one partition sorted by the controller's
    order. ASSEMBLED_SCHEMA, persisted."""
    is_event = F.col("kind").isin(*EVENT_KINDS) | (
        (F.col("kind") == "partition_transition") & (F.col("from_state") == NONEXISTENT)
        & (F.col("to_state") == NEW) & (F.col("outcome") == APPLIED)) | (
            F.col("kind") == SNAPSHOT_KIND)
    return (
        facts.filter(is_event).unionByName(snapshot_leadership(facts))
        .unionByName(notified_metadata(facts)).dropDuplicates([*_ORDER])
        .repartition(1).sortWithinPartitions(*_ORDER)
        .mapInArrow(_assemble_fn(assume_controller, assume_live,
                                 assumed_epoch(facts, assume_controller)),
                    ASSEMBLED_SCHEMA).persist()
    )


def events_table(assembled: DataFrame, cluster: str) -> DataFrame:
    # `.to(schema)`: the exact contract, nullability included (a literal is not nullable).
    return assembled.select(
        *[_col(f.name, f.dataType, cluster) for f in EVENT_SCHEMA.fields]).to(EVENT_SCHEMA)


def observed_table(facts: DataFrame, assembled: DataFrame, cluster: str) -> DataFrame:
    """Observations never enter Python again: their position in the merged order and the
    seq of the last event at or before them come from two windows over the same order (an
    event's marker sorts before the facts of its own record, as in the assembler)."""
    markers = (
        assembled.filter(~F.col("source").startswith("assumed:"))
        .select(F.col("ts").alias("ts_eff"),
                F.regexp_extract("source", _SOURCE, 1).alias("file"),
                F.regexp_extract("source", _SOURCE, 2).cast("long").alias("line"),
                F.lit(-1).alias("fidx"), F.col("seq").alias("mark"))
        .dropDuplicates(["ts_eff", "file", "line"])
    )
    w = Window.orderBy(*_ORDER)
    with_pos = (
        facts.withColumn("pos", F.row_number().over(w) - 1)
        .filter(~F.col("kind").isin(*EVENT_KINDS) | F.col("kind").isin(*OBSERVED_EVENT_KINDS))
        .withColumn("mark", F.lit(None).cast("long"))
    )
    return (
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


class Tables(NamedTuple):
    events: DataFrame
    observed: DataFrame  # persisted
    unparsed: DataFrame
    assembled: DataFrame  # persisted: the events before their contract's columns
    lines: dict[str, LineCounts]  # per file (display name)
    markers: dict[str, frozenset[str]]  # per file (display name): version markers seen
    evidence: DataFrame  # persisted: offset_evidence
    owners: dict[str, int]  # file (display name) -> the broker that wrote it


def file_brokers(parsed: DataFrame, table: list[BlockPlacement], files: list[str]
                 ) -> dict[str, int]:
    """Each file's broker (`jobs.ingest.logparse.offsets.owners`), from the brokers its lines name
    as their writer (a few WRITER rows per block)."""
    names = {b.path: b.file for b in table}
    named: dict[str, set[int]] = {f: set() for f in files}
    for r in parsed.filter(F.col("rtype") == blocks.WRITER).select(
            "path", "broker_id").distinct().collect():
        named.setdefault(names.get(r["path"], r["path"]), set()).add(r["broker_id"])
    return file_owners(named)


def evidence_table(spark: SparkSession, located: DataFrame, owners: dict[str, int],
                   cluster: str) -> DataFrame:
    """`offset_evidence`: the offset lines, each with the broker its line names, else its
    file's (`broker_from`)."""
    known = spark.createDataFrame(sorted(owners.items()), "file string, owner int")
    rows = located.filter(F.col("rtype") == blocks.EVIDENCE).join(
        F.broadcast(known), "file", "left")
    broker_from = (F.when(F.col("broker_id").isNotNull(), F.lit("line"))
                   .when(F.col("owner").isNotNull(), F.lit("file")))
    computed = {
        "cluster": F.lit(cluster), "source": F.concat_ws(":", "file", F.col("line").cast(
            "string")), "ts": F.timestamp_micros("ts_eff"),
        "broker_id": F.coalesce("broker_id", "owner"), "broker_from": broker_from}
    return rows.select(*[computed.get(f.name, F.col(f.name)).cast(f.dataType).alias(f.name)
                         for f in OFFSET_EVIDENCE_SCHEMA.fields]) \
        .to(OFFSET_EVIDENCE_SCHEMA).persist()


def version_markers(spark: SparkSession, files: list[str]) -> dict[str, frozenset[str]]:
    """The version markers (`jobs.ingest.logparse.version.MARKERS`) each file carries, by
    display name: one scan of the lines with the JVM's regular expressions."""
    if not files:
        return {}
    flags = [F.max(F.col("value").rlike(m.pattern).cast("int")).alias(m.name)
             for m in MARKERS]
    rows = (spark.read.text(files).select("value", F.col("_metadata.file_path").alias("path"))
            .groupBy("path").agg(*flags).collect())
    root = _display_root(sorted(r["path"] for r in rows))
    return {(r["path"][len(root):] if r["path"].startswith(root) else r["path"]):
            frozenset(m.name for m in MARKERS if r[m.name]) for r in rows}


def transform(spark: SparkSession, parsed: DataFrame, counts: list[BlockCount],
              args: argparse.Namespace) -> Tables:
    cluster = args.cluster or DEFAULT_CLUSTER
    live = [int(x) for x in args.assume_live.split(",") if x.strip()]
    table, lines = place_blocks(counts)
    located = locate(spark, parsed, table)
    facts = located.filter(F.col("rtype") == blocks.FACT).select(*blocks.SORTED_COLUMNS)
    assembled = assemble_events(facts, args.assume_controller, live)
    owners = file_brokers(parsed, table, sorted(lines))
    return Tables(events_table(assembled, cluster), observed_table(facts, assembled, cluster),
                  unparsed_table(located, cluster), assembled, lines,
                  version_markers(spark, sorted({c.path for c in counts})),
                  evidence_table(spark, located, owners, cluster), owners)


# -- load ----------------------------------------------------------------------------------

class SummaryRow(NamedTuple):
    """A row of `ingest_summary/` (INGEST_SUMMARY_SCHEMA)."""

    cluster: str
    file: str
    lines_read: int
    lines_used: int  # extracted + informational
    lines_extracted: int
    lines_informational: int
    lines_ignored: int
    lines_unparsed: int
    events: int
    observations: int
    kafka_version: str | None  # the release lines the file's formats fit, e.g. "2.4-3.9"
    offset_lines: int = 0  # rows of offset_evidence
    broker_id: int | None = None  # the broker that wrote the file (`offsets.owners`)

    @classmethod
    def of(cls, cluster: str, file: str, lines: LineCounts, events: int, observations: int,
           markers: frozenset[str] = frozenset(), offset_lines: int = 0,
           broker_id: int | None = None) -> SummaryRow:
        found = detect(markers)
        return cls(cluster, file, lines.lines_read,
                   lines.lines_extracted + lines.lines_informational, lines.lines_extracted,
                   lines.lines_informational, lines.lines_ignored, lines.lines_unparsed,
                   events, observations, found.text() if found else None, offset_lines,
                   broker_id)


def rows_per_file(table: DataFrame) -> dict[str, int]:
    """How many rows of `table` each file gave (by the file of `source`)."""
    return {r["file"]: r["count"] for r in
            table.select(F.regexp_extract("source", _SOURCE, 1).alias("file"))
            .groupBy("file").count().collect()}


def summary_rows(tables: Tables, cluster: str) -> list[SummaryRow]:
    """One row per file, then the total (file "*"), whose events include an assumed
    failover, which has no file."""
    events, observations = rows_per_file(tables.events), rows_per_file(tables.observed)
    evidence = rows_per_file(tables.evidence)
    markers = tables.markers
    rows = [SummaryRow.of(cluster, name, tables.lines[name], events.get(name, 0),
                          observations.get(name, 0), markers.get(name, frozenset()),
                          evidence.get(name, 0), tables.owners.get(name))
            for name in sorted(tables.lines)]
    total_lines = LineCounts()
    for lines in tables.lines.values():
        total_lines = total_lines.plus(lines)
    # The total's range fits every file (null when the files disagree).
    rows.append(SummaryRow.of(cluster, "*", total_lines, tables.events.count(),
                              sum(r.observations for r in rows),
                              frozenset().union(*markers.values()),
                              sum(r.offset_lines for r in rows)))
    return rows


def load(spark: SparkSession, tables: Tables, cluster: str, out: str) -> SummaryRow:
    """Write the tables, then the summary; the total row of the summary."""
    tables.events.write.mode("overwrite").parquet(f"{out}/events")
    tables.observed.write.mode("overwrite").parquet(f"{out}/observed_state_changes")
    tables.unparsed.write.mode("overwrite").parquet(f"{out}/unparsed")
    tables.evidence.write.mode("overwrite").parquet(f"{out}/offset_evidence")
    rows = summary_rows(tables, cluster)
    spark.createDataFrame(rows, INGEST_SUMMARY_SCHEMA).coalesce(1).write.mode(
        "overwrite").parquet(f"{out}/ingest_summary")
    # The release the replay takes by default (`jobs.ingest.release`), beside the events.
    write_text(f"{out}/events/{RELEASE_FILE}", record_text(
        rows[-1].kafka_version, {r.file: r.kafka_version for r in rows[:-1]}))
    return rows[-1]


def run(spark: SparkSession, args: argparse.Namespace, log: Log = logger.info) -> dict[str, Any]:
    """Ingest the controller logs, and the KRaft metadata logs among the inputs (told apart
    by content, `jobs.ingest.kraft`): the second write only their own tables."""
    t0 = time.time()
    # Spark's default INT96 timestamps read back as nanoseconds in Arrow; the replay's schema
    # check (and most readers) want the standard microsecond type.
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    files, skipped = list_logs(spark, args, log)
    kraft, files, not_metadata = kraft_job.split_inputs(spark, files)
    if not_metadata:
        root = _display_root(sorted(p for p, _ in not_metadata))
        named = [f"{p[len(root):] if p.startswith(root) else p} ({why})"
                 for p, why in not_metadata[:5]]
        log(f"KRaft: skipped {len(not_metadata)} file(s) not of the metadata log: "
            + "; ".join(named) + (" ..." if len(not_metadata) > 5 else ""))
    result: dict[str, Any] = {}
    if kraft:
        root = _display_root(sorted(f.path for f in kraft))
        total = kraft_job.run(spark, kraft, lambda p: p[len(root):] if p.startswith(root)
                              else p, args.cluster or DEFAULT_CLUSTER, args.out.rstrip("/"), log)
        result = {f"kraft_{k}": v for k, v in total.items() if isinstance(v, int)}
        result["kraft_seconds"] = round(time.time() - t0, 1)
        result["nothing_read"] = total["nothing_read"]
        if args.continue_from:
            log("--continue-from: KRaft records keep their metadata-log offsets; it applies "
                "to the controller logs only")
        if not files:
            return result
    return {**result, **run_logs(spark, args, files, skipped, log, t0)}


def run_logs(spark: SparkSession, args: argparse.Namespace, files: list[str],
             skipped: list[str], log: Log, t0: float) -> dict[str, float]:
    """The controller-log ingest proper."""
    extracted = extract(spark, args, files, skipped)
    t_parse = time.time()
    tables = transform(spark, extracted.parsed, extracted.counts, args)
    persisted = (extracted.parsed, tables.assembled, tables.observed, tables.evidence)
    known = 0
    if args.continue_from:
        continued = continue_log(spark, tables.events, tables.observed, args.continue_from,
                                 args.cluster or DEFAULT_CLUSTER, log)
        tables = tables._replace(events=continued.events, observed=continued.observed)
        known = len(continued.plan.known)
    out = args.out.rstrip("/")
    total = load(spark, tables, args.cluster or DEFAULT_CLUSTER, out)
    for df in persisted:
        df.unpersist()
    result: dict[str, float] = {
        **{k: v for k, v in total._asdict().items()
           if k not in ("cluster", "file", "lines_used", "kafka_version", "broker_id")},
        "files": len(tables.lines), "skipped_files": len(extracted.skipped),
        "events_already_there": known,
        "seconds": round(time.time() - t0, 1), "parse_seconds": round(t_parse - t0, 1)}
    log(f"line formats of Kafka {total.kafka_version or '(not recognised)'}")
    log(f"{result['files']} files, {total.lines_read} lines read, "
        f"{total.lines_used} used ({total.lines_extracted} extracted), "
        f"{total.lines_ignored} ignored, {total.lines_unparsed} unparsed; {total.events} "
        f"events, {total.observations} observations, {total.offset_lines} broker offset "
        f"lines; {result['seconds']} s -> {out}")
    return result


def main(argv: Sequence[str] | None = None, spark: SparkSession | None = None) -> int:
    return run_job("ingest", None if argv is None else list(argv), ingest, spark)


def ingest(argv: list[str], spark: SparkSession | None) -> int:
    args = parse_args(argv)
    logger.info(f"logs={args.logs} out={args.out} cluster={args.cluster} "
                f"timezone={args.timezone}")
    if spark is None:
        from jobs.common.session import build_session

        spark = build_session("kafka-controller-ingest", master=args.master)
    unread = run(spark, args).get("nothing_read") or []
    if unread:
        # The tables say what each input held; a run that read nothing of an input it was
        # given must not look like a success.
        raise BadInput(f"nothing could be read from {len(unread)} input(s): "
                       f"{'; '.join(unread[:5])}" + (" ..." if len(unread) > 5 else ""))
    return 0
