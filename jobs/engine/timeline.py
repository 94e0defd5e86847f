"""The cluster timelines, built on the driver from the cluster-scope rows of the whole log
(those of the files earlier runs scanned come from the checkpoint: `jobs.engine.log_history`).

Cluster-scope rows (broker startup/failure, controlled shutdown, controller failover) are a
tiny fraction of a log, and every partition needs them, so they are collected once, folded
per cluster by the core (`statemachine.cluster.build_timeline`) and shipped to the executors
inside the replay function's closure. The core applies the steps itself; broker events are
never copied to partitions.

The scan reads few columns: the cluster of every row (the clusters whose buckets each run
wakes), the full rows of the valid cluster events, and the seq, time and type of the valid
deletion-activity rows (`statemachine.cluster.DELETION_ACTIVITY`: every group walks its
queued topics at them, as Kafka's `resumeDeletions` walks every queued topic).

Where pyarrow can open the files (`jobs.store.filesystem.arrow_filesystem`), they are read on the
driver with `pyarrow.dataset` (`jobs.engine.timeline_scan`), batch by batch: the same files the
DataFrame reads, no Spark job over the log. Only the few timeline rows are kept and go to
Spark, as a small DataFrame, so that their validity is judged by the one definition of the
rules (`jobs.engine.keying.reason_column`): a row the replay quarantines never enters a
timeline. Elsewhere two Spark jobs scan the log.

The log checks (seq range, gaps, late and conflicting seqs, time running backwards, the
requests) are Spark aggregations over the executors (`jobs.engine.log_checks_query`): the
driver receives one summary per block of seqs, never the rows. A read of at most
`jobs.engine.sizing.SMALL_LOG_ROWS` rows (a night of a few thousand) is checked on the driver
by the pure definition (`jobs.engine.log_checks`) from the rows the scan already reads: the
query's fixed cost (seconds of planning and code generation) is most of such a run's check.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jobs.engine import log_checks, log_checks_query, sizing
from jobs.engine.group_rows import full_key
from jobs.engine.keying import cluster_sql, reason_sql
from jobs.engine.log_checks import SeqFacts
from jobs.engine.plausibility import Plausibility
from jobs.engine.sql_text import col, in_list
from jobs.engine.timeline_scan import read_timeline_rows
from schemas import event_types as ET
from schemas.events import EVENT_SCHEMA
from schemas.state import CLUSTER_BUCKET
from statemachine.cluster import (
    DELETION_ACTIVITY,
    TIMELINE_EVENTS,
    ClusterTimeline,
    broker_intervals,
    build_timeline,
    controller_rows,
)
from statemachine.events import Event
from statemachine.profiles import KafkaProfile

EVENT_FIELDS = Event._fields


@dataclass(frozen=True)
class LogScan:
    """What the driver needs from the whole log: the groups to wake per cluster (every
    bucket and the cluster-scope group), and the distinct valid cluster-scope events per
    cluster with its deletion activity (ts as microseconds)."""

    buckets: dict[str, list[int]]
    cluster_events: dict[str, list[Event]]
    # What the scanned rows say about the log (seq range, gaps, late and conflicting seqs),
    # per cluster; empty for the files a history already knew.
    facts: dict[str, SeqFacts] = field(default_factory=dict)


@dataclass(frozen=True)
class ScanContext:
    """What a scan needs to judge the rows: the plausibility rules of the run, and per
    cluster the highest seq the committed runs saw and applied."""

    rules: Plausibility | None = None
    seen_through: Mapping[str, int] = field(default_factory=dict)
    applied_through: Mapping[str, int] = field(default_factory=dict)

    def facts_of(self, events: DataFrame) -> dict[str, SeqFacts]:
        """The log's facts of a plain read of event files (one or two Spark jobs)."""
        rules = self.rules or Plausibility()
        return log_checks_query.log_facts(
            events, self.seen_through, self.applied_through, rules.ts_backwards_tolerance_us,
            (rules.ts_min_us, rules.ts_max_us))

    def facts_of_rows(self, narrowed: pa.Table) -> dict[str, SeqFacts]:
        """The same facts of a small read's narrowed rows (`log_checks.narrow`), on the
        driver."""
        rules = self.rules or Plausibility()
        return log_checks.log_facts(
            narrowed, dict(self.seen_through), dict(self.applied_through),
            rules.ts_backwards_tolerance_us, (rules.ts_min_us, rules.ts_max_us))

    def judged(self, facts: Mapping[str, SeqFacts]) -> Plausibility | None:
        """The rules with this scan's conflicting seqs (what the stream quarantines)."""
        return self.rules.with_conflicts(facts) if self.rules is not None else None


