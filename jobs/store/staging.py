"""Output tables written by the Python workers that fold them, committed by the driver.

Each group's rows of a table go, in the worker that folded them, straight to Parquet files
under `<out>/<table>/_staging/<run_id>/batch-<N>/` (pyarrow, on the file system of `--out`:
`jobs.store.filesystem.arrow_filesystem`). Nothing crosses back into the JVM but a count per
(group, table). Once the micro-batch is computed, the driver commits it: the first batch of
a run renames its staging directory to the run's partition `run_id=<run_id>` (replacing
it), a later batch moves its files into that partition. Then the ledger is written and
Spark commits the batch (`jobs.engine.batch_sink`).

* File names are deterministic, `part-b<N>-<cluster digest>-<bucket>-<chunk>.parquet`: a
  retried or speculative task rewrites its own files, never adds others.
* The driver empties the batch's staging directory before the batch runs, so files of an
  attempt killed before its commit are never committed; a leading `_` makes every Spark
  and pyarrow reader of the table skip the directory, and it is removed after the commit.
* The staging directory of a batch reaches the workers as a local property of the jobs the
  sink starts (`STAGING_PROPERTY`), read in the task (`StagingArea.of_task`).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cache

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs as pafs
from pyspark import TaskContext
from pyspark.sql import SparkSession

from jobs.store.filesystem import (
    arrow_filesystem,
    delete_path,
    list_names,
    path_exists,
    rename_path,
)
from jobs.store.layout import OutLayout, partition_path
from jobs.store.tables import WRITE_OPTIONS, write_empty_partition

STAGING_PROPERTY = "jobs.store.staging"
# The crash tests' worker kill: with `REPLAY_KILL_WORKER_ONCE=<file>` in its environment, the
# first Python worker to stage a file creates `<file>` and dies at once (os._exit), after
# its first file and before its task ends; Spark retries the task.
KILL_WORKER_ENV = "REPLAY_KILL_WORKER_ONCE"


@cache
def _filesystem(out: str) -> tuple[pafs.FileSystem, str]:
    opened = arrow_filesystem(out)
    if opened is None:
        raise OSError(f"pyarrow has no file system for {out}")
    return opened


def digest(cluster: str) -> str:
    """A cluster name as a file-name part (a cluster is any string)."""
    return hashlib.sha1(cluster.encode()).hexdigest()[:12]


def _maybe_killed() -> None:
    marker = os.environ.get(KILL_WORKER_ENV)
    if not marker:
        return
    try:
        with open(marker, "x"):
            pass
    except FileExistsError:
        return
    os._exit(1)


@dataclass(frozen=True)
class StagingArea:
    """Where the tables of one micro-batch of one run are staged."""

    out: str
    run_id: str
    batch: int

    def to_property(self) -> str:
        return json.dumps([self.out, self.run_id, self.batch])

    @classmethod
    def of_task(cls) -> StagingArea | None:
        """The staging area the running task's job was started with, if any."""
        context = TaskContext.get()
        text = context.getLocalProperty(STAGING_PROPERTY) if context is not None else None
        if not text:
            return None
        out, run_id, batch = json.loads(text)
        return cls(str(out), str(run_id), int(batch))

    def run_dir(self, table: str) -> str:
        return OutLayout(self.out).staged_run(table, self.run_id)

    def batch_dir(self, table: str) -> str:
        return f"{self.run_dir(table)}/batch-{self.batch}"

    def _arrow_dir(self, path: str) -> tuple[pafs.FileSystem, str]:
        """A directory under `out` (a Hadoop path), created, as pyarrow names it."""
        filesystem, root = _filesystem(self.out)
        directory = root.rstrip("/") + path[len(self.out.rstrip("/")):]
        filesystem.create_dir(directory, recursive=True)
        return filesystem, directory

    # -- in the worker ---------------------------------------------------------------------

    def write(self, table: str, cluster: str, bucket: int, chunk: int,
              batch: pa.RecordBatch) -> None:
        """One chunk of one group's rows of `table` (file_schema), as one Parquet file."""
        filesystem, directory = self._arrow_dir(self.batch_dir(table))
        name = f"part-b{self.batch}-{digest(cluster)}-{bucket}-{chunk:05d}.parquet"
        pq.write_table(pa.Table.from_batches([batch]), f"{directory}/{name}",
                       filesystem=filesystem, **WRITE_OPTIONS)
        _maybe_killed()

    # -- on the driver ---------------------------------------------------------------------

    def clear(self, spark: SparkSession, tables: tuple[str, ...]) -> None:
        """Remove what an earlier attempt of this batch staged."""
        for table in tables:
            delete_path(self.batch_dir(table))

    def commit(self, spark: SparkSession, table: str, replace: bool) -> bool:
        """Move the staged files of `table` into the run's partition (replacing it when
        `replace`); False when this batch staged none."""
        staged = self.batch_dir(table)
        if not path_exists(staged):
            return False
        partition = partition_path(self.out, table, self.run_id)
        if replace:
            delete_path(partition)
            rename_path(staged, partition)
            return True
        if not path_exists(partition):
            rename_path(staged, partition)
            return True
        for name in list_names(staged):
            rename_path(f"{staged}/{name}", f"{partition}/{name}")
        return True

    def write_empty(self, spark: SparkSession, table: str) -> None:
        """The run's partition of a table without rows in the run: one file with the
        schema and no rows, so that the table reads back whatever the run found."""
        write_empty_partition(self.out, table, self.run_id)

    def clean(self, spark: SparkSession, tables: tuple[str, ...]) -> None:
        """Remove the run's staging directories once the batch is committed."""
        for table in tables:
            delete_path(self.run_dir(table))
            parent = OutLayout(self.out).staging(table)
            if path_exists(parent) and not list_names(parent):
                delete_path(parent)
