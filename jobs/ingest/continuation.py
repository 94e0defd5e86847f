"""`jobs.ingest --continue-from EVENTS`: a night's controller logs continue the event log
the replay already reads, instead of numbering seqs from 1 again.

The seq is the controller's queue position, consecutive within a cluster
(`ControllerEventManager` takes one event at a time), and the replay holds a night whose
seqs start at or below what its checkpoint applied as late (`late_events`). A text log
carries no queue position, so each ingest counts from 1: without this option every night
after the first would be late. With it:

* The cluster's events already in EVENTS (every night ingested before, as the replay's
  `--events` folder holds them) give the last seq and the last event time.
* An event of these logs that is already there (the same time, type, scope and content; the
  `source` may differ, a rotated file has another name) is recognised and not written
  again: ingesting a night twice, or files that overlap the last night (the rotated files of
  the last two days), writes only what is new. Its observations keep the seq it has there.
* The new events take the seqs after the last one, in their order: a night ingested alone
  numbers its events as ingesting every night at once would.
* A new event at or before the last event time (a night delivered after a later one, or a
  log of another cluster) cannot be numbered into the past: the run is refused (exit 2)
  with the remedy, ingest every night at once into a new folder and replay it with
  `--rebuild`.

A missing night leaves no hole in seqs made this way; the log line of each run names the
time between the last event and the first new one, so a schedule that skipped a night
shows it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.common.exitcodes import BadInput
from jobs.store.filesystem import path_exists
from schemas.events import EVENT_SCHEMA

logger = logging.getLogger(__name__)

# What makes two rows the same event, whatever file and line they were read from.
IDENTITY = tuple(f.name for f in EVENT_SCHEMA.fields
                 if f.name not in ("cluster", "seq", "source"))


@dataclass(frozen=True)
class Before:
    """The cluster's log in EVENTS: its last seq and event time (microseconds)."""

    last_seq: int = 0
    last_ts: int | None = None


@dataclass(frozen=True)
class NewSeq:
    """One seq of this ingest: its first time, and the seq of the same event in EVENTS
    when every row of it is there."""

    seq: int
    ts: int
    known_as: int | None = None


@dataclass(frozen=True)
class Plan:
    """Each seq of this ingest -> its seq in the continued log; the recognised ones are not
    written again."""

    seqs: dict[int, int] = field(default_factory=dict)
    known: frozenset[int] = frozenset()
    first_new_ts: int | None = None

    @property
    def new_count(self) -> int:
        return len(self.seqs) - len(self.known)


def plan(seqs: Iterable[NewSeq], before: Before, events_dir: str) -> Plan:
    """Recognised seqs keep their seq in EVENTS; the others follow its last seq in order.
    A new seq earlier than EVENTS' last event is refused (BadInput, exit 2)."""
    ordered = sorted(seqs, key=lambda s: s.seq)
    mapping: dict[int, int] = {}
    known: set[int] = set()
    fresh = [s for s in ordered if s.known_as is None]
    if before.last_ts is not None:
        early = [s for s in fresh if s.ts < before.last_ts]
        if early:
            raise BadInput(
                f"--continue-from {events_dir}: {len(early)} event(s) of these logs are older "
                f"than the last event already there (seq {before.last_seq}) and not in it, "
                f"the first at {_iso(early[0].ts)}: a night delivered after a later one, or "
                "another cluster's log. Seqs cannot be numbered into the past: ingest every "
                "night's logs at once (without --continue-from) into a new events folder and "
                "replay it with --rebuild")
    for s in ordered:
        if s.known_as is not None:
            mapping[s.seq] = s.known_as
            known.add(s.seq)
    for i, s in enumerate(fresh, start=1):
        mapping[s.seq] = before.last_seq + i
    return Plan(mapping, frozenset(known), fresh[0].ts if fresh else None)


def _iso(ts_us: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ts_us / 1e6, UTC).isoformat(timespec="seconds")


def _fingerprint() -> Column:
    cols = [F.unix_micros("ts").alias("ts") if c == "ts" else F.col(c) for c in IDENTITY]
    return F.sha2(F.to_json(F.struct(*cols)), 256)


