"""The run's `incidents` table: the windows of the incidents the run touched, from
`partition_windows` of every run of the checkpoint (the run's own, and those of the
incidents still open the earlier runs carried: `jobs.engine.rollups`), rolled up by the
core (`statemachine.incidents`) on the driver (a large run's on the executors, one group per
incident: `jobs.engine.incidents_query`).

The windows of one incident come from every replay group whose topics its event touched,
and from every night from the one that opened it to the one that closes it, so the roll-up
runs after the stream over the committed tables. Only the `offline` and `under_min_isr`
rows and the `unclean_leader_election` findings are read (`jobs.store.run_reads`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pyarrow as pa

from jobs.store.run_reads import run_rows
from jobs.store.tables import write_arrow
from schemas.arrow import arrow_schema
from schemas.tables import TABLES
from statemachine.incidents import UNCLEAN_ELECTION, Election, of_run
from statemachine.model import INCIDENT_KINDS
from statemachine.rows import IncidentRow, PartitionWindowRow

WINDOW_COLUMNS = list(PartitionWindowRow._fields)
# (cluster, run_id, window) rows as read.
Read = tuple[str, str, PartitionWindowRow]


Clusters = str | Sequence[str] | None  # one cluster, some, or None: every cluster
# The what-if's clusters are its variants: their windows are read this many at a time, so
# that the driver holds a bounded part of them and the files are scanned once per part, not
# once per variant (a thousand variants, a thousand scans of every file).
CLUSTERS_PER_READ = 64


def _where(cluster: Clusters, **values: list[str]) -> dict[str, list[str]]:
    """A read's filter, of the given clusters' rows (None: every cluster)."""
    if cluster is None:
        return values
    return {**values, "cluster": [cluster] if isinstance(cluster, str) else list(cluster)}


def read_windows(out_dir: str, runs: Iterable[str],
                 cluster: Clusters = None) -> list[Read]:
    """The incident windows of `runs` (of the given clusters)."""
    where = _where(cluster, kind=sorted(INCIDENT_KINDS))
    return [(c, run, PartitionWindowRow(*w))
            for run in runs
            for c, *w in run_rows(out_dir, "partition_windows", run,
                                  ["cluster", *WINDOW_COLUMNS], where)]


def read_elections(out_dir: str, runs: Iterable[str],
                   cluster: Clusters = None) -> list[tuple[str, Election]]:
    """The unclean leader elections of `runs` (of the given clusters), by cluster."""
    columns = ["cluster", "seq", "topic", "partition"]
    found: list[tuple[str, Election]] = []
    for run in runs:
        rows = run_rows(out_dir, "findings", run, columns,
                        _where(cluster, kind=[UNCLEAN_ELECTION]))
        found += [(c, Election(s, t, p)) for c, s, t, p in rows
                  if s is not None and t is not None and p is not None]
    return found


def run_incidents(reads: list[Read], elections: list[tuple[str, Election]], run_id: str,
                  as_of: dict[str, int | None]) -> dict[str, list[IncidentRow]]:
    """Per cluster the run has a period for (`as_of`: its latest event time), the
    incidents it lists (`statemachine.incidents.of_run`)."""
    out: dict[str, list[IncidentRow]] = {}
    windows: dict[str, list[tuple[str, PartitionWindowRow]]] = {}
    for c, r, w in reads:
        windows.setdefault(c, []).append((r, w))
    unclean: dict[str, list[Election]] = {}
    for c, e in elections:
        unclean.setdefault(c, []).append(e)
    for cluster in sorted(as_of):
        mine = windows.get(cluster, [])
        found = of_run([w for _, w in mine], [w for r, w in mine if r == run_id],
                       unclean.get(cluster, []), as_of[cluster])
        if found:
            out[cluster] = found
    return out


def incident_batches(found: dict[str, list[IncidentRow]], run_id: str) -> list[pa.RecordBatch]:
    schema = arrow_schema(TABLES["incidents"])
    rows = [{"cluster": cluster, "run_id": run_id, **i._asdict(),
             "worst_topics": [t._asdict() for t in i.worst_topics],
             "brokers": [b._asdict() for b in i.brokers]}
            for cluster, incidents in found.items() for i in incidents]
    return [pa.RecordBatch.from_pylist(rows, schema=schema)] if rows else []


def write_incidents(out_dir: str, run_id: str, runs: Iterable[str],
                    as_of: dict[str, int | None], per_cluster: bool = False) -> int:
    """Write the run's `incidents` (rolled up over the windows of `runs`, which include
    this one); the number of rows. `per_cluster` reads the windows CLUSTERS_PER_READ
    clusters at a time, so the driver holds only their windows at once (the what-if's
    clusters are its variants: all of them at once would grow with the number of
    variants)."""
    every = sorted({*runs, run_id})
    if not per_cluster:
        found = run_incidents(read_windows(out_dir, every),
                              read_elections(out_dir, every), run_id, as_of)
    else:
        found = {}
        clusters = sorted(as_of)
        for start in range(0, len(clusters), CLUSTERS_PER_READ):
            part = clusters[start:start + CLUSTERS_PER_READ]
            found.update(run_incidents(read_windows(out_dir, every, part),
                                       read_elections(out_dir, every, part),
                                       run_id, {c: as_of[c] for c in part}))
    return write_arrow(incident_batches(found, run_id), out_dir, "incidents", run_id)
