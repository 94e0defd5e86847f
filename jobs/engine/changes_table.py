"""The run's `changes` table: what changed in the cluster during the run (topics,
reassignments, leaders, configs, brokers, controllers), each change counted and its first
rows listed (`jobs.engine.change_digest`).

It is written after the stream, from this run's committed tables (a small run's read on
the driver, `jobs.store.run_reads`; a large run's creations and leader moves counted on
the executors, `jobs.engine.changes_query`), what the checkpoint's earlier runs left for it
(the `reassigning` windows still open and each partition's last write that may set its
leader: `jobs.engine.rollup_carry`), the requests counted by the log scan and the cluster
timeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession

from jobs.engine import change_digest
from jobs.engine.change_digest import Change
from jobs.engine.changes_query import counted_on_executors
from jobs.engine.leader_moves import COLUMNS, leader_moves
from jobs.engine.log_checks import SeqFacts
from jobs.engine.rollup_carry import (
    LEADER_CAUSES,
    Carry,
    leaders_of_topics,
    run_reassigning,
)
from jobs.store.run_reads import run_row_count, run_rows, run_table
from jobs.store.tables import write_arrow
from schemas.arrow import arrow_schema
from schemas.tables import TABLES
from statemachine.cluster import ClusterTimeline

Rows = dict[str, list[tuple[Any, ...]]]
# Above this many rows in a run's table, the roll-ups read it on the executors (a Spark
# job's fixed cost is a second or two; the driver's memory grows by about 0.5 KB a row).
DRIVER_ROWS = 100_000


def _by_cluster(rows: Iterable[tuple[Any, ...]]) -> Rows:
    out: Rows = {}
    for cluster, *rest in rows:
        out.setdefault(str(cluster), []).append(tuple(rest))
    return out


def _creations(out_dir: str, run_id: str) -> Rows:
    return _by_cluster(run_rows(
        out_dir, "state_changes", run_id, ["cluster", "seq", "ts", "topic", "partition"],
        {"machine": ["partition"], "outcome": ["applied"],
         "from_state": ["NonExistentPartition"], "to_state": ["NewPartition"]}))


def _deletions(out_dir: str, run_id: str) -> Rows:
    return _by_cluster(run_rows(out_dir, "findings", run_id,
                                ["cluster", "seq", "ts", "topic"], {"kind": ["topic_deleted"]}))


def _reassigning(out_dir: str, run_id: str, carry: Carry) -> Rows:
    """The run's `reassigning` windows and those the earlier runs left open (as rows of
    no run: `change_digest.reassignments` only tells the run's own from the others)."""
    earlier = [(c, "", t, p, s, ts, None, None) for c, t, p, s, ts in carry.reassigning]
    return _by_cluster([*earlier, *((c, run_id, *rest)
                                    for c, *rest in run_reassigning(out_dir, run_id))])


def _leader_writes(out_dir: str, run_id: str, carry: Carry) -> pa.Table:
    """The run's elections, and every write that may have set the leader of the topics
    they elected in: the run's own and, per partition, the earlier runs' last
    (`jobs.engine.leader_moves.COLUMNS`, as Arrow columns)."""
    # The elected topics from the topic column alone (one value per topic reaches Python,
    # not one tuple per election).
    elected = run_table(out_dir, "partition_state_writes", run_id, ["topic"],
                        {"cause": ["election"]}).column("topic")
    topics = sorted({str(t) for t in pc.unique(elected).to_pylist()})
    if not topics:
        return pa.table({c: [] for c in COLUMNS})
    mine = run_table(out_dir, "partition_state_writes", run_id,
                     ["cluster", "topic", "partition", "seq", "write", "ts", "leader", "cause"],
                     {"cause": LEADER_CAUSES, "topic": topics})
    before = leaders_of_topics(carry, topics)
    earlier = pa.table({
        **{c: before.column(c) for c in ("cluster", "topic", "partition", "seq", "write")},
        "ts": pa.nulls(before.num_rows, pa.int64()),
        "leader": before.column("leader"),
        "cause": pa.repeat(pa.scalar("", pa.string()), before.num_rows)})
    own = [pa.repeat(pa.scalar(False), before.num_rows),
           pa.repeat(pa.scalar(True), mine.num_rows)]
    both = pa.concat_tables([earlier.cast(mine.schema), mine])
    return both.append_column("own", pa.chunked_array(own, pa.bool_())).select(COLUMNS)


