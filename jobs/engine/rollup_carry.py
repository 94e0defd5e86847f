"""What the roll-ups written after the stream (`incidents`, `changes`) need of the runs
before this one, carried from run to run in the checkpoint, so that a night reads its own
rows and the carry, not every run the checkpoint has committed.

* `incidents` (`statemachine.incidents.of_run`) rolls up, for each incident the run
  touched or that is still open, every window of it over every night, and the unclean
  elections on its partitions from its seq on. An incident whose windows have all closed
  is never touched again: a later run replays only later seqs, so no window opens at its
  seq again, and a window is written by a later run only while it is open. So the carry
  holds the windows of the incidents still open (`incident_windows`) and the elections on
  their partitions from their seq on (`elections`).
* `changes` (`jobs.engine.change_digest`): reassignments started, completed and in
  progress, from the `reassigning` windows; a window is written again by every run it
  spans, so the earlier runs' windows that matter are those open at the end of the last
  run (`reassigning`). And each election against the partition's previous write that may
  set its leader: per partition, the last such write of the earlier runs (`leaders`).

Run R writes the carry after it (its own rows over the carry it read) under
`<checkpoint>/rollup/R/`, before its history names R; the next run reads the carry of the
run its history names, a rerun of R the carry R read (`History.rollup_from`). A checkpoint
from before carries has none: the run then reads every committed run's rows once
(`carry_of_runs`, what the roll-ups read every night before) and writes a carry. Once a run
has committed, the older carries are removed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pyarrow import fs as pafs

from jobs.engine.incidents_table import Read, read_elections, read_windows
from jobs.store.filesystem import delete_path, list_names, opened
from jobs.store.layout import CheckpointLayout, join
from jobs.store.run_reads import run_rows, run_table
from statemachine.incidents import Election, incident_id, latest_windows
from statemachine.rows import PartitionWindowRow

# Causes of a partition state write that may change its leader (an `isr_change` never does).
LEADER_CAUSES = ["initialization", "election", "isr_shrink", "reassignment"]
LEADER_KEY = ["cluster", "topic", "partition"]
LEADER_COLUMNS = [*LEADER_KEY, "seq", "write", "leader"]
LEADER_SCHEMA = pa.schema([("cluster", pa.string()), ("topic", pa.string()),
                           ("partition", pa.int32()), ("seq", pa.int64()),
                           ("write", pa.int32()), ("leader", pa.int32())])
WINDOW_SCHEMA = pa.schema([
    ("cluster", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
    ("kind", pa.string()), ("start_seq", pa.int64()), ("start_ts", pa.int64()),
    ("end_seq", pa.int64()), ("end_ts", pa.int64()), ("seconds", pa.float64()),
    ("cause_event", pa.string()), ("cause_broker", pa.int32()), ("end_event", pa.string()),
    ("end_broker", pa.int32()), ("incident_id", pa.int64())])
ELECTION_SCHEMA = pa.schema([("cluster", pa.string()), ("seq", pa.int64()),
                             ("topic", pa.string()), ("partition", pa.int32())])
REASSIGNING_SCHEMA = pa.schema([("cluster", pa.string()), ("topic", pa.string()),
                                ("partition", pa.int32()), ("start_seq", pa.int64()),
                                ("start_ts", pa.int64())])
REASSIGNING_COLUMNS = ["cluster", "topic", "partition", "start_seq", "start_ts", "end_seq",
                       "end_ts"]
# (cluster, topic, partition, start_seq, start_ts) of a reassigning window still open.
OpenReassignment = tuple[str, str, int, int, int | None]


@dataclass
class Carry:
    """The carry after a run (see the module's doc)."""

    windows: list[tuple[str, PartitionWindowRow]] = field(default_factory=list)
    elections: list[tuple[str, Election]] = field(default_factory=list)
    reassigning: list[OpenReassignment] = field(default_factory=list)
    leaders: pa.Table = field(default_factory=LEADER_SCHEMA.empty_table)


def open_incidents(reads: Iterable[tuple[str, PartitionWindowRow]],
                   elections: Iterable[tuple[str, Election]]
                   ) -> tuple[list[tuple[str, PartitionWindowRow]], list[tuple[str, Election]]]:
    """Of these windows and elections (one cluster's or several), those a later run's
    roll-up needs: the windows of the incidents with a window still open (one row per
    window, `latest_windows`), and the elections on their partitions at or after the
    earliest such incident of the partition."""
    by_cluster: dict[str, list[PartitionWindowRow]] = {}
    for cluster, w in reads:
        by_cluster.setdefault(cluster, []).append(w)
    kept: list[tuple[str, PartitionWindowRow]] = []
    since: dict[tuple[str, str, int], int] = {}  # (cluster, topic, partition) -> seq
    for cluster in sorted(by_cluster):
        windows = latest_windows(by_cluster[cluster])
        still_open = {incident_id(w) for w in windows if w.end_seq is None}
        for w in windows:
            iid = incident_id(w)
            if iid in still_open and iid is not None:
                kept.append((cluster, w))
                key = (cluster, w.topic, w.partition)
                since[key] = min(since.get(key, iid), iid)
    chosen = [(c, e) for c, e in elections
              if (c, e.topic, e.partition) in since and e.seq >= since[(c, e.topic, e.partition)]]
    return kept, sorted(set(chosen))


def open_reassignments(rows: Iterable[tuple[str, str, int, int, int | None, int | None]]
                       ) -> list[OpenReassignment]:
    """The reassigning windows not closed by any of `rows` (cluster, topic, partition,
    start_seq, start_ts, end_seq), one per window."""
    rows = list(rows)
    closed = {(c, t, p, s) for c, t, p, s, _, end in rows if end is not None}
    found = {(c, t, p, s): (c, t, p, s, ts) for c, t, p, s, ts, _ in rows
             if (c, t, p, s) not in closed}
    return [found[k] for k in sorted(found)]


def last_leader_writes(tables: Sequence[pa.Table]) -> pa.Table:
    """Per partition, the last write (by seq, then write) among `tables` (LEADER_COLUMNS,
    earlier runs first)."""
    merged = pa.concat_tables([t.select(LEADER_COLUMNS).cast(LEADER_SCHEMA) for t in tables])
    if merged.num_rows == 0:
        return LEADER_SCHEMA.empty_table()
    ordered = merged.sort_by([(c, "ascending") for c in [*LEADER_KEY, "seq", "write"]])
    last = ordered.group_by(LEADER_KEY, use_threads=False).aggregate(
        [(c, "last") for c in ("seq", "write", "leader")])
    return last.rename_columns([n.removesuffix("_last") for n in last.schema.names]) \
        .select(LEADER_COLUMNS).cast(LEADER_SCHEMA).sort_by(
            [(c, "ascending") for c in LEADER_KEY])


def run_leader_writes(out_dir: str, run_id: str) -> pa.Table:
    """The run's partition state writes that may set a leader (LEADER_COLUMNS)."""
    return run_table(out_dir, "partition_state_writes", run_id, LEADER_COLUMNS,
                     {"cause": LEADER_CAUSES})


def run_reassigning(out_dir: str, run_id: str
                    ) -> list[tuple[str, str, int, int, int | None, int | None, int | None]]:
    """The run's `reassigning` windows (REASSIGNING_COLUMNS)."""
    return run_rows(out_dir, "partition_windows", run_id, REASSIGNING_COLUMNS,
                    {"kind": ["reassigning"]})


def carry_after(carry: Carry, out_dir: str, run_id: str, reads: list[Read],
                elections: list[tuple[str, Election]],
                leaders: pa.Table | None = None) -> Carry:
    """The carry after `run_id`: `carry` (before it) with the run's own rows; `reads` and
    `elections` are what the incidents' roll-up read (the carry's and the run's);
    `leaders`: the last leader writes after the run when an executors' query found them
    (`jobs.engine.changes_query`; None: read and merged here)."""
    windows, kept = open_incidents(((c, w) for c, _, w in reads), elections)
    reassigning = open_reassignments(
        [(c, t, p, s, ts, None) for c, t, p, s, ts in carry.reassigning]
        + [(c, t, p, s, ts, end) for c, t, p, s, ts, end, _ in
           run_reassigning(out_dir, run_id)])
    if leaders is None:
        leaders = last_leader_writes([carry.leaders, run_leader_writes(out_dir, run_id)])
    return Carry(windows, kept, reassigning, leaders.cast(LEADER_SCHEMA))


def carry_of_runs(out_dir: str, runs: Sequence[str]) -> Carry:
    """The carry after `runs` (every committed run of a checkpoint from before carries),
    from their tables."""
    reads = read_windows(out_dir, runs)
    windows, elections = open_incidents(((c, w) for c, _, w in reads),
                                        read_elections(out_dir, runs))
    reassigning = open_reassignments(
        (c, t, p, s, ts, end) for run in runs for c, t, p, s, ts, end, _ in
        run_reassigning(out_dir, run))
    leaders = last_leader_writes([LEADER_SCHEMA.empty_table(),
                                  *(run_leader_writes(out_dir, r) for r in runs)])
    return Carry(windows, elections, reassigning, leaders)


# -- the carry's files ---------------------------------------------------------------------

def _write(directory: str, name: str, table: pa.Table) -> None:
    filesystem, inner = opened(join(directory, f"{name}.parquet"))
    pq.write_table(table, inner, filesystem=filesystem)


def _read(directory: str, name: str, schema: pa.Schema) -> pa.Table:
    filesystem, inner = opened(join(directory, f"{name}.parquet"))
    return ds.dataset(inner, schema=schema, format="parquet",
                      filesystem=filesystem).to_table()


def save_carry(checkpoint: str, run_id: str, carry: Carry) -> None:
    """Write the carry after `run_id` (replacing what a killed attempt left)."""
    directory = CheckpointLayout(checkpoint).carry(run_id)
    delete_path(directory)
    filesystem, inner = opened(directory)
    filesystem.create_dir(inner, recursive=True)
    _write(directory, "incident_windows", pa.Table.from_pylist(
        [{"cluster": c, **w._asdict()} for c, w in carry.windows], WINDOW_SCHEMA))
    _write(directory, "elections", pa.Table.from_pylist(
        [{"cluster": c, **e._asdict()} for c, e in carry.elections], ELECTION_SCHEMA))
    _write(directory, "reassigning", pa.Table.from_pylist(
        [dict(zip(REASSIGNING_SCHEMA.names, r, strict=True)) for r in carry.reassigning],
        REASSIGNING_SCHEMA))
    _write(directory, "leaders", carry.leaders)


def load_carry(checkpoint: str, run_id: str) -> Carry | None:
    """The carry `run_id` wrote; None when it has none."""
    directory = CheckpointLayout(checkpoint).carry(run_id)
    filesystem, inner = opened(join(directory, "leaders.parquet"))
    if filesystem.get_file_info(inner).type == pafs.FileType.NotFound:
        return None
    windows = [(r.pop("cluster"), PartitionWindowRow(**r)) for r in
               _read(directory, "incident_windows", WINDOW_SCHEMA).to_pylist()]
    elections = [(r.pop("cluster"), Election(**r)) for r in
                 _read(directory, "elections", ELECTION_SCHEMA).to_pylist()]
    reassigning: list[OpenReassignment] = [
        (r["cluster"], r["topic"], r["partition"], r["start_seq"], r["start_ts"])
        for r in _read(directory, "reassigning", REASSIGNING_SCHEMA).to_pylist()]
    leaders = _read(directory, "leaders", LEADER_SCHEMA)
    return Carry(windows, elections, reassigning, leaders)


def remove_carries(checkpoint: str, keep: str) -> None:
    """Remove every carry but `keep`'s (once its run has committed, no other is read)."""
    root = CheckpointLayout(checkpoint).rollup
    for name in list_names(root):
        if name != keep:
            delete_path(join(root, name))


def leaders_of_topics(carry: Carry, topics: Sequence[str]) -> pa.Table:
    """The carry's last leader writes of the partitions of `topics`."""
    if not topics:
        return LEADER_SCHEMA.empty_table()
    return carry.leaders.filter(pc.is_in(carry.leaders.column("topic"),
                                         pa.array(sorted(topics), pa.string())))
