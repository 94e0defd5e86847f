"""Checks on what the run read and what the cluster went through during it, from the
run's `run_summary` rows:

* `no_new_events` (`[audit] no_new_events_severity`, default warning): the run read no row
  at all, and the last run of the cluster that read any finished `no_new_events_age` or
  more before this one (default 0: every run that read nothing). A stopped exporter is the
  likeliest nightly failure, and it looks like a quiet night: the replay has nothing to
  judge, so the verdict over the cluster's health is stale. Such a run does not refresh
  `kafka_replay_last_success_timestamp_seconds` either (`jobs/audit/publish.py`), so the
  staleness alert fires.
* `offline_during_run` (warning): partitions were offline for more than
  `max_offline_partition_seconds` (default 0) partition-seconds within the run's period,
  even if every one of them was back by its end (`unavailable_partition` judges the end).
"""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from jobs.audit.extract import AuditInputs
from jobs.audit.options import AuditOptions
from jobs.audit.rows import check_frame, empty_checks
from jobs.store.tables import read_table_or_empty
from schemas.audit import WARNING
from schemas.event_types import DEFAULT_CLUSTER

NO_NEW_EVENTS = "no_new_events"
OFFLINE_DURING_RUN = "offline_during_run"


def _last_reading_run(spark: SparkSession, tables_dir: str, cluster: str,
                      before: datetime | None) -> tuple[str, datetime] | None:
    """(run id, finished_at) of the latest run that read rows of `cluster` (of any cluster
    for the default one: a run that read nothing writes its row under the default name)
    and finished before `before`."""
    rows = read_table_or_empty(spark, tables_dir, "run_summary").where(F.col("rows_read") > 0)
    if cluster != DEFAULT_CLUSTER:
        rows = rows.where(F.col("cluster") == cluster)
    if before is not None:
        rows = rows.where(F.col("finished_at") < F.lit(before))
    last = rows.orderBy(F.col("finished_at").desc()).select("run_id", "finished_at").first()
    return None if last is None else (str(last["run_id"]), last["finished_at"])


def no_new_events(spark: SparkSession, tables_dir: str, inputs: AuditInputs,
                  options: AuditOptions) -> DataFrame:
    """The clusters whose run read no row, quiet for at least `no_new_events_age`."""
    summary: dict[str, Row | None] = {r["cluster"]: r for r in inputs.summary.collect()}
    if options.cluster is not None and options.cluster not in summary:
        # A run that read nothing has only the default cluster's row.
        summary = {options.cluster: next(iter(summary.values()), None)}
    found = []
    for cluster, row in sorted(summary.items()):
        if row is not None and (row["rows_read"] or 0) > 0:
            continue
        finished = None if row is None else row["finished_at"]
        last = _last_reading_run(spark, tables_dir, cluster, finished)
        if last is not None and finished is not None:
            quiet = (finished - last[1]).total_seconds()
            if quiet < options.no_new_events_age:
                continue
            since = f"the last run that read any was {last[0]}, {quiet:.0f} s before"
        else:
            since = "no earlier run of these tables read any"
        found.append((cluster, f"the run read no new event ({since}): a stopped exporter or "
                      "an empty delivery looks like a quiet night; the checks judge a state "
                      "that may be stale", finished))
    if not found:
        return empty_checks(spark)
    df = spark.createDataFrame(found, "cluster string, detail string, since timestamp")
    return check_frame(df, NO_NEW_EVENTS, options.no_new_events_severity, F.col("detail"),
                       since_ts=F.col("since"))


def offline_during_run(inputs: AuditInputs, options: AuditOptions) -> DataFrame:
    """WARNING: partition-seconds offline within the run's period over the threshold."""
    limit = float(options.max_offline_partition_seconds)
    rows = inputs.summary.where(F.coalesce(F.col("offline_partition_seconds"), F.lit(0.0))
                                > limit)
    detail = F.format_string(
        "%.1f partition-second(s) offline during the run (> max_offline_partition_seconds "
        f"{limit:g}), between %s and %s, whatever the state at its end; the post-mortem "
        "names the incidents", F.col("offline_partition_seconds"),
        # A first run's period starts with the log (no earlier run's end to start from).
        F.coalesce(F.col("period_start").cast("string"), F.lit("the start of the log")),
        F.col("period_end").cast("string"))
    return check_frame(rows, OFFLINE_DURING_RUN, WARNING, detail,
                       since_ts=F.col("period_start"))


def freshness_checks(spark: SparkSession, tables_dir: str, inputs: AuditInputs,
                     options: AuditOptions) -> list[DataFrame]:
    return [no_new_events(spark, tables_dir, inputs, options),
            offline_during_run(inputs, options)]