def _counted_on_driver(out_dir: str, run_id: str, carry: Carry) -> dict[str, list[Change]]:
    """Per cluster, its `changes_query.COUNTED` changes, from the run's rows read here."""
    created = _creations(out_dir, run_id)
    moves = leader_moves(_leader_writes(out_dir, run_id, carry))
    return {cluster: [*change_digest.created(created.get(cluster, [])),
                      moves.get(cluster, Change("leader_moved", 0, ()))]
            for cluster in {*created, *moves}}


def on_executors(out_dir: str, run_id: str, driver_rows: int) -> bool:
    """Whether the run wrote more than `driver_rows` partition state writes or state
    changes: its creations and leader moves are then counted by a Spark query, so that the
    driver's memory does not grow with them (a small run's are read here: a Spark job
    costs more than it saves)."""
    return any(run_row_count(out_dir, t, run_id) > driver_rows
               for t in ("state_changes", "partition_state_writes"))


def run_changes(out_dir: str, run_id: str, carry: Carry,
                facts: Mapping[str, SeqFacts],
                timelines: Mapping[str, ClusterTimeline],
                spark: SparkSession | None = None,
                driver_rows: int = DRIVER_ROWS) -> dict[str, list[Change]]:
    """Per cluster the run read rows of, its changes with at least one row (with `spark`,
    a run of more than `driver_rows` rows counts its creations and leader moves there)."""
    if spark is not None and on_executors(out_dir, run_id, driver_rows):
        counted = counted_on_executors(spark, out_dir, run_id, carry.leaders, LEADER_CAUSES)
    else:
        counted = _counted_on_driver(out_dir, run_id, carry)
    deleted = _deletions(out_dir, run_id)
    reassigning = _reassigning(out_dir, run_id, carry)
    out: dict[str, list[Change]] = {}
    for cluster in sorted(c for c, f in facts.items() if f.seq_max is not None):
        f = facts[cluster]
        found = [*counted.get(cluster, []),
                 change_digest.deleted(deleted.get(cluster, [])),
                 *change_digest.reassignments(reassigning.get(cluster, []), run_id),
                 *change_digest.from_requests(f.requested)]
        if cluster in timelines:
            found += change_digest.cluster_changes(timelines[cluster], f.previous_seq_max)
        out[cluster] = change_digest.in_order(found)
    return out


def change_batches(found: Mapping[str, list[Change]], run_id: str) -> list[pa.RecordBatch]:
    schema = arrow_schema(TABLES["changes"])
    fields = ("seq", "ts", "topic", "partition", "broker_id", "detail")
    rows = [{"cluster": cluster, "run_id": run_id, "change": c.change, "count": c.count,
             "first": [dict(zip(fields, r, strict=True)) for r in c.first]}
            for cluster, changes in found.items() for c in changes]
    return [pa.RecordBatch.from_pylist(rows, schema=schema)] if rows else []


def write_changes(out_dir: str, run_id: str, carry: Carry,
                  facts: Mapping[str, SeqFacts],
                  timelines: Mapping[str, ClusterTimeline],
                  spark: SparkSession | None = None,
                  driver_rows: int = DRIVER_ROWS) -> int:
    """Write the run's `changes` (`carry`: what the earlier runs left); the number of rows."""
    found = run_changes(out_dir, run_id, carry, facts, timelines, spark, driver_rows)
    return write_arrow(change_batches(found, run_id), out_dir, "changes", run_id)
