"""Parquet sink for simulated events: the columns and types of the event-log contract
(docs/tables.md), in files of bounded size named so that file order is seq order, written
one at a time."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from schemas.arrow import arrow_schema
from schemas.events import EVENT_COLUMNS, EVENT_SCHEMA

# One row as the simulator builds it: the values of EVENT_COLUMNS in order, `ts` as
# microseconds since the epoch (UTC), lists as tuples of int.
Row = tuple[Any, ...]

# Derived from the Spark contract through the one Spark -> Arrow mapping (schemas/arrow.py),
# so a column's type is stated once; every field of EVENT_SCHEMA is nullable, and so is
# every field of the files (bad rows carry nulls).
ARROW_SCHEMA = arrow_schema(EVENT_SCHEMA)
FILE_PATTERN = "part-{:05d}.parquet"


class ParquetSink:
    """Buffers whole controller events (all rows of one seq) and writes a file when the
    next event would push it past `rows_per_file`, so a seq never straddles two files."""

    def __init__(self, out_dir: str | os.PathLike[str], rows_per_file: int) -> None:
        self.out = Path(out_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        for old in self.out.glob("part-*.parquet"):
            old.unlink()  # a rerun replaces the log; only our own file pattern is touched
        self.rows_per_file = rows_per_file
        self.buf: list[Row] = []
        self.files = 0
        self.rows = 0

    def write_group(self, rows: list[Row]) -> None:
        if self.buf and len(self.buf) + len(rows) > self.rows_per_file:
            self.flush()
        self.buf.extend(rows)

    def flush(self) -> None:
        if not self.buf:
            return
        cols = list(zip(*self.buf, strict=True))
        # The simulator never writes the trailing PartitionSnapshot columns: all null.
        cols += [(None,) * len(self.buf)] * (len(ARROW_SCHEMA) - len(cols))
        arrays = [pa.array(col, type=f.type) for col, f in zip(cols, ARROW_SCHEMA, strict=True)]
        table = pa.Table.from_arrays(arrays, schema=ARROW_SCHEMA)
        name = FILE_PATTERN.format(self.files)
        # Write under a hidden name and rename: Spark ignores dot files, so a streaming
        # reader never sees a half-written file.
        tmp = self.out / f".{name}.tmp"
        pq.write_table(table, tmp, compression="snappy")
        os.replace(tmp, self.out / name)
        self.files += 1
        self.rows += len(self.buf)
        self.buf = []

    def close(self) -> int:
        self.flush()
        return self.files


assert tuple(ARROW_SCHEMA.names) == EVENT_COLUMNS