def event_of(values: Iterable[Any]) -> Event:
    """An Event from a Spark row or a JSON list of its fields (lists become tuples; a list
    saved before the contract's last columns existed leaves them null)."""
    given: list[Any] = [tuple(v) if isinstance(v, list) else v for v in values]
    return Event._make(given + [None] * (len(Event._fields) - len(given)))


def sort_events(events: Iterable[Event]) -> list[Event]:
    """A total order over the row contents, so the timeline does not depend on read order."""
    return sorted(events, key=full_key)


def scan_log(events: DataFrame, buckets: int, context: ScanContext | None = None) -> LogScan:
    """The scan of `events`, a plain read of event files with `EVENT_SCHEMA` (no filter or
    projection: the pyarrow reader reads its `inputFiles()`). Every bucket of a cluster is
    woken, not only the occupied ones: an empty bucket costs one trivial group call, and
    knowing which are occupied would cost hashing every row. Exact duplicates of cluster
    rows are dropped here (a repeated ControllerFailover would bump the epoch twice); the
    replay counts them. Rows the context's rules quarantine never enter a timeline."""
    context = context or ScanContext()
    # Read when the scan runs, not at import, so that a test can send a small log to Spark.
    read = read_timeline_rows(events.inputFiles(), sizing.SMALL_LOG_ROWS)
    if read is None:  # a scheme pyarrow has no client for, or a file it cannot read as Spark
        return spark_scan(events, buckets, context)
    facts = context.facts_of(events) if read.narrow is None \
        else context.facts_of_rows(read.narrow)
    by_cluster: dict[str, set[Event]] = {c: set() for c in read.clusters}
    if read.rows.num_rows:
        # One chunk: PySpark 4.3's createDataFrame drops the rows that follow an empty
        # chunk of an Arrow table (one chunk per file read: a log of many small files
        # would lose its cluster events).
        rows = events.sparkSession.createDataFrame(read.rows.combine_chunks(), EVENT_SCHEMA)
        for cluster, event in valid_timeline_events(rows, context.judged(facts)):
            by_cluster[cluster].add(event)
    return log_scan(read.clusters, by_cluster, buckets, facts)


def valid_timeline_events(rows: DataFrame, rules: Plausibility | None = None
                          ) -> list[tuple[str, Event]]:
    """(cluster, event) of the valid rows of a small DataFrame of timeline rows (one Spark
    job, no shuffle: the rows are few): a cluster event whole, a deletion activity row as
    in `deletion_activity`."""
    valid = _normalised(rows).where(_valid_of(TIMELINE_EVENTS, rules))
    out = []
    for r in valid.selectExpr(*_event_fields()).collect():
        if r["event_type"] in ET.CLUSTER_EVENTS:
            out.append((r["cluster"], event_of(r[f] for f in EVENT_FIELDS)))
        else:
            out.append((r["cluster"], Event(r["seq"], r["ts"], r["event_type"],
                                            r["broker_id"], r["topic"])))
    return out


