"""The function `applyInPandasWithState` runs per group: a bucket of whole topics of one
cluster, or the cluster-scope group (`CLUSTER_BUCKET`).

Its steps, per group and micro-batch:

1. read the group's rows (`read_group`: packed per input batch by `jobs.engine.pack`, so
   no per-row pandas), keeping the wake rows' horizons, the quarantined rows and the valid
   rows;
2. fold the distinct valid rows through the core (`statemachine.replay`) on top of the
   state saved in `GroupState` (`fold_in_memory`, or `fold_in_pieces` for a group of more
   than SPILL_ROWS valid rows, sorted on disk by `jobs.engine.group_rows` and returned as the
   pieces fold); the cluster-scope group only accounts for its rows (`account_cluster_rows`);
3. return tagged rows: one per output table and chunk, whose rows this worker has written
   to the batch's staging directory (`jobs.store.staging`), or serialised once into the
   payload where it cannot write `--out` (`jobs.engine.codec`), plus one counts row
   (`GroupOutput.finish`).

No Kafka rule is decided here.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, NamedTuple

import pandas as pd
import pyarrow as pa
from pyspark.sql.streaming.state import GroupState

from jobs.engine.codec import (
    GroupCounts,
    body_schema,
    encode,
    encode_counts,
    file_batch,
    rows_batch,
)
from jobs.engine.group_rows import GroupRows, Row
from jobs.engine.pack import unpack
from jobs.engine.state_refresh import StateRefresh
from jobs.store.staging import StagingArea
from schemas.state import CLUSTER_BUCKET, COUNTS_TAG, OFFLINE_LISTED, TAGGED_SCHEMA
from statemachine.cluster import ClusterTimeline, build_timeline
from statemachine.context import Outputs, ReplayConfig
from statemachine.events import Event
from statemachine.model import BucketState
from statemachine.replay import Fold, gc_paused, replay
from statemachine.rows import FindingRow
from statemachine.states import PARTITION_NAMES

# Core output list -> table name: the state tables (once, after the fold) and the per-event
# tables (taken in chunks of FLUSH_ROWS while the fold runs, the rest after it).
STATE_TABLES = (
    ("partition_states", "partition_states"),
    ("replica_states", "replica_states"),
)
EVENT_TABLES = (
    ("state_changes", "state_changes"),
    ("partition_state_writes", "partition_state_writes"),
    ("leader_and_isr", "leader_and_isr_requests"),
    ("update_metadata", "update_metadata_requests"),
    ("stop_replica", "stop_replica_requests"),
    ("findings", "findings"),
    ("partition_windows", "partition_windows"),
)
# A bucket of a large log emits millions of rows; as Python row tuples they take many times
# the memory of their payload (state_changes of the bench log: 214 MB as Arrow, 41 MB as
# LZ4 IPC), so they are encoded every FLUSH_ROWS rows.
FLUSH_ROWS = 200_000
# A group with more valid rows than this is sorted externally and folded in pieces of
# PIECE_ROWS (`jobs.engine.group_rows`), so its rows are never all in memory.
SPILL_ROWS = 200_000
PIECE_ROWS = 20_000


class TaggedRow(NamedTuple):
    """One row of the operator's output (TAGGED_SCHEMA)."""

    cluster: str
    bucket: int
    table: str
    rows: int
    payload: bytes | None  # None: the rows are in staged files (`jobs.store.staging`)


TAGGED_COLUMNS = list(TaggedRow._fields)
assert [f.name for f in TAGGED_SCHEMA.fields] == TAGGED_COLUMNS

# The function handed to `applyInPandasWithState`: (key, the group's frames, its state).
ReplayFn = Callable[[tuple[Any, ...], Iterable[pd.DataFrame], GroupState], Iterator[pd.DataFrame]]
Folded = tuple[BucketState, Outputs]


@dataclass
class Encoded:
    """Rows of one table converted at most once, whichever form the outputs need: a what-if
    writes the rows its variants share under each variant's cluster."""

    table: str
    rows: list[Any]
    _body: pa.RecordBatch | None = None
    _payload: bytes | None = None

    def body(self) -> pa.RecordBatch:
        if self._body is None:
            self._body = rows_batch(body_schema(self.table), self.rows)
        return self._body

    def payload(self) -> bytes:
        if self._payload is None:
            self._payload = encode(self.table, self.rows)
        return self._payload


