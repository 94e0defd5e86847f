"""The run a command means when `--run-id` is not given: the latest in `<tables>/run_summary`.

Latest is the run whose `run_summary` row finished last (`finished_at`; ties go to the
greatest run id), the same rule the report and the what-if baseline use. Read with pyarrow
and no Spark, so the choice is made (and printed) before a session starts; a path pyarrow
has no client for asks for `--run-id` instead.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import NamedTuple

import pyarrow as pa
import pyarrow.dataset as ds
from pyarrow import fs as pafs

from jobs.common.exitcodes import BAD_INPUT, BadInput
from jobs.store.filesystem import arrow_filesystem
from jobs.store.layout import RUN_PARTITIONING, OutLayout


class NoRunError(BadInput):
    """No run to pick: the message is the one line the command prints."""


class LatestRun(NamedTuple):
    run_id: str
    finished_at: datetime | None


def latest_run(tables_dir: str) -> LatestRun:
    """The run of `tables_dir` that finished last; NoRunError when there is none."""
    path = OutLayout(tables_dir).table("run_summary")
    opened = arrow_filesystem(path)
    if opened is None:
        raise NoRunError(f"cannot list the runs of {path} without Spark: give --run-id")
    filesystem, inner = opened
    try:
        if filesystem.get_file_info(inner).type != pafs.FileType.Directory:
            raise NoRunError(f"no run under {tables_dir}: {path} does not exist "
                             "(replay into it first, or give --run-id)")
        dataset = ds.dataset(inner, filesystem=filesystem, format="parquet",
                             partitioning=RUN_PARTITIONING)
        table = None if not dataset.files else dataset.to_table(
            columns=["run_id", "finished_at"])
    except (OSError, pa.ArrowException) as exc:
        raise NoRunError(f"cannot read {path}: {exc}") from exc
    if table is None or table.num_rows == 0:
        raise NoRunError(f"no run under {tables_dir}: {path} holds none "
                         "(replay into it first, or give --run-id)")
    row = table.sort_by([("finished_at", "descending"), ("run_id", "descending")]).slice(0, 1)
    return LatestRun(str(row.column("run_id")[0].as_py()), row.column("finished_at")[0].as_py())


def default_run_id(parser: argparse.ArgumentParser, tables_dir: str, command: str) -> str:
    """The latest run's id, printed as the run picked; a tables directory without a run
    exits 2 with one line."""
    try:
        run = latest_run(tables_dir)
    except NoRunError as exc:
        parser.exit(BAD_INPUT, f"[{command}] ERROR: {exc}\n")
    finished = (f"finished {run.finished_at:%Y-%m-%d %H:%M:%S} UTC" if run.finished_at
                else "no finish time")
    print(f"[{command}] no --run-id: run {run.run_id}, the latest in {tables_dir} ({finished})",
          flush=True)
    return run.run_id
