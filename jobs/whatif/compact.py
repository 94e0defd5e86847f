"""A what-if's published tables in a few large files instead of one per replay group.

The workers stage one Parquet file per (replay group, variant, table)
(`jobs.whatif.variant_files`): a sweep of 13 variants over 64 buckets publishes about 860
small files per table. Every Spark scan of such a table lists, opens and plans them all,
and the file listing travels with each task ("Broadcasting large task binary"); the impact
stage scans each table several times. So after publishing, each table's partition of the
run is rewritten (pyarrow, streamed: a batch at a time, on the file system of `--out`)
into files of at most FILE_ROWS rows, then put in place of the small ones. The rows and
their columns are the workers' own: only the file boundaries move.
"""

from __future__ import annotations

import pyarrow.dataset as ds
from pyarrow import fs as pafs

from jobs.store.filesystem import opened
from jobs.store.layout import partition_path
from jobs.store.tables import WRITE_OPTIONS
from jobs.whatif.variant_files import variant_file_schema

FILE_ROWS = 4_000_000
GROUP_ROWS = 256 * 1024  # Parquet row groups: Spark splits a file's scan at these
COMPACTING = "_compacting-"  # a leading `_`: every reader of the table skips it


def compact_partition(out_dir: str, table: str, run_id: str) -> int:
    """The run's partition of `table` rewritten into few files; returns its row count.
    A partition of one file, or none, is left as it is."""
    partition = partition_path(out_dir, table, run_id)
    filesystem, path = opened(partition)
    files = _parquet_files(filesystem, path)
    if len(files) <= 1:
        return -1
    schema = variant_file_schema(table)
    source = ds.dataset(files, schema=schema, filesystem=filesystem,
                        format=ds.ParquetFileFormat(coerce_int96_timestamp_unit="us"))
    parent, name = path.rstrip("/").rsplit("/", 1)
    target = f"{parent}/{COMPACTING}{name}"
    filesystem.delete_dir_contents(target, missing_dir_ok=True)
    rows = int(source.count_rows())
    ds.write_dataset(source, target, format="parquet", filesystem=filesystem,
                     schema=schema, basename_template="part-compact-{i}.parquet",
                     max_rows_per_file=FILE_ROWS, min_rows_per_group=GROUP_ROWS,
                     max_rows_per_group=GROUP_ROWS, existing_data_behavior="error",
                     file_options=ds.ParquetFileFormat().make_write_options(**WRITE_OPTIONS))
    written = ds.dataset(target, schema=schema, filesystem=filesystem, format="parquet")
    if written.count_rows() != rows:  # never swap in fewer or more rows than were there
        filesystem.delete_dir(target)
        raise OSError(f"compacting {table} of run {run_id} changed its row count")
    filesystem.delete_dir(path)
    filesystem.move(target, path)
    return rows


def _parquet_files(filesystem: pafs.FileSystem, path: str) -> list[str]:
    infos = filesystem.get_file_info(pafs.FileSelector(path, allow_not_found=True))
    return sorted(i.path for i in infos
                  if i.type == pafs.FileType.File and i.base_name.endswith(".parquet"))
