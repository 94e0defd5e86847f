"""What a scenario is checked against: the log's clusters, brokers, topics, seqs and times.

Read before Spark starts, with pyarrow, from the few columns that hold them (never the
whole log), one record batch at a time: a variant that names a broker or topic the log
never mentions, or a seq it does not have, is refused in seconds. A log pyarrow cannot list
(a file system only Hadoop opens) is read through Spark instead (`facts_from_spark`), once
the session exists.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jobs.common.exitcodes import BadInput
from jobs.engine.event_log import event_files, read_events
from jobs.store.filesystem import arrow_filesystem
from schemas import event_types as ET
from schemas.arrow import arrow_schema
from schemas.events import EVENT_SCHEMA
from schemas.whatif import VARIANT_SEPARATOR
from statemachine.events import Event

COLUMNS = ("cluster", "seq", "ts", "event_type", "broker_id", "topic", "partition", "replicas",
           "isr", "brokers")
# The columns a `drop` entry can name, kept per row (sorted by seq) to match drops against.
ROW_COLUMNS = ("seq", "ts", "event_type", "broker_id", "topic", "partition", "brokers")
# A broker's own events, which a variant holding it dead takes out of the log
# (`jobs.whatif.consistency`), and the failovers whose live brokers it edits.
BROKER_OWN_EVENTS = frozenset({ET.BROKER_STARTUP, ET.BROKER_FAILURE, ET.CONTROLLED_SHUTDOWN,
                               ET.STOP_REPLICA_RESPONSE})
BROKER_EVENTS = BROKER_OWN_EVENTS | {ET.CONTROLLER_FAILOVER}
BROKER_LISTS = ("replicas", "isr", "brokers")


def _iso(us: int) -> str:
    return datetime.fromtimestamp(us / 1_000_000, UTC).isoformat(
        timespec="seconds").replace("+00:00", "Z")


class LogError(BadInput):
    """The log cannot take a what-if (a cluster name holding the separator)."""


@dataclass
class ClusterFacts:
    """One cluster of the log: what it mentions and its seqs with their times."""

    brokers: set[int] = field(default_factory=set)
    topics: set[str] = field(default_factory=set)
    seqs: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # sorted
    times: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per seq
    # The rows (ROW_COLUMNS, ts as microseconds) in the order of `seqs`.
    rows: pa.Table = field(default_factory=lambda: pa.table({c: [] for c in ROW_COLUMNS}))
    # The broker events (BROKER_EVENTS) in seq order, brokers as tuples.
    broker_events: list[Event] = field(default_factory=list)

    @property
    def end_ts(self) -> int | None:
        """The log's last event time (microseconds): where an open window is counted to."""
        return int(self.times.max()) if len(self.times) else None

    @property
    def start_ts(self) -> int | None:
        """The log's first event time (microseconds)."""
        return int(self.times.min()) if len(self.times) else None

    def outside(self, at: int) -> str | None:
        """Why an event cannot be injected `at` (microseconds), or None: a time outside the
        log's range would replay a log that is not this one (nothing after it to judge, or
        a failure before the cluster the log knows existed)."""
        start, end = self.start_ts, self.end_ts
        if start is not None and end is not None and start <= at <= end:
            return None
        span = "no event time" if start is None or end is None else \
            f"events from {_iso(start)} to {_iso(end)}"
        return (f"at {_iso(at)} is outside the log's time range ({span}); give a time "
                "inside it, or after_seq")

    def has_seq(self, seq: int) -> bool:
        i = int(np.searchsorted(self.seqs, seq))
        return i < len(self.seqs) and int(self.seqs[i]) == seq

    def ts_of(self, seq: int) -> int:
        """The latest time of the rows with this seq (the seq must exist)."""
        lo, hi = np.searchsorted(self.seqs, seq), np.searchsorted(self.seqs, seq, "right")
        return int(self.times[lo:hi].max())

    def rows_of_seq(self, seq: int) -> tuple[int, int]:
        """The [start, stop) range of the rows with this seq."""
        return (int(np.searchsorted(self.seqs, seq)),
                int(np.searchsorted(self.seqs, seq, "right")))

    def last_seq_at(self, at: int) -> int:
        """The highest seq of an event at or before `at`; -1 when none is."""
        before = self.seqs[self.times <= at]
        return int(before.max()) if len(before) else -1


@dataclass
class LogFacts:
    clusters: dict[str, ClusterFacts]

    @property
    def all_brokers(self) -> set[int]:
        return set().union(*(c.brokers for c in self.clusters.values()))


def _ints(column: pa.ChunkedArray | pa.Array) -> set[int]:
    values = pc.unique(pc.drop_null(column))
    return {v for v in values.to_pylist() if v >= 0}