def spark_scan(events: DataFrame, buckets: int, context: ScanContext | None = None
               ) -> LogScan:
    """`scan_log` with Spark (a file system pyarrow cannot open): two narrow passes over
    the log, and the log checks' query."""
    normalised = _normalised(events)
    context = context or ScanContext()
    facts = context.facts_of(events)
    rules = context.judged(facts)
    clusters = sorted(r["cluster"] for r in normalised.select("cluster").distinct().collect())
    by_cluster: dict[str, set[Event]] = {c: set() for c in clusters}
    cluster_rows = normalised.where(_valid_of(ET.CLUSTER_EVENTS, rules))
    for r in cluster_rows.selectExpr(*_event_fields()).distinct().collect():
        by_cluster[r["cluster"]].add(event_of(r[f] for f in EVENT_FIELDS))
    for cluster, event in deletion_activity(normalised, rules):
        by_cluster[cluster].add(event)
    return log_scan(clusters, by_cluster, buckets, facts)


# The Spark expressions here are SQL text (`jobs.engine.sql_text`): one py4j round trip
# each, where the Column API made one per column, literal and operator.
def _normalised(events: DataFrame) -> DataFrame:
    return events.withColumn(
        "cluster", F.expr(cluster_sql()))


def _valid_of(event_types: Iterable[str], rules: Plausibility | None) -> Column:
    """The valid rows of those types. The type test comes first, so that the reason is
    evaluated only for the few rows of those types (AND short-cuts)."""
    return F.expr(f"{in_list(col('event_type'), sorted(event_types))} "
                  f"AND ({reason_sql(rules)}) IS NULL")


def _event_fields() -> list[str]:
    """`cluster` and `EVENT_FIELDS`, `ts` as microseconds."""
    return [col("cluster"), *("unix_micros(`ts`) AS `ts`" if f == "ts" else col(f)
                              for f in EVENT_FIELDS)]


def deletion_activity(normalised: DataFrame, rules: Plausibility | None = None
                      ) -> list[tuple[str, Event]]:
    """(cluster, event) for each distinct (cluster, seq, ts, event_type, broker_id, topic)
    of the valid deletion-activity rows. The timeline needs only seq, ts and type; broker
    and topic stay so that a what-if that drops a topic's or a broker's events drops its
    activity too. The StopReplica responses of one broker for one topic, a row per
    partition, shrink to one event."""
    rows = normalised.where(_valid_of(DELETION_ACTIVITY, rules)).selectExpr(
        "cluster", "seq", "unix_micros(ts) AS ts", "event_type", "broker_id",
        "topic").distinct()
    return [(r["cluster"], Event(r["seq"], r["ts"], r["event_type"], r["broker_id"],
                                 r["topic"])) for r in rows.collect()]


def log_scan(clusters: Iterable[str], events: Mapping[str, Iterable[Event]],
             buckets: int, facts: Mapping[str, SeqFacts] | None = None) -> LogScan:
    """The scan of a log with these clusters and cluster-scope events (any order)."""
    every_bucket = [CLUSTER_BUCKET, *range(buckets)]
    ordered = sorted(clusters)
    return LogScan({c: every_bucket for c in ordered},
                   {c: sort_events(events.get(c, ())) for c in ordered}, dict(facts or {}))


def build_timelines(scan: LogScan, profile: KafkaProfile | None = None
                    ) -> dict[str, ClusterTimeline]:
    """One timeline per cluster of the log (a cluster without cluster events gets an empty
    one: no broker is live until a ControllerFailover or BrokerStartup says so), under the
    release `profile` replayed (default 3.7's)."""
    return {c: build_timeline(scan.cluster_events.get(c, []), profile=profile)
            for c in scan.buckets}


def timeline_rows(timeline: ClusterTimeline) -> dict[str, list[tuple[Any, ...]]]:
    return {
        "broker_timeline": list(broker_intervals(timeline)),
        "controller_timeline": list(controller_rows(timeline)),
    }


def horizon(scan: LogScan, cluster: str) -> int | None:
    """How far this run's groups replay the cluster's timeline: its last cluster event, a
    step or one the timeline rejected (whose finding must still be reported)."""
    events = scan.cluster_events.get(cluster, [])
    return max(e.seq for e in events) if events else None
