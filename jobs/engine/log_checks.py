"""What a run's new rows say about the log itself: the seq range, the seqs that never
arrived, the rows that came late, two different events at one seq, and time running
backwards. Here as a pure reading of a table of rows (pyarrow), the definition that the
replay's Spark query (`jobs.engine.log_checks_query`, one summary per block of seqs for the
driver) is tested against, case by case.

The seq is the controller's queue position (`ControllerEventManager` processes one event at
a time, in order), so a cluster's seqs are consecutive: a hole between two seqs that did
arrive, or between the last committed run and this one, is events that never reached the
log. Rows at one seq are one controller event, so they belong to one family (a
`BrokerChange` may start and fail brokers together; a failover may carry the partitions it
found); two families at one seq, or one scope (type, broker, topic, partition) with two
different contents, are two events where Kafka had one, and the replay cannot know which
is true: both are quarantined (`conflicting_seqs`). Rows without a usable seq are left to
the row validation (quarantined there).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jobs.engine.requested import Requested, requested
from schemas import event_types as ET

# Event types that share a seq as one controller event (anything else stands alone).
FAMILY = {
    ET.BROKER_STARTUP: "BrokerChange",
    ET.BROKER_FAILURE: "BrokerChange",
    ET.PARTITION_SNAPSHOT: ET.CONTROLLER_FAILOVER,
}
SCOPE = ("cluster", "seq", "event_type", "broker_id", "topic", "partition")
# Everything but the scope and `source` (the same event exported twice names two sources).
CONTENT = ("ts", "replicas", "isr", "leader_epoch", "brokers", "error",
           "unclean_leader_election", "leader", "zk_version", "controller_epoch",
           "partition_state", "topics_to_be_deleted")
# `unclean`: the topic setting a TopicConfigChanged carries, for the run's digest
# (`jobs.engine.requested`).
NARROW = (*SCOPE, "ts_us", "fingerprint", "unclean")
NARROW_TYPES = {"cluster": pa.string(), "seq": pa.int64(), "event_type": pa.string(),
                "broker_id": pa.int32(), "topic": pa.string(), "partition": pa.int32(),
                "ts_us": pa.int64(), "fingerprint": pa.string(), "unclean": pa.bool_()}
LISTED = 20  # seqs listed per kind in run_summary (the counts are whole)


@dataclass(frozen=True)
class SeqFacts:
    """One cluster's facts of a run: its seq range, the missing and late seqs, the
    conflicting seqs, the seqs whose time runs backwards, and the requests it made."""

    seq_min: int | None = None
    seq_max: int | None = None
    previous_seq_max: int | None = None  # the highest seq the committed runs had seen
    gaps: tuple[tuple[int, int], ...] = ()  # inclusive ranges of missing seqs
    late: tuple[int, int] | None = None  # seq range of the rows at or below the checkpoint
    conflicting: tuple[int, ...] = ()
    ts_backwards: tuple[int, ...] = field(default=())  # first LISTED seqs
    ts_backwards_count: int = 0
    # What the run's on-time rows asked the controller (`jobs.engine.requested`).
    requested: tuple[Requested, ...] = ()

    @property
    def missing(self) -> int:
        return sum(b - a + 1 for a, b in self.gaps)


def facts_to_json(facts: dict[str, SeqFacts]) -> dict[str, dict[str, object]]:
    return {c: asdict(f) for c, f in sorted(facts.items())}


def facts_from_json(saved: dict[str, dict[str, object]]) -> dict[str, SeqFacts]:
    """`facts_to_json` read back (JSON lists become the tuples of `SeqFacts`)."""
    def thaw(value: object) -> object:
        return tuple(thaw(v) for v in value) if isinstance(value, list) else value

    return {c: SeqFacts(**{k: thaw(v) for k, v in f.items()})  # type: ignore[arg-type]
            for c, f in saved.items()}


def _as_text(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A column as text for the fingerprint: lists joined, nulls as `-`."""
    if pa.types.is_list(column.type):
        column = pc.binary_join(pc.cast(column, pa.list_(pa.string())), ",")
    elif pa.types.is_timestamp(column.type):
        column = pc.cast(pc.cast(column, pa.timestamp("us")), pa.int64())
    return pc.fill_null(pc.cast(column, pa.string()), "-")


def narrow(batch: pa.RecordBatch | pa.Table) -> pa.Table:
    """The scope of each row with a usable seq, and a fingerprint of its content."""
    table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
    table = table.filter(pc.and_kleene(pc.is_valid(table.column("seq")),
                                       pc.greater_equal(table.column("seq"), 0)))
    cluster = pc.fill_null(table.column("cluster"), ET.DEFAULT_CLUSTER)
    fingerprint = pc.binary_join_element_wise(
        *[_as_text(table.column(c)) for c in CONTENT], "|")
    ts_us = pc.cast(pc.cast(table.column("ts"), pa.timestamp("us", tz="UTC")), pa.int64())
    columns = [cluster, *[table.column(c) for c in SCOPE[1:]], ts_us, fingerprint,
               table.column("unclean_leader_election")]
    return pa.table([pc.cast(c, NARROW_TYPES[n]) for n, c in zip(NARROW, columns, strict=True)],
                    names=list(NARROW))


def concat_narrow(tables: list[pa.Table]) -> pa.Table:
    """Narrow tables as one (an empty one of the right columns when there are none)."""
    if tables:
        return pa.concat_tables(tables).combine_chunks()
    return pa.table({c: pa.array([], t) for c, t in NARROW_TYPES.items()})