@dataclass
class _Gathered:
    """One cluster's facts as the log's batches stream past: the sets, and its timed rows
    (ROW_COLUMNS only: the broker lists a drop never names stay out)."""

    brokers: set[int] = field(default_factory=set)
    topics: set[str] = field(default_factory=set)
    timed: list[pa.Table] = field(default_factory=list)


def _gather(gathered: dict[str, _Gathered], batch: pa.RecordBatch) -> None:
    table = pa.Table.from_batches([batch])
    clusters = pc.fill_null(table.column("cluster"), ET.DEFAULT_CLUSTER)
    table = table.set_column(table.schema.get_field_index("cluster"), "cluster", clusters)
    for name in pc.unique(clusters).to_pylist():
        mine = table.filter(pc.equal(table.column("cluster"), name))
        got = gathered.setdefault(name, _Gathered())
        got.brokers |= _ints(mine.column("broker_id"))
        for column in BROKER_LISTS:
            got.brokers |= _ints(pc.list_flatten(mine.column(column)))
        got.topics |= set(pc.unique(pc.drop_null(mine.column("topic"))).to_pylist())
        known = pc.is_in(mine.column("event_type"), value_set=pa.array(sorted(ET.ALL_EVENTS)))
        got.timed.append(mine.filter(pc.and_(pc.and_(pc.is_valid(mine.column("seq")),
                                                     pc.is_valid(mine.column("ts"))), known))
                         .select(list(ROW_COLUMNS)))


def _cluster_facts(got: _Gathered) -> ClusterFacts:
    facts = ClusterFacts(brokers=got.brokers, topics=got.topics)
    timed = pa.concat_tables(got.timed)
    seqs = timed.column("seq").to_numpy().astype(np.int64)
    times = pc.cast(timed.column("ts"), pa.int64()).to_numpy().astype(np.int64)
    order = np.argsort(seqs, kind="stable")
    facts.seqs, facts.times = seqs[order], times[order]
    rows = timed.select([c for c in ROW_COLUMNS if c != "ts"]).take(pa.array(order))
    facts.rows = rows.add_column(1, "ts", pa.array(facts.times))
    facts.broker_events = _broker_events(facts.rows)
    return facts


def _broker_events(rows: pa.Table) -> list[Event]:
    mine = rows.filter(pc.is_in(rows.column("event_type"),
                                value_set=pa.array(sorted(BROKER_EVENTS))))
    return [Event(seq=r["seq"], ts=r["ts"], event_type=r["event_type"],
                  broker_id=r["broker_id"], brokers=None if r["brokers"] is None
                  else tuple(r["brokers"]))
            for r in mine.to_pylist()]


def facts_of_batches(batches: Iterable[pa.RecordBatch]) -> LogFacts:
    """The facts of the log's needed columns (null cluster: the default cluster), gathered
    one record batch at a time: the driver keeps the sets and each cluster's timed rows'
    ROW_COLUMNS, never the whole batch of every column."""
    gathered: dict[str, _Gathered] = {}
    for batch in batches:
        _gather(gathered, batch)
    names = sorted(gathered)
    bad = [c for c in names if VARIANT_SEPARATOR in c]
    if bad:
        raise LogError(f"cluster name {bad[0]!r} holds {VARIANT_SEPARATOR!r}, which the what-if "
                       "uses to join a cluster and a variant")
    return LogFacts({name: _cluster_facts(gathered[name]) for name in names})


def facts_of_table(table: pa.Table) -> LogFacts:
    """The facts of the log's needed columns as one table."""
    return facts_of_batches(table.to_batches())


def _needed_schema() -> pa.Schema:
    full = arrow_schema(EVENT_SCHEMA)
    return pa.schema([full.field(c) for c in COLUMNS])


def facts_from_arrow(events_dir: str) -> LogFacts | None:
    """The facts read with pyarrow, or None when pyarrow cannot list the directory."""
    files = event_files(events_dir)
    resolved = arrow_filesystem(events_dir)
    if files is None or resolved is None:
        return None
    if not files:
        return LogFacts({})
    dataset = ds.dataset(files, schema=_needed_schema(), format="parquet",
                         filesystem=resolved[0])
    return facts_of_batches(dataset.to_batches(columns=list(COLUMNS)))


def facts_from_spark(spark: SparkSession, events_dir: str) -> LogFacts:
    """The same facts read through Spark (for a log pyarrow cannot open)."""
    df = read_events(spark, events_dir).select(*COLUMNS)
    table = df.withColumn("ts", F.col("ts")).toArrow()
    return facts_of_table(table.cast(_needed_schema()))
