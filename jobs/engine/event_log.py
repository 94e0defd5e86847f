"""Reading the event log: the schema check that fails fast, and the Spark readers.

A file Spark cannot read with `EVENT_SCHEMA` (a required column missing, a column of the
wrong type, a file that is not Parquet) must fail the job before anything is written, with
a message naming the file and the column. Spark would only fail inside the streaming query,
or silently read a missing column as nulls, so the footers are checked first: with pyarrow
on the driver before Spark starts, or, for a file system pyarrow has no client for, through
Spark's Hadoop file system once the session exists. Both open the path literally, as Spark
does (`jobs.store.filesystem`), so the check sees exactly the files Spark reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs as pafs
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from jobs.common.exitcodes import BadInput
from jobs.store.filesystem import arrow_filesystem
from schemas.events import EVENT_SCHEMA, REQUIRED_COLUMNS

# File-source options shared by the batch and the streaming readers: any file layout under
# the directory is a log (the input contract, docs/tables.md); hidden and `_`-prefixed
# files are skipped by Spark as by us.
READ_OPTIONS = {"recursiveFileLookup": "true"}


class EventSchemaError(BadInput):
    """An event file cannot be read with the event-log schema."""


class NeedsSpark(RuntimeError):  # noqa: N818 - a request, not an error of the input
    """pyarrow cannot list the events directory: call `check_event_files` again with the
    SparkSession once it has started."""


EXPECTED_TYPES: dict[str, T.DataType] = {f.name: f.dataType for f in EVENT_SCHEMA.fields}


def _int_ok(t: pa.DataType, bits: int) -> bool:
    return bool(pa.types.is_signed_integer(t) and t.bit_width <= bits)


def _compatible(spark_type: T.DataType, t: pa.DataType) -> str | None:
    """None when Spark reads Arrow/Parquet type `t` as `spark_type`, else what is wrong."""
    if isinstance(spark_type, T.StringType):
        ok = pa.types.is_string(t) or pa.types.is_large_string(t)
        if pa.types.is_dictionary(t):
            ok = pa.types.is_string(t.value_type)
    elif isinstance(spark_type, T.LongType):
        ok = _int_ok(t, 64)
    elif isinstance(spark_type, T.IntegerType):
        ok = _int_ok(t, 32)
    elif isinstance(spark_type, T.BooleanType):
        ok = pa.types.is_boolean(t)
    elif isinstance(spark_type, T.TimestampType):
        if pa.types.is_timestamp(t) and t.unit == "ns":
            return f"{t} (nanoseconds: Spark cannot read them; write timestamp[us, tz=UTC])"
        ok = pa.types.is_timestamp(t)
    elif isinstance(spark_type, T.ArrayType):
        ok = (pa.types.is_list(t) or pa.types.is_large_list(t)) and _compatible(
            spark_type.elementType, t.value_type
        ) is None
    else:  # pragma: no cover - the event schema has no other types
        ok = False
    return None if ok else f"{t}, expected {spark_type.simpleString()}"


def _is_hidden(relative: str) -> bool:
    """Spark's rule for the files it skips (`InMemoryFileIndex.shouldFilterOutPathName`,
    applied to every component of the path under the directory): a name starting with `.`
    or with `_` (unless it holds `=`, a partition directory), or a file still being copied
    (`._COPYING_`): `_SUCCESS`, `.part-0.crc`, `_temporary/`."""
    return any(
        part.startswith(".") or (part.startswith("_") and "=" not in part)
        or part.endswith("._COPYING_")
        for part in relative.split("/") if part
    )


def _arrow_event_files(filesystem: pafs.FileSystem, root: str, events_dir: str) -> list[str]:
    info = filesystem.get_file_info(root)
    if info.type == pafs.FileType.NotFound:
        raise EventSchemaError(f"events directory {events_dir} does not exist")
    if info.type == pafs.FileType.File:  # Spark reads a single file given as the log
        return [root]
    files = []
    for entry in filesystem.get_file_info(pafs.FileSelector(root, recursive=True)):
        if entry.type == pafs.FileType.File and not _is_hidden(entry.path[len(root):]):
            files.append(entry.path)
    return sorted(files)


def _arrow_listing(events_dir: str) -> tuple[pafs.FileSystem, list[str]] | None:
    resolved = arrow_filesystem(events_dir)
    if resolved is None:
        return None
    filesystem, root = resolved
    try:
        return filesystem, _arrow_event_files(filesystem, root, events_dir)
    except OSError as exc:
        if isinstance(filesystem, pafs.LocalFileSystem):
            raise EventSchemaError(f"events directory {events_dir} cannot be listed ({exc})") \
                from exc
        return None  # a remote client pyarrow has but cannot use here: Hadoop's may work


def event_files(events_dir: str) -> list[str] | None:
    """Data files under the directory (recursively, hidden files skipped), as paths of the
    file system `jobs.store.filesystem.arrow_filesystem` opens, or None when pyarrow cannot
    list it (no client for the scheme, or a remote client that fails): `spark_event_files`
    lists it then."""
    listing = _arrow_listing(events_dir)
    return None if listing is None else listing[1]


def _arrow_schema_problem(path: str, schema: pa.Schema) -> str | None:
    names = set(schema.names)
    for column in REQUIRED_COLUMNS:
        if column not in names:
            return f"{path}: required column '{column}' is missing"
    for arrow_field in schema:
        if arrow_field.name not in EXPECTED_TYPES:
            continue  # extra columns are ignored (the input contract)
        problem = _compatible(EXPECTED_TYPES[arrow_field.name], arrow_field.type)
        if problem is not None:
            return f"{path}: column '{arrow_field.name}' has type {problem}"
    return None


def _check_with_arrow(filesystem: pafs.FileSystem, files: list[str]) -> None:
    for path in files:
        try:
            with filesystem.open_input_file(path) as handle:
                schema = pq.read_schema(handle)
        except (pa.ArrowInvalid, OSError) as exc:  # truncated, not Parquet, unreadable
            raise EventSchemaError(f"{path}: not a readable Parquet file ({exc})") from exc
        problem = _arrow_schema_problem(path, schema)
        if problem is not None:
            raise EventSchemaError(problem)


def check_event_files(events_dir: str, log: Callable[[str], None] = print,
                      spark: SparkSession | None = None) -> int:
    """Check every data file Spark will read under `events_dir` against `EVENT_SCHEMA`;
    return how many there are (0 for an empty directory, which is a valid, empty log).

    Raises `EventSchemaError` naming the file and why: a required column missing, a column
    of the wrong type, a file that is not readable Parquet (truncated, not Parquet at all),
    or "events directory X does not exist".

    The files are the ones Spark reads: the path is opened literally, as Hadoop does
    (`jobs.store.filesystem.arrow_filesystem`). When pyarrow can list it, the footers are read
    with pyarrow and no SparkSession is needed: call this before starting Spark. When it
    cannot (a scheme without a pyarrow client, `s3a://`, `hdfs://` without libhdfs, ...),
    the check is done through Spark's Hadoop file system (`check_with_spark`) if `spark` is
    given, else `NeedsSpark` is raised: the caller starts the session and calls again with
    it. The check is never skipped.
    """
    listing = _arrow_listing(events_dir)
    if listing is None:
        if spark is None:
            raise NeedsSpark(f"pyarrow cannot list {events_dir}: the schema check needs "
                             "the SparkSession (check_event_files(..., spark=session))")
        log(f"schema check through Spark: pyarrow cannot list {events_dir}")
        return check_with_spark(spark, events_dir)
    filesystem, files = listing
    _check_with_arrow(filesystem, files)
    return len(files)


# -- the same check through Spark, for file systems only Hadoop can open --------------------

def _spark_compatible(expected: T.DataType, actual: T.DataType) -> str | None:
    """None when Spark reads a Parquet column it infers as `actual` with the contract's
    `expected` type (what `_compatible` says for the Arrow type), else what is wrong."""
    ok = type(expected) is type(actual)
    if isinstance(expected, T.LongType):
        ok = isinstance(actual, (T.ByteType, T.ShortType, T.IntegerType, T.LongType))
    elif isinstance(expected, T.IntegerType):
        ok = isinstance(actual, (T.ByteType, T.ShortType, T.IntegerType))
    elif isinstance(expected, T.TimestampType):
        ok = isinstance(actual, (T.TimestampType, T.TimestampNTZType))
    elif isinstance(expected, T.ArrayType):
        ok = isinstance(actual, T.ArrayType) and _spark_compatible(
            expected.elementType, actual.elementType) is None
    return None if ok else f"{actual.simpleString()}, expected {expected.simpleString()}"


def _spark_schema_problem(path: str, schema: T.StructType) -> str | None:
    names = set(schema.names)
    for column in REQUIRED_COLUMNS:
        if column not in names:
            return f"{path}: required column '{column}' is missing"
    for spark_field in schema.fields:
        if spark_field.name not in EXPECTED_TYPES:
            continue
        problem = _spark_compatible(EXPECTED_TYPES[spark_field.name], spark_field.dataType)
        if problem is not None:
            return f"{path}: column '{spark_field.name}' has type {problem}"
    return None


def spark_event_files(spark: SparkSession, events_dir: str) -> list[str]:
    """Data files under the directory as Hadoop paths, listed by the Hadoop file system of
    the path (any scheme the cluster is configured for), hidden files skipped as Spark does.
    Runs on the driver (a few Py4J calls per file), no Spark job."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    hadoop_conf = spark.sparkContext._jsc.hadoopConfiguration()
    root = jvm.org.apache.hadoop.fs.Path(events_dir)
    filesystem = root.getFileSystem(hadoop_conf)
    if not filesystem.exists(root):
        raise EventSchemaError(f"events directory {events_dir} does not exist")
    root_path = str(filesystem.makeQualified(root).toUri().getPath()).rstrip("/")
    files = []
    listing = filesystem.listFiles(root, True)
    while listing.hasNext():
        path = listing.next().getPath()
        if not _is_hidden(str(path.toUri().getPath())[len(root_path):]):
            files.append(str(path.toString()))
    return sorted(files)


