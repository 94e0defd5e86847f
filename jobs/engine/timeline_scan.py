"""The timeline scan's read of the log with pyarrow on the driver (`jobs.engine.timeline`).

The files are the ones the caller's DataFrame reads (`DataFrame.inputFiles()`, URIs),
opened literally as Spark opens them (`jobs.store.filesystem`). Each row's cluster is read (the
clusters a run wakes) and the whole rows of the timeline event types
(`statemachine.cluster.TIMELINE_EVENTS`, a tiny share of a log) are kept: the files are
read batch by batch, and nothing else of a batch outlives it (the log checks are Spark's,
`jobs.engine.log_checks_query`), so the driver holds a few batches and the timeline rows
whatever the log's size.

A small read (at most `check_up_to` rows by the files' footers, `jobs.engine.sizing`'s
`SMALL_LOG_ROWS`) also keeps each row's scope and fingerprint (`jobs.engine.log_checks.narrow`,
about 100 bytes a row): the driver checks those rows itself, with the same definition the
Spark query is tested against, and spares a night of a few thousand rows the query's
seconds of planning and code generation. The bound is fixed, so the driver's share stays
bounded too. Whatever pyarrow
might read differently from Spark is left to Spark: a scheme without a pyarrow client,
files on more than one file system, a timestamp without a time zone, a column name that
matches the contract only case-insensitively (Spark resolves it, pyarrow would read nulls),
a file pyarrow cannot read or cast. The caller then scans with Spark.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from pyarrow import fs as pafs

from jobs.common.uris import scheme_of
from jobs.engine.log_checks import concat_narrow, narrow
from jobs.store.filesystem import arrow_filesystem
from schemas import event_types as ET
from schemas.arrow import arrow_schema
from schemas.events import EVENT_SCHEMA
from statemachine.cluster import TIMELINE_EVENTS

EVENT_ARROW_SCHEMA = arrow_schema(EVENT_SCHEMA)


class TimelineRows(NamedTuple):
    clusters: list[str]  # every cluster of the files, sorted (a null cluster is the default)
    rows: pa.Table  # the rows of the timeline event types, valid or not, EVENT_SCHEMA
    # Every row's scope and fingerprint (`log_checks.narrow`) for a small read, else None.
    narrow: pa.Table | None = None


def open_files(uris: Iterable[str]) -> tuple[pafs.FileSystem, list[str]] | None:
    """One pyarrow file system and the paths in it of Spark's file URIs, or None."""
    filesystem: pafs.FileSystem | None = None
    paths = []
    for uri in uris:
        if scheme_of(uri) == "file":  # Spark's URI is encoded: decode the path part only
            opened: tuple[pafs.FileSystem, str] | None = (
                pafs.LocalFileSystem(), unquote(urlsplit(uri).path))
        else:  # the Hadoop path Spark reads for this URI (jobs.engine.log_history does the same)
            opened = arrow_filesystem(unquote(uri))
        if opened is None:
            return None
        if filesystem is None:
            filesystem = opened[0]
        elif not filesystem.equals(opened[0]):
            return None
        paths.append(opened[1])
    return (filesystem or pafs.LocalFileSystem()), paths


def read_like_spark(schema: pa.Schema) -> bool:
    """Whether pyarrow reads a file of this physical schema as Spark reads it with
    `EVENT_SCHEMA` (the schema check has already refused what neither can read)."""
    names = set(EVENT_SCHEMA.fieldNames())
    for f in schema:
        if f.name not in names and f.name.lower() in names:
            return False
        if f.name == "ts" and pa.types.is_timestamp(f.type) and f.type.tz is None:
            return False
    return True


def read_timeline_rows(uris: Iterable[str], check_up_to: int = 0) -> TimelineRows | None:
    """The clusters and timeline rows of the files, with every row narrowed for the log
    checks when the files hold at most `check_up_to` rows; None when Spark must read them."""
    opened = open_files(uris)
    if opened is None:
        return None
    filesystem, paths = opened
    wanted = pa.array(sorted(TIMELINE_EVENTS), pa.string())
    clusters: set[str] = set()
    kept, narrowed = [], []
    try:
        dataset = ds.dataset(paths, schema=EVENT_ARROW_SCHEMA, format="parquet",
                             filesystem=filesystem)
        if not all(read_like_spark(f.physical_schema) for f in dataset.get_fragments()):
            return None
        # The footers' counts, no data read; not even those when the caller checks no read.
        small = check_up_to > 0 and dataset.count_rows() <= check_up_to
        # Little read-ahead: the driver holds a few batches, not a file's worth of them.
        for batch in dataset.to_batches(batch_readahead=2, fragment_readahead=1):
            cluster = pc.fill_null(batch.column("cluster"), ET.DEFAULT_CLUSTER)
            clusters.update(pc.unique(cluster).to_pylist())
            kept.append(batch.filter(pc.is_in(batch.column("event_type"), value_set=wanted)))
            if small:
                narrowed.append(narrow(batch))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError):
        return None
    return TimelineRows(sorted(clusters), pa.Table.from_batches(kept, schema=EVENT_ARROW_SCHEMA),
                        concat_narrow(narrowed) if small else None)
