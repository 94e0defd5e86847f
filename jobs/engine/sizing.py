"""Spark settings sized for a small log, for a local run that starts its own session.

A few thousand rows fold in a fraction of a second; what a small replay waits for is Spark's
fixed costs. Two of them depend on settings made for large logs:

* the driver JVM's start and warm-up: the parallel collector pays off over minutes of work;
  a run of seconds starts faster with the serial collector and the client compiler only
  (`-XX:TieredStopAtLevel=1`, which `conf/spark/local.conf` already gives every local run);
  the tests' session uses the same; an option already configured is not repeated;
* the stateful operator's tasks: one per shuffle partition (8 locally, to balance a large
  log's uneven buckets on 2 cores), each opening its state store and handing its groups to a
  Python worker. A small log gets one task per core.

The shuffle partitions are the number of state stores, fixed in the checkpoint by its first
run: they are only sized down for a run on a temporary checkpoint (no `--checkpoint`), never
for a checkpoint a later run resumes. A cluster (spark-submit, a non-local master) is left
as configured.
"""

from __future__ import annotations

import os

import pyarrow.parquet as pq

from jobs.engine.event_log import event_files
from jobs.store.filesystem import arrow_filesystem

# At or under this many event rows a log is small (the `sample` preset has 6,000; `bench`
# 1,000,000): its session is sized down, and the timeline scan checks its rows on the driver
# (`jobs.engine.timeline_scan`) rather than by a Spark query.
SMALL_LOG_ROWS = 100_000
# The client compiler alone sizes the code cache at 48 MB, which a what-if's generated plans
# fill (the JVM then stops compiling): 240 MB is the tiered compilers' default.
SMALL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC"


def log_rows(events_dir: str, limit: int = SMALL_LOG_ROWS) -> int | None:
    """The event rows under `events_dir` from the files' footers, counted until `limit` is
    passed; None when pyarrow cannot list the directory."""
    files, opened = event_files(events_dir), arrow_filesystem(events_dir)
    if files is None or opened is None:
        return None
    filesystem = opened[0]
    rows = 0
    for path in files:
        with filesystem.open_input_file(path) as handle:
            rows += pq.read_metadata(handle).num_rows
        if rows > limit:
            break
    return rows


def local_master(master: str | None) -> bool:
    return master is None or master.startswith("local")


def small_log_settings(rows: int | None, master: str | None, temporary_checkpoint: bool,
                       java_options: str = "") -> dict[str, str]:
    """Settings for a session that replays `rows` event rows (none for a large log, an
    unknown size or a cluster). `java_options` are the driver's configured ones, kept."""
    if rows is None or rows > SMALL_LOG_ROWS or not local_master(master):
        return {}
    added = " ".join(o for o in SMALL_JVM_OPTIONS.split() if o not in java_options.split())
    settings = {"spark.driver.extraJavaOptions": f"{java_options} {added}".strip()}
    if temporary_checkpoint:
        cores = str(os.cpu_count() or 1)
        settings |= {"spark.sql.shuffle.partitions": cores, "spark.default.parallelism": cores}
    return settings