@dataclass
class GroupOutput:
    """The tagged rows of one group, handed back in parts. With a staging area the rows
    of each table are written to files as they come and the tagged row only counts them;
    without, they are encoded into its payload."""

    cluster: str
    bucket: int
    staging: StagingArea | None = None
    tagged: list[TaggedRow] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)  # findings by kind
    chunks: Counter[str] = field(default_factory=Counter)  # files staged per table

    def add(self, table: str, rows: list[Any], encoded: Encoded | None = None) -> None:
        """`rows` of `table`; `encoded`: the same rows converted once for several groups'
        outputs (`Encoded`)."""
        if not rows:
            return
        payload = None
        if self.staging is None:
            payload = encoded.payload() if encoded is not None else encode(table, rows)
        else:
            body = encoded.body() if encoded is not None else None
            self.staging.write(table, self.cluster, self.bucket, self.chunks[table],
                               file_batch(table, self.cluster, rows, body))
            self.chunks[table] += 1
        self.tagged.append(TaggedRow(self.cluster, self.bucket, table, len(rows), payload))
        if table == "findings":
            self.kinds.update(f.kind for f in rows)

    def emit(self, out: Outputs, tables: tuple[tuple[str, str], ...] = EVENT_TABLES,
             shared: dict[str, Encoded] | None = None) -> None:
        """The rows of `tables`; with `shared`, rows equal to other outputs' are converted
        once for all (the first output to emit a table puts it there)."""
        for attr, table in tables:
            rows = getattr(out, attr)
            encoded = None
            if shared is not None and rows:
                encoded = shared.setdefault(table, Encoded(table, rows))
                # The same rows (copies of one list compare item by item, by identity
                # first), or its own (a variant's late findings appended): converted apart.
                if encoded.rows is not rows and encoded.rows != rows:
                    encoded = None
            self.add(table, rows, encoded)

    def taken(self) -> list[TaggedRow]:
        part = list(self.tagged)
        self.tagged.clear()
        return part

    def finish(self, out: Outputs, group: GroupInput, late_through: int,
               new_state: BucketState) -> list[TaggedRow]:
        """The rest of the tables, the quarantine and the counts row, after the fold."""
        return self.finish_with(out, group.quarantined, Tally(
            group.valid.rows, group.valid.duplicates, group.quarantined_count, group.last_ts),
            late_through, new_state)

    def finish_with(self, out: Outputs, quarantined: list[Row], tally: Tally,
                    late_through: int, new_state: BucketState,
                    shared: dict[str, Encoded] | None = None) -> list[TaggedRow]:
        out.findings.extend(_late_finding(e, late_through) for e in out.late)
        self.emit(out, STATE_TABLES + EVENT_TABLES, shared)
        self.add("quarantine", quarantined)
        # Of the whole state: the state tables hold only the partitions the run changed.
        states = {PARTITION_NAMES[s]: n for s, n in new_state.partitions_by_state().items()}
        offline = new_state.offline_partitions(OFFLINE_LISTED)
        counts = GroupCounts(
            rows_read=tally.valid + tally.quarantined,
            rows_applied=out.applied,
            rows_duplicate=tally.duplicates,
            rows_quarantined=tally.quarantined,
            rows_late=len(out.late),
            findings_by_kind=json.dumps(dict(sorted(self.kinds.items()))),
            partitions_by_state=json.dumps(dict(sorted(states.items()))),
            offline_partitions=json.dumps(offline),
            watermark=new_state.watermark,
            last_ts=tally.last_ts,
        )
        self.tagged.append(
            TaggedRow(self.cluster, self.bucket, COUNTS_TAG, 0, encode_counts(counts)))
        return self.taken()


class Tally(NamedTuple):
    """A group's input rows as the counts row reports them."""

    valid: int  # valid rows read, duplicates included
    duplicates: int
    quarantined: int
    last_ts: int  # the latest event time among the valid rows (microseconds), -1: none


