"""A controller-log excerpt through the three commands without Spark: the pure ingest
(`jobs.ingest.logparse.pipeline`), the core's replay under a release line, and the
comparison (`jobs.compare.partitions.compare_all`), as `jobs.ingest`, `jobs.replay` and
`jobs.compare` run them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from jobs.compare.partitions import ENTITY_COLUMNS, TransitionRow, compare_all
from jobs.ingest.logparse import pipeline
from jobs.ingest.logparse.version import VersionRange, detect, markers_in
from schemas import event_types as ET
from statemachine.cluster import ClusterTimeline, build_timeline
from statemachine.context import Outputs, ReplayConfig
from statemachine.events import Event
from statemachine.profiles import profile_for
from statemachine.replay import replay


class Excerpt(NamedTuple):
    ingested: pipeline.IngestResult
    timeline: ClusterTimeline
    out: Outputs
    rows: list[dict[str, Any]]  # comparison rows
    transitions: list[TransitionRow]


def detected(path: Path) -> VersionRange | None:
    """The release lines every file of `path` fits, as `jobs.ingest` dates them."""
    files = sorted(path.rglob("*.log")) if path.is_dir() else [path]
    return detect({m for f in files for line in f.read_text().splitlines()
                   for m in markers_in(line)})


def run(paths: Path | Iterable[Path], kafka_version: str,
        edit: Callable[[Event], Event] | None = None, **ingest: Any) -> Excerpt:
    """Ingest, replay under `kafka_version`, compare. `edit`: rewrites each event first
    (what the replay would do without some of what the ingest read)."""
    r = pipeline.ingest([str(p) for p in ([paths] if isinstance(paths, Path) else paths)],
                        **ingest)
    if edit is not None:
        r.events = [edit(e) for e in r.events]
    profile = profile_for(kafka_version)
    timeline = build_timeline([e for e in r.events if e.event_type in ET.CLUSTER_EVENTS],
                              profile=profile)
    config = ReplayConfig(kafka_version=kafka_version, scala_binary=profile.scala_binary)
    _, out = replay(None, [e for e in r.events if e.event_type not in ET.CLUSTER_EVENTS],
                    timeline, config)
    rows, transitions = compare_all(
        "default", [o._asdict() for o in r.observations],
        [c._asdict() for c in out.state_changes],
        [x._asdict() for x in out.leader_and_isr + out.update_metadata],
        [x._asdict() for x in out.partition_states], [x._asdict() for x in out.replica_states],
        [w._asdict() for w in out.partition_state_writes],
        [e._asdict() for e in r.events if e.event_type == ET.PARTITION_SNAPSHOT])
    return Excerpt(r, timeline, out,
                   [dict(zip(ENTITY_COLUMNS, x, strict=True)) for x in rows], transitions)


def statuses(x: Excerpt) -> set[str]:
    return {row["status"] for row in x.rows}


def differing(x: Excerpt) -> list[tuple[Any, ...]]:
    """(topic, partition, broker, field, logged, replayed, line) of every `differ` row."""
    return [(r["topic"], r["partition"], r["broker_id"], r["first_divergence_field"],
             r["observed_value"], r["replayed_value"], r["divergence_source"])
            for r in x.rows if r["status"] == "differ"]
