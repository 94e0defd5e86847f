"""Reading the event log: the schema check that fails fast, and the Spark readers.

A file Spark cannot read with `EVENT_SCHEMA` (a required column missing, a column of the
wrong type) must fail the job before anything is written, with a message naming the column
and the file. Spark would only fail inside the streaming query, or silently read
a missing column as nulls, so the footers are checked first with pyarrow on the driver.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs as pafs
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from schemas.events import EVENT_SCHEMA, REQUIRED_COLUMNS

# File-source options shared by the batch and the streaming readers: any file layout under
# the directory is a log (the input contract, docs/tables.md); hidden and `_`-prefixed
# files are skipped by Spark as by us.
READ_OPTIONS = {"recursiveFileLookup": "true"}


class EventSchemaError(ValueError):
    """An event file cannot be read with the event-log schema."""


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


def _filesystem(path: str) -> tuple[pafs.FileSystem, str] | None:
    """The filesystem and the path in it, or None when pyarrow cannot open the URI."""
    try:
        resolved: tuple[pafs.FileSystem, str] = pafs.FileSystem.from_uri(
            path if "://" in path else f"file://{os.path.abspath(path)}")
        return resolved
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError):
        return None



def event_files(events_dir: str) -> list[str] | None:
    """Data files under the directory (recursively, hidden files skipped), or None when the
    filesystem is not one pyarrow can list (the check is then left to Spark)."""
    resolved = _filesystem(events_dir)
    if resolved is None:
        return None
    filesystem, root = resolved
    info = filesystem.get_file_info(root)
    if info.type == pafs.FileType.NotFound:
        raise EventSchemaError(f"events directory {events_dir} does not exist")
    selector = pafs.FileSelector(root, recursive=True)
    files = []
    for f in filesystem.get_file_info(selector):
        rel = f.path[len(root):].lstrip("/")
        if f.type != pafs.FileType.File:
            continue
        if any(part.startswith(("_", ".")) for part in rel.split("/")):
            continue
        files.append(f.path)
    return sorted(files)


def check_event_files(events_dir: str, log: Callable[[str], None] = print) -> int:
    """Raise `EventSchemaError` naming the file and column if a file cannot be read.

    Returns the number of files checked (-1 when the filesystem could not be listed).
    """
    files = event_files(events_dir)
    if files is None:
        log(f"schema check skipped: pyarrow cannot list {events_dir}")
        return -1
    resolved = _filesystem(events_dir)
    assert resolved is not None
    filesystem = resolved[0]
    expected = {f.name: f.dataType for f in EVENT_SCHEMA.fields}
    for path in files:
        try:
            with filesystem.open_input_file(path) as handle:
                schema = pq.read_schema(handle)
        except (pa.ArrowInvalid, OSError) as exc:
            raise EventSchemaError(f"{path}: not a readable Parquet file ({exc})") from exc
        names = set(schema.names)
        for column in REQUIRED_COLUMNS:
            if column not in names:
                raise EventSchemaError(f"{path}: required column '{column}' is missing")
        for field in schema:
            if field.name not in expected:
                continue  # extra columns are ignored (the input contract)
            problem = _compatible(expected[field.name], field.type)
            if problem is not None:
                raise EventSchemaError(f"{path}: column '{field.name}' has type {problem}")
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