@dataclass
class GroupInput:
    """A group's rows in this micro-batch, as read from its frames."""

    valid: GroupRows
    quarantined: list[Row] = field(default_factory=list)  # not yet encoded
    quarantined_count: int = 0
    horizons: list[int] = field(default_factory=list)
    last_ts: int = -1  # the latest event time among the valid rows (microseconds)

    @property
    def until(self) -> int | None:
        """How far the timeline after the group's events is applied: the horizon of the run
        that planned this batch (None without a wake row with a horizon: a checkpoint from
        before horizons, the whole timeline)."""
        return max(self.horizons) if self.horizons else None

    @property
    def empty(self) -> bool:
        return not self.valid.rows and not self.quarantined_count


def emit_to(outputs: Iterable[GroupOutput], out: Outputs) -> None:
    """The per-event rows of `out` to each of `outputs`, converted once."""
    shared: dict[str, Encoded] = {}
    for output in outputs:
        output.emit(out, EVENT_TABLES, shared)


def _late_finding(e: Event, watermark: int) -> FindingRow:
    return FindingRow(
        e.seq, e.ts, e.topic, e.partition, e.broker_id, "late_event",
        f"{e.event_type} at seq {e.seq} arrived after the replay had reached seq "
        f"{watermark}; not applied (a full replay with a fresh checkpoint takes it in)",
        e.source,
    )


def read_group(pdfs: Iterable[pd.DataFrame], group: GroupInput,
               output: GroupOutput | None) -> None:
    """Sort the group's rows into `group`: wake rows' horizons, valid rows, quarantined rows
    (encoded into `output` every FLUSH_ROWS rows; all kept in `group` without one)."""
    for pdf in pdfs:
        for wake, payload, horizon in zip(pdf["wake"].tolist(), pdf["payload"].tolist(),
                                          pdf["horizon"].tolist(), strict=True):
            if wake and horizon is not None and not pd.isna(horizon):
                group.horizons.append(int(horizon))
            if wake or payload is None:
                continue
            for row in unpack(payload):
                reason, event = row[0], row[1:]  # a packed row: (reason, *event fields)
                if reason is None:
                    group.valid.add(event)
                    if event[1] > group.last_ts:  # ts (microseconds; valid: not null)
                        group.last_ts = event[1]
                    continue
                group.quarantined.append((*event, reason))
                group.quarantined_count += 1
                if output is not None and len(group.quarantined) >= FLUSH_ROWS:
                    output.add("quarantine", group.quarantined)
                    group.quarantined = []


def account_cluster_rows(group: GroupInput, timeline: ClusterTimeline, watermark: int,
                         late_through: int) -> Folded:
    """The cluster-scope group. The driver's timeline applies these rows; here they are only
    accounted for (`account_cluster`)."""
    rows = group.valid
    distinct = rows.in_memory() if not rows.spilled else list(rows.merged())
    return account_cluster(distinct, group.until, timeline, watermark, late_through)


def account_cluster(distinct: list[Row], until: int | None, timeline: ClusterTimeline,
                    watermark: int, late_through: int) -> Folded:
    """The cluster-scope rows, accounted for, and the timeline's own findings, reported
    once, by the run that reaches them: those up to the run's horizon `until`, the seq of
    its last cluster event (a rejected event after the last step still has its finding). A
    cluster row at or below what the previous runs applied is late: the driver left it out
    of the timeline."""
    out = Outputs()
    out.findings = [f for f in timeline.findings if (f.seq or -1) > watermark
                    and (until is None or (f.seq or -1) <= until)]
    out.late = [e for e in map(Event._make, distinct) if e.seq <= late_through]
    out.applied = len(distinct) - len(out.late)
    reached = until if until is not None else timeline.last_seq
    return BucketState(max(watermark, reached if reached is not None else -1)), out


def split_late(events: Iterable[Event], late_through: int, late: list[Event]) -> Iterator[Event]:
    """The events after `late_through`; the others go to `late`. Lateness is decided per
    cluster, against what the previous runs applied, so that it does not depend on which
    bucket a topic hashes to (the core's own watermark check is per group)."""
    for e in events:
        if e.seq <= late_through:
            late.append(e)
        else:
            yield e


