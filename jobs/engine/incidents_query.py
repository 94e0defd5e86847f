"""The `incidents` roll-up of a large run on the executors: the run's `offline` and
`under_min_isr` windows (with those the earlier runs carried) grouped by (cluster,
incident), each group rolled up by the core (`statemachine.incidents.of_run`) in a Python
worker. The driver receives one row per incident: the incident's row when the run lists it,
and its windows when it is still open (what the next run's carry holds), never the windows
of the incidents that closed.

An incident is a function of its windows alone (`statemachine.incidents.incidents` rolls
each incident id up on its own, its sums in integer microseconds), so a group per incident
gives the rows one call per cluster gives. The unclean elections (a few findings) and each
cluster's latest event time travel with the function.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.store.layout import partition_path
from statemachine.incidents import Election, latest_windows, of_run
from statemachine.model import INCIDENT_KINDS
from statemachine.rows import IncidentRow, PartitionWindowRow

WINDOW_COLUMNS = list(PartitionWindowRow._fields)
TIME_COLUMNS = ("start_ts", "end_ts")
RESULT_SCHEMA = "cluster string, incident long, payload binary"
# Per incident: its row if the run lists it, and its windows if it is still open.
Result = tuple[IncidentRow | None, list[PartitionWindowRow]]


def _run_windows(spark: SparkSession, out_dir: str, run_id: str) -> DataFrame:
    """The run's incident windows, times as UTC microseconds, `own` true."""
    found = spark.read.parquet(partition_path(out_dir, "partition_windows", run_id))
    return found.filter(F.col("kind").isin(sorted(INCIDENT_KINDS))).select(
        "cluster", F.lit(True).alias("own"),
        *[F.unix_micros(c).alias(c) if c in TIME_COLUMNS else F.col(c)
          for c in WINDOW_COLUMNS])


def _windows(spark: SparkSession, out_dir: str, run_id: str,
             carried: Sequence[tuple[str, PartitionWindowRow]]) -> DataFrame:
    """The run's windows and the carried ones (`own` false), keyed by incident."""
    mine = _run_windows(spark, out_dir, run_id)
    if carried:
        rows = [(c, False, *w) for c, w in carried]
        mine = mine.unionByName(spark.createDataFrame(rows, mine.schema))
    # `statemachine.incidents.incident_id`: a row from before the column names its start.
    return mine.withColumn("incident", F.coalesce(F.col("incident_id"), F.col("start_seq")))


def roll_up_group(elections: Mapping[str, list[Election]], as_of: Mapping[str, int | None]
                  ) -> Callable[[pa.Table], pa.Table]:
    """The function each (cluster, incident) group runs: the core's roll-up of its windows
    (a cluster without a period in `as_of` lists none), and its windows if still open."""
    def run(table: pa.Table) -> pa.Table:
        rows = table.to_pylist()
        cluster, incident = rows[0]["cluster"], rows[0]["incident"]
        windows = [PartitionWindowRow(*(r[c] for c in WINDOW_COLUMNS)) for r in rows]
        listed: IncidentRow | None = None
        if cluster in as_of:
            own = [w for w, r in zip(windows, rows, strict=True) if r["own"]]
            found = of_run(windows, own, elections.get(cluster, []), as_of[cluster])
            listed = found[0] if found else None
        latest = latest_windows(windows)
        still_open = latest if any(w.end_seq is None for w in latest) else []
        result: Result = (listed, still_open)
        return pa.table({"cluster": [cluster], "incident": [incident],
                         "payload": [pickle.dumps(result)]},
                        schema=pa.schema([("cluster", pa.string()), ("incident", pa.int64()),
                                          ("payload", pa.binary())]))
    return run


def incidents_on_executors(spark: SparkSession, out_dir: str, run_id: str,
                           carried: Sequence[tuple[str, PartitionWindowRow]],
                           elections: Sequence[tuple[str, Election]],
                           as_of: Mapping[str, int | None]
                           ) -> tuple[dict[str, list[IncidentRow]],
                                      list[tuple[str, PartitionWindowRow]]]:
    """Per cluster of `as_of`, the incidents the run lists (`run_incidents`' rows, in its
    order); and the windows of the incidents still open, of every cluster, in the order
    `rollup_carry.open_incidents` keeps them."""
    by_cluster: dict[str, list[Election]] = {}
    for c, e in elections:
        by_cluster.setdefault(c, []).append(e)
    results = _windows(spark, out_dir, run_id, carried).groupBy("cluster", "incident") \
        .applyInArrow(roll_up_group(by_cluster, dict(as_of)), RESULT_SCHEMA).collect()
    found: dict[str, list[IncidentRow]] = {}
    still_open: list[tuple[str, PartitionWindowRow]] = []
    for row in sorted(results, key=lambda r: (r["cluster"], r["incident"])):
        listed, windows = pickle.loads(row["payload"])
        if listed is not None:
            found.setdefault(row["cluster"], []).append(listed)
        still_open += [(row["cluster"], w) for w in windows]
    still_open.sort(key=lambda cw: (cw[0], cw[1].topic, cw[1].partition, cw[1].kind,
                                    cw[1].start_seq))
    return {c: found[c] for c in sorted(found)}, still_open
