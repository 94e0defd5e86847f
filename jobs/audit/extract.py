"""Extract: the replay's tables of one run, read lazily as Spark DataFrames, and the few
facts every check shares (where the run ends, which brokers are live at its end).

Every table is read with its own schema (`jobs.store.tables.read_table`, so `run_id`
stays a string) and filtered to the run (partition pruning: only `run_id=<id>/` is read).
`update_metadata_requests` is also kept whole (`update_metadata_history`): the observed
comparison looks for the state at an instant that may lie in an earlier run.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.common.exitcodes import BadInput
from jobs.store.filesystem import path_exists
from jobs.store.latest_state import read_state
from jobs.store.layout import partition_path, table_path
from jobs.store.tables import read_table, read_table_or_empty
from schemas.tables import STATE_TABLES

# The tables the audit reads; each must have the run's partition.
AUDITED_TABLES = (
    "partition_states", "replica_states", "state_changes", "leader_and_isr_requests",
    "update_metadata_requests", "stop_replica_requests", "findings", "partition_windows",
    "broker_timeline", "controller_timeline",
)
# Broker statuses under which a broker serves (`KafkaController.liveOrShuttingDownBrokerIds`).
SERVING = ("live", "shutting_down")
LATE_EVENT = "late_event"


class AuditInputError(BadInput):
    """Input the audit cannot read: a missing directory or run, an unreadable snapshot.
    The message is one line; the job exits 2."""


class RunBounds(NamedTuple):
    """Where one cluster's run begins and ends, in event order and time."""

    cluster: str
    first_seq: int | None  # the first event this run applied (None: it applied none)
    last_seq: int
    last_ts: datetime


class AuditInputs(NamedTuple):
    """This run's rows of every table the checks use (lazy DataFrames)."""

    run_id: str
    partitions: DataFrame
    replicas: DataFrame
    state_changes: DataFrame
    leader_and_isr: DataFrame
    update_metadata: DataFrame
    update_metadata_history: DataFrame  # every run's rows, for the observed comparison
    stop_replica: DataFrame
    findings: DataFrame
    windows: DataFrame
    brokers: DataFrame
    controllers: DataFrame
    bounds: dict[str, RunBounds]
    summary: DataFrame  # the run's run_summary rows: the replay's account of the log
    data_loss: DataFrame  # the run's data_loss rows (empty for a run written before it)
    # A KRaft replay's output (it has `metadata_writes`): its seqs are metadata-log offsets.
    kraft: bool = False

    @property
    def clusters(self) -> list[str]:
        return sorted(self.bounds)


def check_run_exists(spark: SparkSession, tables_dir: str, run_id: str) -> None:
    """Refuse a tables directory that does not exist or has no such run."""
    if not path_exists(tables_dir):
        raise AuditInputError(f"tables directory {tables_dir} does not exist")
    missing = [t for t in AUDITED_TABLES
               if not path_exists(partition_path(tables_dir, t, run_id))]
    if len(missing) == len(AUDITED_TABLES):
        raise AuditInputError(f"run id {run_id} not found under {tables_dir} "
                              f"(no {AUDITED_TABLES[0]}/run_id={run_id})")
    if missing:
        raise AuditInputError(f"run {run_id} under {tables_dir} is incomplete: no "
                              f"run_id={run_id} partition in {', '.join(missing)}")


def read_inputs(spark: SparkSession, tables_dir: str, run_id: str,
                cluster: str | None = None) -> AuditInputs:
    """The run's tables (optionally one cluster's rows only) and its bounds."""
    check_run_exists(spark, tables_dir, run_id)

    def whole(table: str) -> DataFrame:
        df = read_table(spark, tables_dir, table)
        return df if cluster is None else df.where(F.col("cluster") == cluster)

    def of_run(table: str) -> DataFrame:
        return whole(table).where(F.col("run_id") == run_id)

    def state(table: str) -> DataFrame:  # the whole state after the run
        df = read_state(spark, tables_dir, table, run_id)
        return df if cluster is None else df.where(F.col("cluster") == cluster)

    frames = {t: state(t) if t in STATE_TABLES else of_run(t) for t in AUDITED_TABLES}
    bounds = run_bounds(frames)
    return AuditInputs(
        run_id=run_id,
        partitions=frames["partition_states"], replicas=frames["replica_states"],
        state_changes=frames["state_changes"],
        leader_and_isr=frames["leader_and_isr_requests"],
        update_metadata=frames["update_metadata_requests"],
        update_metadata_history=whole("update_metadata_requests"),
        stop_replica=frames["stop_replica_requests"], findings=frames["findings"],
        windows=frames["partition_windows"], brokers=frames["broker_timeline"],
        controllers=frames["controller_timeline"], bounds=bounds,
        summary=read_table_or_empty(spark, tables_dir, "run_summary").where(
            (F.col("run_id") == run_id)
            & (F.lit(cluster).isNull() | (F.col("cluster") == F.lit(cluster)))),
        data_loss=read_table_or_empty(spark, tables_dir, "data_loss").where(
            (F.col("run_id") == run_id)
            & (F.lit(cluster).isNull() | (F.col("cluster") == F.lit(cluster)))),
        kraft=path_exists(table_path(tables_dir, "metadata_writes")),
    )


