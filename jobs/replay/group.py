"""The function `applyInPandasWithState` runs per group: a bucket of whole topics of one
cluster, or the cluster-scope group (`CLUSTER_BUCKET`).

It unpacks the group's rows (packed per input batch by `jobs.replay.pack`; no per-row
pandas), separates wake rows, quarantined rows and valid rows, drops exact duplicates,
folds the valid rows through the core (`statemachine.replay`) on top of the state saved in
`GroupState`, and returns tagged rows: one per output table and chunk (rows serialised
once, `jobs.replay.codec`) plus one counts row. A group of more than SPILL_ROWS valid rows
is sorted on disk and folded piece by piece (`jobs.replay.runs`), its output returned as
the pieces fold. No Kafka rule is decided here.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

import pandas as pd

from jobs.replay.codec import encode
from jobs.replay.pack import unpack
from jobs.replay.runs import GroupRows
from schemas.state import CLUSTER_BUCKET, COUNTS_TAG, OFFLINE_LISTED, TAGGED_SCHEMA
from statemachine.cluster import ClusterTimeline, build_timeline
from statemachine.context import Outputs, ReplayConfig
from statemachine.events import Event
from statemachine.model import BucketState
from statemachine.replay import Fold, gc_paused, replay
from statemachine.rows import FindingRow

TAGGED_COLUMNS = [f.name for f in TAGGED_SCHEMA.fields]

# Core output list -> table name: the state tables (once, after the fold) and the per-event
# tables (taken in chunks of FLUSH_ROWS while the fold runs, the rest after it).
STATE_TABLES = (
    ("partition_states", "partition_states"),
    ("replica_states", "replica_states"),
)
EVENT_TABLES = (
    ("state_changes", "state_changes"),
    ("leader_and_isr", "leader_and_isr_requests"),
    ("update_metadata", "update_metadata_requests"),
    ("stop_replica", "stop_replica_requests"),
    ("findings", "findings"),
)
# A bucket of a large log emits millions of rows; as Python row tuples they take many times
# the memory of their payload (state_changes of the bench log: 214 MB as Arrow, 41 MB as
# LZ4 IPC), so they are encoded every FLUSH_ROWS rows.
FLUSH_ROWS = 200_000
# A group with more valid rows than this is sorted externally and folded in pieces of
# PIECE_ROWS (`jobs.replay.runs`), so its rows are never all in memory.
SPILL_ROWS = 200_000
PIECE_ROWS = 20_000


def _late_finding(e: Event, watermark: int) -> FindingRow:
    return FindingRow(
        e.seq, e.ts, e.topic, e.partition, e.broker_id, "late_event",
        f"{e.event_type} at seq {e.seq} arrived after the replay had reached seq "
        f"{watermark}; not applied (a full replay with a fresh checkpoint takes it in)",
        e.source,
    )


def make_replay_fn(
    timelines: dict[str, ClusterTimeline], config: ReplayConfig
) -> Callable[[tuple[Any, ...], Iterator[pd.DataFrame], Any], Iterator[pd.DataFrame]]:
    """The per-group function; the timelines and config travel in its closure."""
    empty_timeline = build_timeline([])

    def replay_group(
        key: tuple[Any, ...], pdfs: Iterator[pd.DataFrame], state: Any
    ) -> Iterator[pd.DataFrame]:
        with gc_paused():
            for tagged in _replay_group(key, pdfs, state):
                if tagged:
                    yield pd.DataFrame.from_records(tagged, columns=TAGGED_COLUMNS)

    def _replay_group(
        key: tuple[Any, ...], pdfs: Iterator[pd.DataFrame], state: Any
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Yields the tagged rows in parts: a spilled group's parts as its pieces fold."""
        cluster, bucket = str(key[0]), int(key[1])
        rows = GroupRows(SPILL_ROWS)
        quarantined: list[tuple[Any, ...]] = []
        horizons: list[int] = []
        tagged: list[tuple[Any, ...]] = []
        kinds: Counter[str] = Counter()

        def add(table: str, table_rows: list[Any]) -> None:
            if table_rows:
                tagged.append((cluster, bucket, table, len(table_rows),
                               encode(table, table_rows), 0, 0, 0, 0, 0, None, None, None))
                if table == "findings":
                    kinds.update(f.kind for f in table_rows)

        def emit(out: Outputs, tables: tuple[tuple[str, str], ...]) -> None:
            for attr, table in tables:
                add(table, getattr(out, attr))

        def taken() -> list[tuple[Any, ...]]:
            part = list(tagged)
            tagged.clear()
            return part

        n_quarantined = 0
        try:
            for pdf in pdfs:
                for wake, payload, horizon in zip(pdf["wake"].tolist(), pdf["payload"].tolist(),
                                                  pdf["horizon"].tolist(), strict=True):
                    if wake and horizon is not None and not pd.isna(horizon):
                        horizons.append(int(horizon))
                    if wake or payload is None:
                        continue
                    for row in unpack(payload):
                        if row[0] is None:
                            rows.add(row[1:])
                        else:
                            quarantined.append((*row[1:], row[0]))
                            n_quarantined += 1
                            if len(quarantined) >= FLUSH_ROWS:
                                add("quarantine", quarantined)
                                quarantined = []

            if (bucket != CLUSTER_BUCKET and not rows.rows and not n_quarantined
                    and not state.exists):
                return  # every bucket is woken; this one has never held a topic: no state
            # The timeline after the group's events is applied up to the horizon of the run
            # that planned this batch (no wake row with a horizon: a checkpoint from before
            # horizons).
            until = max(horizons) if horizons else None
            saved = BucketState.from_bytes(bytes(state.get[0])) if state.exists else None
            timeline = timelines.get(cluster, empty_timeline)
            watermark = saved.watermark if saved is not None else -1

            if bucket == CLUSTER_BUCKET:
                # The driver's timeline applies these rows; here they are only accounted
                # for, and the timeline's own findings are reported once, by the run that
                # reaches them. A cluster row at or below the timeline's end in the
                # previous run is late: every bucket has already replayed past it (they are
                # all woken every run).
                distinct = rows.in_memory() if not rows.spilled else list(rows.merged())
                out = Outputs()
                out.findings = [f for f in timeline.findings if (f.seq or -1) > watermark
                                and (until is None or (f.seq or -1) <= until)]
                out.late = [Event(*e) for e in distinct if e[0] <= watermark]
                out.applied = len(distinct) - len(out.late)
                last = timeline.last_seq
                if until is not None and last is not None:
                    last = min(last, until)
                new_state = BucketState(max(watermark, last if last is not None else -1))
            elif not rows.spilled:
                new_state, out = replay(saved, [Event(*e) for e in rows.in_memory()],
                                        timeline, config,
                                        flush=lambda o: emit(o, EVENT_TABLES),
                                        flush_rows=FLUSH_ROWS, until=until)
            else:
                fold = Fold(saved, timeline, config, flush=lambda o: emit(o, EVENT_TABLES),
                            flush_rows=FLUSH_ROWS, until=until)
                merged = rows.merged()
                while piece := [Event(*e) for e in islice(merged, PIECE_ROWS)]:
                    fold.feed(piece)
                    yield taken()
                new_state, out = fold.finish()
        finally:
            rows.close()
        state.update((new_state.to_bytes(),))

        out.findings.extend(_late_finding(e, watermark) for e in out.late)
        emit(out, STATE_TABLES + EVENT_TABLES)
        add("quarantine", quarantined)
        states = Counter(p.state for p in out.partition_states)
        offline = sorted((p.topic, p.partition) for p in out.partition_states
                         if p.state == "OfflinePartition")[:OFFLINE_LISTED]
        tagged.append((
            cluster, bucket, COUNTS_TAG, 0, None,
            rows.rows + n_quarantined, out.applied, rows.duplicates, n_quarantined,
            len(out.late),
            json.dumps(dict(sorted(kinds.items()))),
            json.dumps(dict(sorted(states.items()))),
            json.dumps(offline),
        ))
        yield taken()

    return replay_group
