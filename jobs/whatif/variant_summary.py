"""The what-if's tables built on the driver after its query, when the workers have written
the variants' rows in the what-if's own columns (`jobs.whatif.variant_files`): the
`whatif_sharing` rows they staged, the timelines, and each variant's `incidents` and
`run_summary`, rolled up over its whole windows and findings, read through
`jobs.store.variant_rows_arrow` (the rows it shares with its base included), as few
variants at a time as keep each read under a bound on rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from jobs.engine.codec import rows_to_record_batch
from jobs.engine.incidents_table import incident_batches, run_incidents
from jobs.engine.offline_rollup import Rollup, Window, window_sums
from jobs.engine.run_summary import summary_batches
from jobs.engine.timeline import timeline_rows
from jobs.store.filesystem import delete_path, list_names, opened, path_exists, rename_path
from jobs.store.layout import OutLayout, partition_path
from jobs.store.ledger import BatchCounts
from jobs.store.tables import write_partition
from jobs.store.variant_rows_arrow import arrow_variant_table
from jobs.whatif.variant_files import SHARING, variant_file_schema
from schemas.tables import TIMELINE_TABLES
from schemas.whatif import VARIANT_SEPARATOR, WHATIF_TABLES
from statemachine.cluster import ClusterTimeline
from statemachine.incidents import UNCLEAN_ELECTION, Election
from statemachine.model import INCIDENT_KINDS, OFFLINE
from statemachine.rows import PartitionWindowRow

# The `partition_windows` rows (every kind, as the ledger counts them) of the variants read
# at once. A read holds, as Arrow columns, only the kinds it rolls up (a few in a hundred of
# those rows on the simulated logs); a variant is never split across reads. Each read scans
# the whole table, so it is wide; only one variant's windows at a time become Python
# objects (some 2 KB a window), so the driver's memory follows one variant, not the sweep.
WINDOW_ROWS_PER_READ = 16_000_000
WINDOW_COLUMNS = list(PartitionWindowRow._fields)
TIMES = ("start_ts", "end_ts")


def write_variant_partition(out_dir: str, table: str, run_id: str,
                            data: pa.Table | None) -> int:
    """Replace this run's partition of a what-if table with `data` (every column but
    `run_id`; none: an empty file with the schema). Returns the rows."""
    return write_partition(out_dir, table, run_id, data, variant_file_schema(table))


def split_composite(batches: Sequence[pa.RecordBatch]) -> pa.Table | None:
    """Rows of a replay table keyed by composite clusters -> the what-if's columns."""
    if not batches:
        return None
    rows = pa.Table.from_batches(batches)
    composite = rows.column("cluster").to_pylist()
    parts = [c.split(VARIANT_SEPARATOR, 1) for c in composite]
    return rows.set_column(0, "cluster", pa.array([p[0] for p in parts], pa.string())) \
        .append_column("variant", pa.array([p[1] for p in parts], pa.string()))


def write_timelines(timelines: dict[str, ClusterTimeline], staging: str, run_id: str) -> None:
    """Each variant's broker and controller timelines (keyed by composite cluster)."""
    batches: dict[str, list[pa.RecordBatch]] = {table: [] for table in TIMELINE_TABLES}
    for key, timeline in sorted(timelines.items()):
        for table, rows in timeline_rows(timeline).items():
            batches[table].append(rows_to_record_batch(table, key, run_id, rows))
    for table in TIMELINE_TABLES:
        write_variant_partition(staging, table, run_id, split_composite(batches[table]))


def publish_sharing(staging: str, run_id: str) -> pa.Table:
    """The `whatif_sharing` rows the workers staged, moved into the run's partition (an
    empty one when no variant shares a group); returns them."""
    layout = OutLayout(staging)
    staged, target = layout.staged_run(SHARING, run_id), partition_path(staging, SHARING,
                                                                          run_id)
    delete_path(target)
    batches = [f"{staged}/{name}" for name in list_names(staged)] if path_exists(staged) \
        else []
    files = [f"{b}/{name}" for b in batches for name in list_names(b)]
    if not files:
        write_variant_partition(staging, SHARING, run_id, None)
    else:
        for n, path in enumerate(files):
            rename_path(path, f"{target}/part-{n:05d}.parquet")
    delete_path(layout.staging(SHARING))
    return _read(target)


def _read(partition: str) -> pa.Table:
    filesystem, directory = opened(partition)
    return pq.read_table(directory, filesystem=filesystem,
                         schema=variant_file_schema(SHARING))


def add_shared_rows(counts: BatchCounts, sharing: pa.Table) -> None:
    """A variant's `rows_written` counts its whole tables: the rows it shares too."""
    for row in sharing.to_pylist():
        key = f"{row['cluster']}{VARIANT_SEPARATOR}{row['variant']}"
        for table, n in row["rows_shared"] or []:
            counts[key].rows_written[table] += n


def ensure_partitions(staging: str, run_id: str) -> None:
    """Every what-if table has this run's partition in its own columns: a table no group
    wrote rows to has the replay's empty file, replaced by an empty what-if one."""
    for table in WHATIF_TABLES:
        partition = partition_path(staging, table, run_id)
        if not path_exists(partition) or not _has_variant(partition):
            write_variant_partition(staging, table, run_id, None)


def _has_variant(partition: str) -> bool:
    filesystem, directory = opened(partition)
    names = [n for n in list_names(partition) if n.endswith(".parquet")]
    return not names or "variant" in pq.read_schema(f"{directory}/{names[0]}",
                                                    filesystem=filesystem).names