def _positions(df: DataFrame, seq: str, ts: str, applied: bool) -> DataFrame:
    """(cluster, seq, ts, applied): event positions a table shows."""
    return df.select("cluster", F.col(seq).alias("seq"), F.col(ts).alias("ts"),
                     F.lit(applied).alias("applied")).where(F.col("seq").isNotNull())


def run_bounds(frames: dict[str, DataFrame]) -> dict[str, RunBounds]:
    """Per cluster: the first event the run applied (the smallest seq of its state changes,
    requests and findings, late events aside) and the last event it knows of (those, the
    ends of its windows and the timelines, which cover the log up to this run). The run's
    events themselves are not in the tables; these are the positions they left."""
    applied = [
        _positions(frames[t], "seq", "ts", True)
        for t in ("state_changes", "leader_and_isr_requests", "update_metadata_requests",
                  "stop_replica_requests")
    ]
    findings = frames["findings"].where(F.col("kind") != LATE_EVENT)
    known = [
        _positions(findings, "seq", "ts", True),
        _positions(frames["partition_windows"], "end_seq", "end_ts", False),
        _positions(frames["partition_windows"], "start_seq", "start_ts", False),
        _positions(frames["broker_timeline"], "seq_from", "ts_from", False),
        _positions(frames["broker_timeline"], "seq_to", "ts_to", False),
        _positions(frames["controller_timeline"], "seq", "ts", False),
    ]
    union = applied[0]
    for df in [*applied[1:], *known]:
        union = union.unionByName(df)
    rows = union.groupBy("cluster").agg(
        F.min(F.when(F.col("applied"), F.col("seq"))).alias("first_seq"),
        F.max("seq").alias("last_seq"),
        F.max("ts").alias("last_ts"),
    ).collect()
    # PySpark hands timestamps over as naive local times; astimezone reads them so.
    return {r["cluster"]: RunBounds(r["cluster"], r["first_seq"], r["last_seq"],
                                    r["last_ts"].astimezone(UTC))
            for r in rows if r["last_ts"] is not None}


def bounds_frame(spark: SparkSession, inputs: AuditInputs) -> DataFrame:
    """The run's bounds as a small DataFrame (cluster, first_seq, last_seq, last_ts)."""
    schema = "cluster string, first_seq long, last_seq long, last_ts timestamp"
    return spark.createDataFrame([tuple(b) for b in inputs.bounds.values()], schema)


def serving_brokers(inputs: AuditInputs, at: datetime | None = None) -> DataFrame:
    """(cluster, live): the brokers that serve (live or shutting down) at the end of the run,
    or at the instant `at`: the broker_timeline intervals open then."""
    intervals = inputs.brokers.where(F.col("status").isin(*SERVING))
    if at is None:
        intervals = intervals.where(F.col("seq_to").isNull())
    else:
        instant = F.lit(at).cast("timestamp")
        intervals = intervals.where(
            (F.col("ts_from").isNull() | (F.col("ts_from") <= instant))
            & (F.col("ts_to").isNull() | (F.col("ts_to") > instant)))
    return intervals.groupBy("cluster").agg(
        F.array_sort(F.collect_set("broker_id")).alias("live"))


def seconds_between(start: Column, end: Column) -> Column:
    """Seconds from `start` to `end` (timestamps), as a double."""
    return (F.unix_micros(end) - F.unix_micros(start)) / F.lit(1_000_000.0)
