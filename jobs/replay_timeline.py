"""The cluster timelines, built on the driver from the cluster-scope rows of the WHOLE log.

Cluster-scope rows (broker startup/failure, controlled shutdown, controller failover) are a
tiny fraction of a log, and every partition needs them, so they are collected once, folded
per cluster by the core (`statemachine.cluster.build_timeline`) and shipped to the executors
inside the replay function's closure. The core applies the steps itself; broker events are
never copied to partitions.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from jobs.replay_validate import valid_cluster_events
from schemas import event_types as ET
from statemachine.cluster import ClusterTimeline, broker_intervals, build_timeline, controller_rows
from statemachine.events import Event

EVENT_FIELDS = Event._fields


def _event(row: Any) -> Event:
    values = []
    for name in EVENT_FIELDS:
        v = row[name]
        if isinstance(v, list):
            v = tuple(v)
        values.append(v)
    return Event(*values)


def _sort_key(e: Event) -> tuple[Any, ...]:
    # A total order over the row contents, so the timeline does not depend on read order.
    return tuple((v is None, v if v is not None else 0) for v in e)


def cluster_events(events: Any) -> dict[str, list[Event]]:
    """Distinct valid cluster-scope events per cluster, in a total order (ts as micros).

    Exact duplicates are dropped here: a repeated ControllerFailover row would otherwise
    bump the controller epoch twice. They are counted as duplicates by the replay."""
    rows = valid_cluster_events(events).select("cluster", *EVENT_FIELDS).collect()
    by_cluster: dict[str, set[Event]] = {}
    for row in rows:
        by_cluster.setdefault(row["cluster"], set()).add(_event(row))
    return {c: sorted(evs, key=_sort_key) for c, evs in sorted(by_cluster.items())}


def clusters_of(events: Any) -> list[str]:
    """Every cluster named anywhere in the log (null is the default cluster)."""
    rows = (
        events.select(F.coalesce(F.col("cluster"), F.lit(ET.DEFAULT_CLUSTER)).alias("c"))
        .distinct()
        .collect()
    )
    return sorted(r["c"] for r in rows)


def build_timelines(events: Any) -> dict[str, ClusterTimeline]:
    """One timeline per cluster of the log; a cluster without cluster events gets an empty
    one (no broker is live until a ControllerFailover or BrokerStartup says so)."""
    per_cluster = cluster_events(events)
    timelines = {c: build_timeline(evs) for c, evs in per_cluster.items()}
    for c in clusters_of(events):
        timelines.setdefault(c, build_timeline([]))
    return dict(sorted(timelines.items()))


def timeline_rows(timeline: ClusterTimeline) -> dict[str, list[Any]]:
    return {
        "broker_timeline": list(broker_intervals(timeline)),
        "controller_timeline": list(controller_rows(timeline)),
    }