def variant_reads(keys: Sequence[str], counts: BatchCounts,
                  budget: int) -> Iterator[tuple[list[str], list[str]]]:
    """(composite keys, their variants' names) in variant order, as many variants at a
    time as keep their `partition_windows` rows within `budget` (at least one)."""
    rows: dict[str, int] = {}
    for key in keys:
        name = key.split(VARIANT_SEPARATOR, 1)[1]
        rows[name] = rows.get(name, 0) + (counts[key].rows_written["partition_windows"]
                                          if key in counts else 0)
    part: list[str] = []
    held = 0
    for name in sorted(rows):
        if part and held + rows[name] > budget:
            yield _keys_of(keys, part), part
            part, held = [], 0
        part.append(name)
        held += rows[name]
    if part:
        yield _keys_of(keys, part), part


def _keys_of(keys: Sequence[str], names: list[str]) -> list[str]:
    wanted = set(names)
    return [k for k in keys if k.split(VARIANT_SEPARATOR, 1)[1] in wanted]


def _by_variant(rows: pa.Table, keys: Sequence[str],
                names: list[str]) -> Iterator[tuple[str, list[str], pa.Table]]:
    """Each variant's name, composite keys and rows of a read, one variant at a time."""
    for name in names:
        yield name, _keys_of(keys, [name]), _of_variant(rows, name)


def _of_variant(rows: pa.Table, name: str) -> pa.Table:
    return rows.filter(pc.equal(rows.column("variant"), name))


def _key(cluster: pa.ChunkedArray, variant: pa.ChunkedArray) -> list[str]:
    keys: list[str] = pc.binary_join_element_wise(cluster, variant,
                                                  VARIANT_SEPARATOR).to_pylist()
    return keys


def _micros(column: pa.ChunkedArray) -> list[int | None]:
    values: list[int | None] = pc.cast(column, pa.int64()).to_pylist()
    return values


def offline_rollups(staging: str, run_id: str, counts: BatchCounts,
                    budget: int = WINDOW_ROWS_PER_READ) -> dict[str, Rollup]:
    """Per variant and cluster, `jobs.engine.offline_rollup` of its whole offline windows:
    each variant is a whole log replayed afresh, its period the whole log. `counts` (each
    variant's whole tables') size the reads."""
    rollups = {k: Rollup(c.last_ts) for k, c in counts.items() if c.last_ts >= 0}
    for keys, names in variant_reads(sorted(rollups), counts, budget):
        read = arrow_variant_table(staging, "partition_windows", run_id, names,
                                   pc.field("kind") == OFFLINE,
                                   ["cluster", "variant", "topic", "cause_broker", *TIMES])
        for _, variant_keys, rows in _by_variant(read, keys, names):
            columns = [_key(rows.column("cluster"), rows.column("variant")),
                       rows.column("topic").to_pylist(),
                       rows.column("cause_broker").to_pylist(),
                       *(_micros(rows.column(t)) for t in TIMES)]
            windows = [Window(*w) for w in zip(*columns, strict=True)]
            part = {k: rollups[k] for k in variant_keys}
            for attr, key, name, us in window_sums(windows, {}, part):
                getattr(part[key], attr)[name] = round(us / 1e6, 6)
    for rollup in rollups.values():
        rollup.seconds = round(sum(rollup.by_topic.values()), 6)
    return rollups


def write_incidents(staging: str, run_id: str, as_of: dict[str, int | None],
                    counts: BatchCounts, budget: int = WINDOW_ROWS_PER_READ) -> int:
    """Each variant's `incidents`, rolled up over its whole windows and elections, read as
    `offline_rollups` reads them."""
    found = {}
    for keys, names in variant_reads(sorted(as_of), counts, budget):
        read = arrow_variant_table(staging, "partition_windows", run_id, names,
                                   pc.field("kind").isin(sorted(INCIDENT_KINDS)),
                                   ["cluster", "variant", *WINDOW_COLUMNS])
        unclean = arrow_variant_table(staging, "findings", run_id, names,
                                      pc.field("kind") == UNCLEAN_ELECTION,
                                      ["cluster", "variant", "seq", "topic", "partition"])
        for name, variant_keys, windows in _by_variant(read, keys, names):
            found.update(run_incidents(_window_reads(windows, run_id),
                                       _elections(_of_variant(unclean, name)), run_id,
                                       {k: as_of[k] for k in variant_keys}))
    return write_variant_partition(staging, "incidents", run_id,
                                   split_composite(incident_batches(found, run_id)))


def _window_reads(windows: pa.Table, run_id: str) -> list[tuple[str, str,
                                                                 PartitionWindowRow]]:
    columns = [_micros(windows.column(c)) if c in TIMES else windows.column(c).to_pylist()
               for c in WINDOW_COLUMNS]
    return [(k, run_id, PartitionWindowRow(*w)) for k, *w in zip(
        _key(windows.column("cluster"), windows.column("variant")), *columns, strict=True)]


def _elections(unclean: pa.Table) -> list[tuple[str, Election]]:
    return [(k, Election(s, t, p)) for k, s, t, p in zip(
        _key(unclean.column("cluster"), unclean.column("variant")),
        unclean.column("seq").to_pylist(), unclean.column("topic").to_pylist(),
        unclean.column("partition").to_pylist(), strict=True)
        if s is not None and t is not None and p is not None]


def write_summary(staging: str, run_id: str, counts: BatchCounts, rollups: dict[str, Rollup],
                  batches: int, buckets: int, started_at: datetime,
                  finished_at: datetime) -> None:
    write_variant_partition(staging, "run_summary", run_id, split_composite(summary_batches(
        counts, rollups, batches, run_id, buckets, started_at, finished_at, {})))
