"""`--initial-state FILE...`: the partitions that existed before the log, as PartitionSnapshot
rows applied before this run's first event.

The files are `kafka-topics --describe` output or ZooKeeper partition-state dumps, read by
`jobs.ingest.snapshot` (the parser the audit's `--observed` uses). Each partition with an
assignment becomes one PartitionSnapshot row of the log's only cluster, with the seq right
after what the checkpoint has applied (the first run: 0) and the ts of this run's first
event: the core applies a snapshot before the controller event of its seq
(`statemachine.replay.apply_order`), so the seed comes before everything this run replays.
The core seeds only partitions it does not know; on a later run a partition the replay
already knows is a no-op when the file agrees and a `snapshot_contradicts` finding when it
does not (docs/replay-job.md).

The rows are written once per run under the checkpoint (`seed/`) and read by the replay
query as a second file source, like the wake rows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.common.exitcodes import BadInput
from jobs.ingest.snapshot import ObservedPartition, Snapshot, TopicSettings, read_snapshots
from jobs.store.filesystem import path_exists, rename_path, write_text
from jobs.store.layout import CheckpointLayout
from schemas import event_types as ET
from schemas.events import EVENT_COLUMNS, EVENT_SCHEMA

UNCLEAN = "unclean.leader.election.enable"


class InitialStateError(BadInput):
    """A bad --initial-state file: its one-line message is the job's error."""


@dataclass(frozen=True)
class Seed:
    """The partitions to seed, and what the files said that is not seeded."""

    partitions: list[ObservedPartition]
    topics: dict[str, TopicSettings]
    without_assignment: list[str]  # "topic-partition" of partitions with no replicas


def read_initial_state(paths: Sequence[str]) -> Seed:
    """The snapshot files, or InitialStateError naming the first unreadable line."""
    try:
        snapshot = read_snapshots(paths)
    except OSError as exc:
        raise InitialStateError(f"--initial-state: cannot read {exc.filename or paths[0]}: "
                                f"{exc.strerror or exc}") from exc
    return seed_of(snapshot, paths)


def seed_of(snapshot: Snapshot, paths: Sequence[str]) -> Seed:
    if snapshot.unreadable:
        first = snapshot.unreadable[0]
        raise InitialStateError(f"--initial-state {first.source}: {first.reason}: "
                                f"{first.text.strip()[:120]!r}")
    seeded = [p for p in snapshot.partitions if p.replicas]
    if not seeded:
        raise InitialStateError(f"--initial-state {', '.join(paths)}: no partition with an "
                                "assignment (a describe output or a TopicZNode is needed)")
    return Seed(sorted(seeded, key=lambda p: (p.topic, p.partition)),
                {t.topic: t for t in snapshot.topics},
                [f"{p.topic}-{p.partition}" for p in snapshot.partitions if not p.replicas])


def _unclean(settings: TopicSettings | None) -> bool | None:
    value = (settings.configs or {}).get(UNCLEAN) if settings is not None else None
    return None if value is None else value.strip().lower() == "true"


def seed_rows(seed: Seed, cluster: str, seq: int, ts: datetime) -> list[tuple[Any, ...]]:
    """One PartitionSnapshot row (EVENT_COLUMNS) per seeded partition."""
    rows = []
    for p in seed.partitions:
        leader = p.leader
        row: dict[str, Any] = dict.fromkeys(EVENT_COLUMNS)
        row.update(
            cluster=cluster, seq=seq, ts=ts, event_type=ET.PARTITION_SNAPSHOT, topic=p.topic,
            partition=p.partition, replicas=list(p.replicas or ()), leader=leader,
            isr=list(p.isr) if leader is not None and p.isr is not None else None,
            leader_epoch=p.leader_epoch if leader is not None else None,
            zk_version=p.zk_version if leader is not None else None,
            controller_epoch=p.controller_epoch if leader is not None else None,
            unclean_leader_election=_unclean(seed.topics.get(p.topic)),
            source=f"initial-state:{p.source}")
        rows.append(tuple(row[c] for c in EVENT_COLUMNS))
    return rows


def first_new_event(events: DataFrame, cluster: str, applied: int) -> datetime | None:
    """The ts of this run's first event of `cluster` (seq above `applied`), or None."""
    first = (events.where((F.coalesce(F.col("cluster"), F.lit(ET.DEFAULT_CLUSTER)) == cluster)
                          & (F.col("seq") > applied) & F.col("ts").isNotNull())
             .agg(F.min_by("ts", "seq").alias("ts")).collect())
    return first[0]["ts"] if first else None


def seed_dir(checkpoint: str) -> str:
    return CheckpointLayout(checkpoint).seed


def seed_source_exists(spark: SparkSession, checkpoint: str) -> bool:
    return path_exists(CheckpointLayout(checkpoint).seed_marker)


def ensure_seed_source(spark: SparkSession, checkpoint: str, query_started: bool) -> bool:
    """Whether this checkpoint's query reads the seed directory: every checkpoint made by
    this build does (its directory is made before the query first runs); one whose query
    ran before `--initial-state` existed has one source less and keeps it so (Structured
    Streaming refuses a query whose sources changed)."""
    if seed_source_exists(spark, checkpoint):
        return True
    if query_started:
        return False
    write_text(CheckpointLayout(checkpoint).seed_marker,
               "PartitionSnapshot rows of --initial-state, one folder per run\n")
    return True


def write_seed_rows(spark: SparkSession, checkpoint: str, run_id: str,
                    rows: list[tuple[Any, ...]]) -> str:
    """Write this run's seed rows once (a rerun of a killed run finds them) and return
    their folder."""
    digest = hashlib.sha1(json.dumps([r[:2] for r in rows[:1]] + [len(rows)],
                                     default=str).encode()).hexdigest()[:12]
    target = CheckpointLayout(checkpoint).seed_rows(run_id, digest)
    if path_exists(target):
        return target
    staging = CheckpointLayout(checkpoint).seed_staging(run_id)
    spark.createDataFrame(rows, EVENT_SCHEMA).coalesce(1).write.mode("overwrite") \
        .parquet(staging)
    rename_path(staging, target)
    return target