def existing_events(spark: SparkSession, events_dir: str, cluster: str) -> DataFrame | None:
    """The cluster's rows of EVENTS (None: no such folder yet, the first night)."""
    if not path_exists(events_dir):
        return None
    return spark.read.schema(EVENT_SCHEMA).option("recursiveFileLookup", "true").parquet(
        events_dir).where(
        F.col("cluster") == cluster)


def _before(existing: DataFrame | None) -> Before:
    if existing is None:
        return Before()
    row = existing.agg(F.max("seq").alias("seq"), F.max(F.unix_micros("ts")).alias("ts")).first()
    if row is None or row["seq"] is None:
        return Before()
    return Before(int(row["seq"]), int(row["ts"]))


def new_seqs(events: DataFrame, existing: DataFrame | None) -> list[NewSeq]:
    """Every seq of this ingest, with the seq of the same event in EVENTS when all its rows
    are there (one Spark join on the rows' fingerprints, only over EVENTS' rows from this
    ingest's first time on)."""
    mine = events.withColumn("fp", _fingerprint())
    if existing is not None:
        start = events.agg(F.min("ts")).first()
        old = existing.where(F.col("ts") >= start[0]) if start and start[0] else existing
        theirs = old.select(_fingerprint().alias("fp"), F.col("seq").alias("known_as")) \
            .groupBy("fp").agg(F.max("known_as").alias("known_as"))
        mine = mine.join(theirs, "fp", "left")
    else:
        mine = mine.withColumn("known_as", F.lit(None).cast("long"))
    rows = mine.groupBy("seq").agg(
        F.min(F.unix_micros("ts")).alias("ts"),
        F.min(F.col("known_as").isNotNull().cast("int")).alias("all_known"),
        F.max("known_as").alias("known_as")).collect()
    return [NewSeq(int(r["seq"]), int(r["ts"]),
                   int(r["known_as"]) if r["all_known"] else None) for r in rows]


@dataclass(frozen=True)
class Continued:
    events: DataFrame  # only the new events, their seqs following EVENTS'
    observed: DataFrame  # every observation, its seq the continued log's
    before: Before
    plan: Plan


def continue_log(spark: SparkSession, events: DataFrame, observed: DataFrame,
                 events_dir: str, cluster: str,
                 log: Callable[[str], object] = logger.info) -> Continued:
    """The night's tables renumbered to follow EVENTS (see the module's docstring)."""
    existing = existing_events(spark, events_dir, cluster)
    before = _before(existing)
    chosen = plan(new_seqs(events, existing), before, events_dir)
    # Observations before the first event of these logs follow EVENTS' last event.
    pairs = [(0, before.last_seq, False), *((s, t, s in chosen.known)
                                            for s, t in sorted(chosen.seqs.items()))]
    mapping = F.broadcast(spark.createDataFrame(
        pairs, "seq long, new_seq long, known boolean"))
    new_events = (events.join(mapping, "seq").where(~F.col("known"))
                  .withColumn("seq", F.col("new_seq"))
                  .select(*EVENT_SCHEMA.fieldNames()).to(EVENT_SCHEMA))
    columns = observed.columns
    new_observed = (observed.join(mapping, "seq", "left")
                    .withColumn("seq", F.coalesce("new_seq", "seq"))
                    .select(*columns).to(observed.schema))
    log(_summary(events_dir, before, chosen))
    return Continued(new_events, new_observed, before, chosen)


def _summary(events_dir: str, before: Before, chosen: Plan) -> str:
    if before.last_ts is None:
        return f"--continue-from {events_dir}: no events of the cluster there yet, seqs from 1"
    known = f"{len(chosen.known)} event(s) already there, not written again; "
    if chosen.first_new_ts is None:
        return (f"--continue-from {events_dir}: {known}nothing new after seq "
                f"{before.last_seq} ({_iso(before.last_ts)})")
    gap_h = (chosen.first_new_ts - before.last_ts) / 3.6e9
    return (f"--continue-from {events_dir}: {known}{chosen.new_count} new event(s) follow "
            f"seq {before.last_seq} (last event {_iso(before.last_ts)}) from seq "
            f"{before.last_seq + 1} ({_iso(chosen.first_new_ts)}, {gap_h:.1f} h later)")
