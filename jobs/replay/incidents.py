"""The run's `incidents` table: the windows of the incidents the run touched, read from
`partition_windows` of every run of the checkpoint, rolled up by the core
(`statemachine.incidents`) on the driver.

The windows of one incident come from every replay group whose topics its event touched,
and from every night from the one that opened it to the one that closes it, so the roll-up
runs after the stream over the committed tables. Only the `offline` and `under_min_isr`
rows and the `unclean_leader_election` findings are read: pyarrow on the driver where it
can open `--out` (no Spark job), else Spark.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from pyarrow import fs as pafs
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from jobs.common.paths import arrow_filesystem
from jobs.common.tables import read_table, table_path, write_arrow
from jobs.replay.staging import file_schema
from schemas.arrow import arrow_schema
from schemas.tables import TABLES
from statemachine.incidents import UNCLEAN_ELECTION, Election, of_run
from statemachine.model import INCIDENT_KINDS
from statemachine.rows import IncidentRow, PartitionWindowRow

WINDOW_COLUMNS = list(PartitionWindowRow._fields)
TIME_COLUMNS = ("start_ts", "end_ts")
# (cluster, run_id, window) rows as read.
Read = tuple[str, str, PartitionWindowRow]


def _arrow_rows(out_dir: str, table: str, run_id: str, columns: list[str],
                where: pc.Expression) -> dict[str, list[Any]] | None:
    """`columns` of one run's partition of `table` (timestamps as microseconds), or None
    when pyarrow cannot open `out_dir`."""
    opened = arrow_filesystem(f"{table_path(out_dir, table)}/run_id={run_id}")
    if opened is None:
        return None
    filesystem, partition = opened
    if filesystem.get_file_info(partition).type == pafs.FileType.NotFound:
        return {c: [] for c in columns}
    # INT96 timestamps (Spark's default) read as microseconds: nanoseconds overflow past 2262.
    fmt = ds.ParquetFileFormat(read_options={"coerce_int96_timestamp_unit": "us"})
    found = ds.dataset(partition, schema=file_schema(table), format=fmt,
                       filesystem=filesystem).to_table(columns=columns, filter=where)
    return {c: (pc.cast(found.column(c), pa.int64()) if c in TIME_COLUMNS or c == "ts"
                else found.column(c)).to_pylist() for c in columns}


def _of_cluster(cluster: str | None) -> tuple[pc.Expression, Column]:
    """The filter of one cluster's rows (None: every cluster), for pyarrow and Spark."""
    if cluster is None:
        return pc.scalar(True), F.lit(True)
    return pc.field("cluster") == cluster, F.col("cluster") == cluster


def read_windows(spark: SparkSession, out_dir: str, runs: Iterable[str],
                 cluster: str | None = None) -> list[Read]:
    """The incident windows of `runs` (of one cluster, when given)."""
    kinds = sorted(INCIDENT_KINDS)
    in_arrow, in_spark = _of_cluster(cluster)
    rows: list[Read] = []
    for run in runs:
        got = _arrow_rows(out_dir, "partition_windows", run, ["cluster", *WINDOW_COLUMNS],
                          pc.field("kind").isin(kinds) & in_arrow)
        if got is None:
            df = (read_table(spark, out_dir, "partition_windows")
                  .where((F.col("run_id") == run) & F.col("kind").isin(kinds) & in_spark)
                  .select("cluster", *[F.unix_micros(c).alias(c) if c in TIME_COLUMNS
                                       else F.col(c) for c in WINDOW_COLUMNS]))
            rows += [(r[0], run, PartitionWindowRow(*r[1:])) for r in df.collect()]
            continue
        columns = [got[c] for c in WINDOW_COLUMNS]
        rows += [(c, run, PartitionWindowRow(*w))
                 for c, *w in zip(got["cluster"], *columns, strict=True)]
    return rows


def read_elections(spark: SparkSession, out_dir: str, runs: Iterable[str],
                   cluster: str | None = None) -> list[tuple[str, Election]]:
    """The unclean leader elections of `runs` (of one cluster, when given), by cluster."""
    columns = ["cluster", "seq", "topic", "partition"]
    in_arrow, in_spark = _of_cluster(cluster)
    found: list[tuple[str, Election]] = []
    for run in runs:
        got = _arrow_rows(out_dir, "findings", run, columns,
                          (pc.field("kind") == UNCLEAN_ELECTION) & in_arrow)
        if got is None:
            df = (read_table(spark, out_dir, "findings")
                  .where((F.col("run_id") == run) & (F.col("kind") == UNCLEAN_ELECTION)
                         & in_spark)
                  .select(*columns))
            values = [list(r) for r in df.collect()]
        else:
            values = [list(v) for v in zip(*(got[c] for c in columns), strict=True)]
        found += [(c, Election(s, t, p)) for c, s, t, p in values
                  if s is not None and t is not None and p is not None]
    return found


def run_incidents(reads: list[Read], elections: list[tuple[str, Election]], run_id: str,
                  as_of: dict[str, int | None]) -> dict[str, list[IncidentRow]]:
    """Per cluster the run has a period for (`as_of`: its latest event time), the
    incidents it lists (`statemachine.incidents.of_run`)."""
    out: dict[str, list[IncidentRow]] = {}
    for cluster in sorted(as_of):
        mine = [w for c, _, w in reads if c == cluster]
        run_rows = [w for c, r, w in reads if c == cluster and r == run_id]
        found = of_run(mine, run_rows, [e for c, e in elections if c == cluster],
                       as_of[cluster])
        if found:
            out[cluster] = found
    return out


def incident_batches(found: dict[str, list[IncidentRow]], run_id: str) -> list[pa.RecordBatch]:
    schema = arrow_schema(TABLES["incidents"])
    rows = [{"cluster": cluster, "run_id": run_id, **i._asdict(),
             "worst_topics": [t._asdict() for t in i.worst_topics]}
            for cluster, incidents in found.items() for i in incidents]
    return [pa.RecordBatch.from_pylist(rows, schema=schema)] if rows else []


def write_incidents(spark: SparkSession, out_dir: str, run_id: str, runs: Iterable[str],
                    as_of: dict[str, int | None], per_cluster: bool = False) -> int:
    """Write the run's `incidents` (rolled up over the windows of `runs`, which include
    this one); the number of rows. `per_cluster` reads the windows one cluster at a time,
    so the driver holds one cluster's windows at once (the what-if's clusters are its
    variants: all of them at once would grow with the number of variants)."""
    every = sorted({*runs, run_id})
    if not per_cluster:
        found = run_incidents(read_windows(spark, out_dir, every),
                              read_elections(spark, out_dir, every), run_id, as_of)
    else:
        found = {}
        for cluster in sorted(as_of):
            found.update(run_incidents(read_windows(spark, out_dir, every, cluster),
                                       read_elections(spark, out_dir, every, cluster),
                                       run_id, {cluster: as_of[cluster]}))
    return write_arrow(spark, incident_batches(found, run_id), out_dir, "incidents", run_id)