def _gaps(seqs: np.ndarray, previous: int | None) -> list[tuple[int, int]]:
    """Missing ranges between consecutive distinct seqs (sorted), and between the
    previous runs' last seq and this run's first."""
    out = []
    if previous is not None and seqs.size and seqs[0] > previous + 1:
        out.append((previous + 1, int(seqs[0]) - 1))
    steps = np.flatnonzero(np.diff(seqs) > 1)
    out += [(int(seqs[i]) + 1, int(seqs[i + 1]) - 1) for i in steps]
    return out


def _per_seq(rows: pa.Table) -> pa.Table:
    """One row per distinct seq, in seq order: how many event families it holds, and its
    earliest and latest time (one pass: the log's distinct seqs come with it)."""
    families = pc.coalesce(
        pc.take(pa.array(list(FAMILY.values())),
                pc.index_in(rows.column("event_type"), pa.array(list(FAMILY)))),
        rows.column("event_type"))
    return pa.table({"seq": rows.column("seq"), "family": families,
                     "ts_us": rows.column("ts_us")}) \
        .group_by("seq").aggregate([("family", "count_distinct"), ("ts_us", "min"),
                                    ("ts_us", "max")]).sort_by("seq")


def _conflicts(rows: pa.Table, per_seq: pa.Table) -> set[int]:
    """Seqs with two event families, or one scope with two contents."""
    seqs = set(per_seq.filter(pc.greater(per_seq.column("family_count_distinct"), 1))
               .column("seq").to_pylist())
    by_scope = rows.group_by(list(SCOPE[1:])).aggregate([("fingerprint", "count_distinct")])
    seqs |= set(by_scope.filter(pc.greater(by_scope.column("fingerprint_count_distinct"), 1))
                .column("seq").to_pylist())
    return seqs


def _ts_backwards(per_seq: pa.Table, tolerance_us: int) -> list[int]:
    """Seqs whose earliest time is more than `tolerance_us` before the latest time of an
    earlier seq (the controller handles events in seq order, so time only moves on).
    A seq without a time neither regresses nor moves time on."""
    earliest = pc.fill_null(per_seq.column("ts_us_min"), np.iinfo(np.int64).max).to_numpy()
    latest = pc.fill_null(per_seq.column("ts_us_max"), np.iinfo(np.int64).min).to_numpy()
    if earliest.size < 2:
        return []
    before = np.maximum.accumulate(latest)[:-1]
    # No earlier time at all: nothing to run back from (and `before - tolerance_us` would
    # wrap around below the smallest int64).
    timed = before > np.iinfo(np.int64).min
    regress = np.flatnonzero(timed & (earliest[1:] < before - tolerance_us)) + 1
    return [int(s) for s in per_seq.column("seq").to_numpy()[regress]]


def _applied_times(rows: pa.Table, conflicting: set[int],
                   ts_range: tuple[int | None, int | None]) -> pa.Table:
    """The rows whose time the replay uses: a row quarantined for an implausible time has
    none (its time neither regresses nor moves time on), a conflicting seq none at all
    (both of its rows are quarantined)."""
    if conflicting:
        rows = rows.filter(pc.invert(pc.is_in(rows.column("seq"),
                                              pa.array(sorted(conflicting), pa.int64()))))
    low, high = ts_range
    ts = rows.column("ts_us")
    outside = pc.or_kleene(pc.less(ts, low if low is not None else np.iinfo(np.int64).min),
                           pc.greater(ts, high if high is not None else np.iinfo(np.int64).max))
    kept = pc.if_else(pc.fill_null(outside, False), pa.scalar(None, ts.type), ts)
    return rows.set_column(rows.schema.get_field_index("ts_us"), "ts_us", kept)


def cluster_facts(rows: pa.Table, previous: int | None, applied_through: int | None,
                  tolerance_us: int,
                  ts_range: tuple[int | None, int | None] = (None, None)) -> SeqFacts:
    """The facts of one cluster's narrow rows (`narrow`), given the highest seq the
    committed runs saw and applied. Time running backwards is judged on the rows the
    replay applies: not on those quarantined for their time (`ts_range`, the plausible
    times) or as conflicting."""
    per_seq = _per_seq(rows)
    seqs = per_seq.column("seq").to_numpy()
    if not seqs.size:
        return SeqFacts(previous_seq_max=previous)
    late = seqs[seqs <= applied_through] if applied_through is not None else seqs[:0]
    baseline = previous if previous is not None else applied_through
    beyond = seqs[seqs > baseline] if baseline is not None else seqs
    conflicting = _conflicts(rows, per_seq)
    backwards = _ts_backwards(_per_seq(_applied_times(rows, conflicting, ts_range)),
                              tolerance_us)
    return SeqFacts(
        seq_min=int(seqs[0]), seq_max=int(seqs[-1]), previous_seq_max=baseline,
        gaps=tuple(_gaps(beyond, baseline)),
        late=(int(late[0]), int(late[-1])) if late.size else None,
        conflicting=tuple(sorted(conflicting)),
        ts_backwards=tuple(backwards[:LISTED]), ts_backwards_count=len(backwards),
        requested=requested(rows, applied_through),
    )


def log_facts(rows: pa.Table, previous: dict[str, int], applied_through: dict[str, int],
              tolerance_us: int,
              ts_range: tuple[int | None, int | None] = (None, None)) -> dict[str, SeqFacts]:
    """`cluster_facts` of every cluster of the narrow rows."""
    out = {}
    clusters = sorted(pc.unique(rows.column("cluster")).to_pylist())
    for cluster in clusters:
        # One cluster (the usual log) needs no copy of its rows.
        mine = rows if len(clusters) == 1 else rows.filter(
            pc.equal(rows.column("cluster"), cluster))
        out[cluster] = cluster_facts(mine, previous.get(cluster), applied_through.get(cluster),
                                     tolerance_us, ts_range)
    return out