def _glob_escaped(path: str) -> str:
    """`spark.read` expands glob characters in a path; a file name holding one is read
    literally once they are escaped (Hadoop's glob syntax)."""
    return re.sub(r"([\\{}\[\]*?])", r"\\\1", path)


def check_with_spark(spark: SparkSession, events_dir: str) -> int:
    """`check_event_files` through Spark: list with Hadoop, read each file's footer with
    `spark.read.parquet(file).schema` (Spark's own type mapping). Each file costs a small
    Spark job, so this is for the file systems pyarrow cannot open."""
    files = spark_event_files(spark, events_dir)
    for path in files:
        try:
            schema = spark.read.parquet(_glob_escaped(path)).schema
        except Exception as exc:  # AnalysisException or a Py4J error from the footer read
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
            raise EventSchemaError(f"{path}: not a readable Parquet file ({first_line})") \
                from exc
        problem = _spark_schema_problem(path, schema)
        if problem is not None:
            raise EventSchemaError(problem)
    return len(files)


def read_events(spark: SparkSession, events_dir: str) -> DataFrame:
    """The whole log as a batch DataFrame with the explicit schema."""
    return spark.read.schema(EVENT_SCHEMA).options(**READ_OPTIONS).parquet(events_dir)


def stream_events(spark: SparkSession, events_dir: str, max_file_age: str) -> DataFrame:
    """The files not yet seen by the checkpoint, as a streaming DataFrame."""
    return (
        spark.readStream.schema(EVENT_SCHEMA)
        .options(**READ_OPTIONS)
        .option("maxFileAge", max_file_age)
        .parquet(events_dir)
    )

