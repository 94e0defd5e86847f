"""The tables of a KRaft run written, its continuity checked and its summary printed: the
same for a run folded on the driver (`pipeline`) and one folded by topic bucket on the
executors (`executors`), and for the what-if's variants."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

import pyarrow as pa

from jobs.engine.changes_table import change_batches
from jobs.engine.codec import rows_batch, rows_to_record_batch
from jobs.engine.incidents_table import incident_batches
from jobs.engine.kraft.continuity import OFFSET_GAP, offset_facts, with_offset_facts
from jobs.engine.kraft.fold import SKIPPED, ClusterRun
from jobs.engine.kraft.metadata_source import ClusterLog, KraftInput, segment_ranges
from jobs.engine.kraft.writes import MetadataWriteRow
from jobs.engine.run_summary import continuity_lines, print_rollup, summary_batches
from jobs.store.kraft_checkpoint import ClusterState
from jobs.store.tables import ensure_run_partitions, file_schema, write_arrow, write_partition

FOLD_TABLES = ("partition_states", "partition_windows", "findings", "broker_timeline",
               "controller_timeline")

log = logging.getLogger(__name__)


def check_offsets(kraft: KraftInput, runs: dict[str, ClusterRun],
                  logs: dict[str, ClusterLog], resume: dict[str, ClusterState]) -> None:
    """Each run with its log's continuity (`continuity`): holes and late records."""
    segments = segment_ranges(kraft)
    unchecked = []
    for c, run in runs.items():
        kept = resume.get(c)
        offsets = offset_facts(logs[c],
                               None if segments is None else segments.get(c, []),
                               None if kept is None else kept.through,
                               getattr(kept, "missing", ()))  # a state saved before holes
        with_offset_facts(run, offsets)
        if not offsets.checked:
            unchecked.append(c)
    if unchecked:
        log.warning(f"offsets not checked for missing records of {', '.join(unchecked)}: "
                    "no metadata_summary beside the records (the NoOps jobs.ingest did not "
                    "write leave holes); give the ingest's output folder as --events")


def summarise(runs: dict[str, ClusterRun], out: str, run_id: str, started: datetime,
              t0: float, folded: float, snapshots: dict[str, str | None]) -> None:
    """The run's `run_summary` (its tables written), every table's partition, the
    printed summary."""
    seconds = {"replay": folded - t0, "write": time.perf_counter() - folded}
    seconds["total"] = time.perf_counter() - t0
    counts = {c: r.counts for c, r in runs.items()}
    rollups = {c: r.rollup for c, r in runs.items()}
    facts = {c: r.facts for c, r in runs.items()}
    summary = summary_batches(counts, rollups, 1, run_id, 1, started, datetime.now(UTC),
                              seconds, facts)
    write_arrow(summary, out, "run_summary", run_id)
    ensure_run_partitions(out, run_id)
    print_kraft_summary(out, run_id, runs, snapshots)


def print_kraft_summary(out: str, run_id: str, runs: dict[str, ClusterRun],
                        snapshots: dict[str, str | None]) -> None:
    """`jobs.engine.run_summary.print_summary`'s lines, with the rows read reconciled as a
    KRaft run counts them (applied + skipped)."""
    print(f"\n== replay run {run_id} (KRaft metadata log) ==")
    for cluster, r in runs.items():
        c = r.counts
        skipped = ", ".join(f"{k.removeprefix(SKIPPED)} {v}" for k, v in sorted(r.skipped.items()))
        print(f"cluster {cluster}: rows read {c.rows_read} = applied {c.rows_applied} + "
              f"skipped {sum(r.skipped.values())} ({skipped or 'none'}) + late {c.rows_late}")
        print(f"  replayed from: {snapshots.get(cluster) or 'the log start (no snapshot)'}, "
              f"offsets {r.facts.seq_min}-{r.facts.seq_max}")
        for line in continuity_lines(r.facts):
            print(line.replace("seq", "offset"))
        for gap in (f for f in r.outputs.findings if f.kind == OFFSET_GAP):
            print(f"    {gap.detail}")
        states = ", ".join(f"{k} {v}" for k, v in sorted(c.partitions_by_state.items()))
        print(f"  partitions by state: {states or 'none'}")
        offline = c.offline_partitions()
        at_end = c.partitions_by_state.get("OfflinePartition", 0)
        print(f"  offline partitions at the end: {at_end}"
              + (f" ({', '.join(f'{t}-{p}' for t, p in offline)})" if offline else ""))
        print_rollup(r.rollup)
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(c.findings_by_kind.items())
                          if not k.startswith(SKIPPED))
        print(f"  findings by kind: {kinds or 'none'}")
    print(f"tables written under {out}/<table>/run_id={run_id}\n", flush=True)


def write_tables(runs: dict[str, ClusterRun], out: str, run_id: str,
                 part: str | None = None) -> None:
    """The runs' tables, this run's partitions replaced (`part`: one task's files of them,
    `jobs.store.tables.write_partition`)."""
    for table in FOLD_TABLES:
        batches = []
        for cluster, r in runs.items():
            rows = getattr(r.outputs, table)
            r.counts.rows_written[table] = len(rows)
            batches.append(rows_to_record_batch(table, cluster, run_id, rows))
        write_arrow(batches, out, table, run_id, part)
    for r in runs.values():
        r.counts.rows_written["incidents"] = len(r.incidents)
        r.counts.rows_written["metadata_writes"] = len(r.writes)
    write_arrow(incident_batches({c: r.incidents for c, r in runs.items()
                                         if r.incidents}, run_id), out, "incidents", run_id,
                part)
    write_arrow(change_batches({c: r.changes for c, r in runs.items()}, run_id),
                out, "changes", run_id, part)
    write_metadata_writes(runs, out, run_id, part)


def write_metadata_writes(runs: dict[str, ClusterRun], out: str, run_id: str,
                          part: str | None = None) -> int:
    """`metadata_writes`, a KRaft run's own table (`schemas.tables.KRAFT_TABLES`)."""
    return write_metadata_rows({c: r.writes for c, r in runs.items()}, out, run_id, part)


def write_metadata_rows(writes: dict[str, list[MetadataWriteRow]], out: str, run_id: str,
                        part: str | None = None) -> int:
    """`metadata_writes` of each cluster's rows."""
    body = file_schema("metadata_writes")
    batches = []
    for cluster, rows_of in writes.items():
        rows = rows_batch(pa.schema(list(body)[1:]), rows_of)
        batches.append(rows.add_column(0, body[0], pa.repeat(cluster, len(rows_of))
                                       .cast(pa.string())))
    data = pa.Table.from_batches(batches, schema=body) if batches else None
    return write_partition(out, "metadata_writes", run_id, data, part=part)