def fold_in_memory(group: GroupInput, saved: BucketState | None, timeline: ClusterTimeline,
                   config: ReplayConfig, output: GroupOutput, late_through: int,
                   every_row: bool = False) -> Folded:
    late: list[Event] = []
    events = list(split_late(map(Event._make, group.valid.in_memory()), late_through, late))
    new_state, out = replay(saved, events, timeline, config, flush=output.emit,
                            flush_rows=FLUSH_ROWS, until=group.until, every_row=every_row)
    out.late[:0] = late
    return new_state, out


def fold_in_pieces(
    group: GroupInput, saved: BucketState | None, timeline: ClusterTimeline,
    config: ReplayConfig, output: GroupOutput, late_through: int, every_row: bool = False,
) -> Generator[list[TaggedRow], None, Folded]:
    """A spilled group: its merged runs folded PIECE_ROWS at a time, each piece's output
    yielded as it folds."""
    fold = Fold(saved, timeline, config, flush=output.emit, flush_rows=FLUSH_ROWS,
                until=group.until, every_row=every_row)
    late: list[Event] = []
    merged = split_late(map(Event._make, group.valid.merged()), late_through, late)
    while piece := list(islice(merged, PIECE_ROWS)):
        fold.feed(piece)
        yield output.taken()
    new_state, out = fold.finish()
    out.late[:0] = late
    return new_state, out


def replay_one_group(
    cluster: str, bucket: int, pdfs: Iterable[pd.DataFrame], state: GroupState,
    timeline: ClusterTimeline, config: ReplayConfig, applied_through: int,
    staging: StagingArea | None = None, every_row: bool = False,
) -> Iterator[list[TaggedRow]]:
    """Yields the group's tagged rows in parts: a spilled group's parts as its pieces fold.
    `every_row`: the state rows of every partition of the group, not only of those the
    fold changed (`jobs.engine.state_refresh`)."""
    output = GroupOutput(cluster, bucket, staging)
    group = GroupInput(GroupRows(SPILL_ROWS))
    try:
        read_group(pdfs, group, output)
        if bucket != CLUSTER_BUCKET and group.empty and not state.exists:
            return  # every bucket is woken; this one has never held a topic: no state
        saved = BucketState.from_bytes(bytes(state.get[0])) if state.exists else None
        watermark = saved.watermark if saved is not None else -1
        late_through = max(watermark, applied_through)
        if bucket == CLUSTER_BUCKET:
            new_state, out = account_cluster_rows(group, timeline, watermark, late_through)
        elif not group.valid.spilled:
            new_state, out = fold_in_memory(group, saved, timeline, config, output,
                                            late_through, every_row)
        else:
            new_state, out = yield from fold_in_pieces(group, saved, timeline, config, output,
                                                       late_through, every_row)
    finally:
        group.valid.close()
    state.update((new_state.to_bytes(),))
    yield output.finish(out, group, late_through, new_state)


def make_replay_fn(timelines: dict[str, ClusterTimeline], config: ReplayConfig,
                   applied_through: dict[str, int] | None = None,
                   configs: Mapping[str, ReplayConfig] | None = None,
                   refresh: StateRefresh | None = None) -> ReplayFn:
    """The per-group function; the timelines, the config and what the previous runs applied
    per cluster (rows at or below it are late) travel in its closure. `configs` gives a
    cluster its own config (the what-if's variants, each a cluster of the grouping key);
    the others take `config`. `refresh`: the buckets whose every state row the run
    writes (`jobs.engine.state_refresh`; none: only the rows the fold changed)."""
    previous = dict(applied_through or {})
    by_cluster = dict(configs or {})
    empty_timeline = build_timeline([])

    def replay_group(
        key: tuple[Any, ...], pdfs: Iterable[pd.DataFrame], state: GroupState
    ) -> Iterator[pd.DataFrame]:
        cluster, bucket = str(key[0]), int(key[1])  # the grouping key: (cluster, bucket)
        timeline = timelines.get(cluster, empty_timeline)
        with gc_paused():
            for tagged in replay_one_group(cluster, bucket, pdfs, state, timeline,
                                           by_cluster.get(cluster, config),
                                           previous.get(cluster, -1), StagingArea.of_task(),
                                           refresh is not None and refresh.covers(bucket)):
                if tagged:
                    yield pd.DataFrame.from_records(tagged, columns=TAGGED_COLUMNS)

    return replay_group
