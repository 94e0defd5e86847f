"""The state tables (`partition_states`, `replica_states`) as they stand after a run.

A first run (and a `--rebuild`) writes every partition's state; each later run of the same
checkpoint generation writes only the partitions whose state it changed (a nightly run's
cost then follows its events, not the size of the cluster). The run's `run_summary` rows
name, in `state_runs`, the runs whose rows make up the whole state after it, oldest first,
itself last. The state after run R is then, per partition, the row of the last of R's
`state_runs` that wrote it, and the `replica_states` rows that run wrote for it (all of
the partition's replicas: a replica deleted since has no row there).

    from jobs.store.latest_state import read_state
    read_state(spark, "out/tables", "partition_states", "20261126")  # Spark DataFrame

    from jobs.store.latest_state_arrow import arrow_state  # pyarrow only, no Spark
    arrow_state("out/tables", "replica_states", "20261126")

Both return the rows with `run_id` set to the run asked for, so code written for a run's
own partition reads them unchanged. A run whose summary has no `state_runs` (written
before they existed, or by another tool) is read as holding the whole state itself.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.store.latest_state_arrow import STATE_KEY, chain_of
from jobs.store.tables import read_table_or_empty
from schemas.tables import TABLES

_LATEST, _AT = "_latest_state_run", "_state_run"


def state_runs(spark: SparkSession, out_dir: str, run_id: str) -> list[str]:
    """The runs whose state rows make up the state after `run_id`, oldest first."""
    summary = read_table_or_empty(spark, out_dir, "run_summary")
    rows = summary.where(F.col("run_id") == run_id).select("state_runs").collect()
    return chain_of([r[0] for r in rows], run_id)


def read_state(spark: SparkSession, out_dir: str, table: str, run_id: str) -> DataFrame:
    """`table` (a state table) as it stands after `run_id`, every partition's rows."""
    runs = state_runs(spark, out_dir, run_id)
    if len(runs) == 1:
        return read_table_or_empty(spark, out_dir, table).where(F.col("run_id") == runs[0])
    at = F.array_position(F.array(*[F.lit(r) for r in runs]), F.col("run_id"))
    latest = (read_table_or_empty(spark, out_dir, "partition_states")
              .where(F.col("run_id").isin(runs))
              .groupBy(*STATE_KEY).agg(F.max(at).alias(_LATEST)))
    rows = read_table_or_empty(spark, out_dir, table).where(F.col("run_id").isin(runs))
    return (rows.withColumn(_AT, at).join(latest, STATE_KEY)
            .where(F.col(_AT) == F.col(_LATEST)).withColumn("run_id", F.lit(run_id))
            .select(*TABLES[table].fieldNames()))
