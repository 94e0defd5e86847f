"""Incidents: the controller events that made partitions unwritable, each with the windows
it opened rolled up (`incidents` rows).

An on-call engineer asks "what broke, how wide, for how long, what fixed it". The windows
(`statemachine.windows`) answer per partition; an incident answers per controller event.
An incident is the event at seq S after which at least one partition went `offline` or
`under_min_isr` (a `BrokerFailure`, a `ControlledShutdown`, a `ControllerFailover` that
found brokers gone, an `IsrChanged` that shrank the ISR below min.insync.replicas, ...);
its windows are the `offline` and `under_min_isr` windows that opened at S
(`windows.incident_of`: the window's `incident_id` is S). A window's incident is a
function of the window alone, so every replay group finds the same one for its own
topics without knowing the others, and reruns and nightly runs agree on it.

Because a group holds whole topics, the windows of one incident are spread over every
group whose topics the event touched; the roll-up runs after the replay over all of them:

* `peak_partitions_offline`: the most partitions in `offline` windows of the incident at
  once (a sweep over their start and end seqs);
* `partitions_affected`, `topics_affected`: partitions and topics with a window of it;
* `offline_partition_seconds`, `under_min_isr_partition_seconds`: the sum of its windows'
  durations, a window still open counted up to `as_of` (the latest event time read);
* `end_seq` / `end_ts` / `seconds`: when its last window closed, null while one is open;
* `recovery_event` / `recovery_broker`: the event that closed its last window (`end_event`,
  `end_broker`), the first by (topic, partition, kind) when several closed at that seq;
* `cause_event` / `cause_broker`: the (event, broker) its windows name most often, the
  lowest broker on a tie. The windows of one seq name different brokers only when one
  broker change covered several brokers, or a failover found several gone: each window
  names the broker its partition lost (`windows.step_cause`), so a controller's death found
  at the failover names the dead broker, not the new controller;
* `brokers`: every broker its windows name, each with its share: its partitions, their
  offline and under-min-ISR partition-seconds, and the seconds from the incident's start
  to its last window's end (one broker may be back in a minute while another is the
  incident's length);
* `unclean_elections`: `unclean_leader_election` findings of its partitions from S to its
  end (the election that ends an offline window by electing an out-of-sync replica is the
  data loss);
* `worst_topics`: the TOP_TOPICS topics with the most offline, then under-min-ISR,
  partition-seconds.

A window open at the end of one run is written again, closed, by the run that ends it;
`latest_windows` keeps one row per window, the closed one when there is one.
Times are microseconds (the job reads them so); the module imports only the model and the
rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from statemachine.model import INCIDENT_KINDS, OFFLINE, UNDER_MIN_ISR
from statemachine.rows import (
    BrokerShare,
    FindingRow,
    IncidentRow,
    PartitionWindowRow,
    TopicSeconds,
)

TOP_TOPICS = 5
UNCLEAN_ELECTION = "unclean_leader_election"  # the finding kind (`partition_machine`)


class Election(NamedTuple):
    """An unclean leader election finding: where and when."""

    seq: int
    topic: str
    partition: int


def elections_of(findings: Iterable[FindingRow]) -> list[Election]:
    """The unclean leader elections among `findings`."""
    return [Election(f.seq, f.topic, f.partition) for f in findings
            if f.kind == UNCLEAN_ELECTION and f.seq is not None and f.topic is not None
            and f.partition is not None]


def window_key(w: PartitionWindowRow) -> tuple[str, int, str, int]:
    return w.topic, w.partition, w.kind, w.start_seq


def incident_id(w: PartitionWindowRow) -> int | None:
    """The window's incident (rows written before the column existed have none stored:
    the seq that opened it names it all the same)."""
    if w.kind not in INCIDENT_KINDS:
        return None
    return w.incident_id if w.incident_id is not None else w.start_seq


def latest_windows(rows: Iterable[PartitionWindowRow]) -> list[PartitionWindowRow]:
    """One row per window of an incident: the closed row when some run closed it, else
    the open one (every run that saw it open wrote it open)."""
    kept: dict[tuple[str, int, str, int], PartitionWindowRow] = {}
    for w in rows:
        if incident_id(w) is None:
            continue
        key = window_key(w)
        if key not in kept or (kept[key].end_seq is None and w.end_seq is not None):
            kept[key] = w
    return [kept[k] for k in sorted(kept)]


def window_us(w: PartitionWindowRow, as_of: int | None) -> int:
    """A window's duration in microseconds; an open one up to `as_of` (none: 0)."""
    end = w.end_ts if w.end_seq is not None else as_of
    if end is None or w.start_ts is None:
        return 0
    return max(int(end) - int(w.start_ts), 0)


def peak_offline(windows: list[PartitionWindowRow]) -> int:
    """The most `offline` windows open at once. At one seq the closings come first: a
    partition whose window closes at the event that opens another's is not offline twice."""
    edges = sorted([(w.start_seq, 1) for w in windows if w.kind == OFFLINE]
                   + [(w.end_seq, -1) for w in windows
                      if w.kind == OFFLINE and w.end_seq is not None])
    peak = now = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def _cause(windows: list[PartitionWindowRow]) -> tuple[str | None, int | None]:
    counts = Counter((w.cause_event, w.cause_broker) for w in windows)
    return min(counts, key=lambda c: (-counts[c], c[1] is None, c[1] or 0, c[0] or ""))


def _worst(windows: list[PartitionWindowRow], as_of: int | None) -> tuple[TopicSeconds, ...]:
    by_topic: dict[str, list[int]] = {}
    for w in windows:
        sums = by_topic.setdefault(w.topic, [0, 0])
        sums[0 if w.kind == OFFLINE else 1] += window_us(w, as_of)
    ranked = sorted(by_topic.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))
    return tuple(TopicSeconds(t, s[0] / 1e6, s[1] / 1e6) for t, s in ranked[:TOP_TOPICS])


def broker_shares(windows: list[PartitionWindowRow], start_ts: int | None,
                  as_of: int | None) -> tuple[BrokerShare, ...]:
    """Each broker the windows name (`cause_broker`), by broker id, with its share."""
    by_broker: dict[int, list[PartitionWindowRow]] = {}
    for w in windows:
        if w.cause_broker is not None:
            by_broker.setdefault(w.cause_broker, []).append(w)
    shares = []
    for broker in sorted(by_broker):
        mine = by_broker[broker]
        offline = sum(window_us(w, as_of) for w in mine if w.kind == OFFLINE)
        under = sum(window_us(w, as_of) for w in mine if w.kind == UNDER_MIN_ISR)
        closed = all(w.end_seq is not None and w.end_ts is not None for w in mine)
        seconds = None if start_ts is None or not closed else \
            max(int(w.end_ts) - int(start_ts) for w in mine) / 1e6
        shares.append(BrokerShare(broker, len({(w.topic, w.partition) for w in mine}),
                                  offline / 1e6, under / 1e6, seconds))
    return tuple(shares)


def roll_up(iid: int, windows: list[PartitionWindowRow], elections: Iterable[Election],
            as_of: int | None) -> IncidentRow:
    """One incident from all its windows (`latest_windows`)."""
    first = windows[0]
    cause_event, cause_broker = _cause(windows)
    still_open = any(w.end_seq is None for w in windows)
    last = None if still_open else min(windows, key=lambda w: (-(w.end_seq or 0),
                                                               window_key(w)))
    end_seq = None if last is None else last.end_seq
    end_ts = None if last is None else last.end_ts
    parts = {(w.topic, w.partition) for w in windows}
    unclean = sum(1 for e in elections if (e.topic, e.partition) in parts
                  and iid <= e.seq and (end_seq is None or e.seq <= end_seq))
    seconds = {OFFLINE: 0, UNDER_MIN_ISR: 0}
    for w in windows:
        seconds[w.kind] += window_us(w, as_of)
    return IncidentRow(
        iid, cause_event, cause_broker, iid, first.start_ts, end_ts, end_seq,
        None if end_ts is None or first.start_ts is None
        else (int(end_ts) - int(first.start_ts)) / 1e6,
        peak_offline(windows), len(parts), len({t for t, _ in parts}),
        seconds[OFFLINE] / 1e6, seconds[UNDER_MIN_ISR] / 1e6, unclean,
        None if last is None else last.end_event, None if last is None else last.end_broker,
        _worst(windows, as_of), broker_shares(windows, first.start_ts, as_of))


def incidents(rows: Iterable[PartitionWindowRow], elections: Iterable[Election] = (),
              as_of: int | None = None) -> list[IncidentRow]:
    """The incidents of one cluster's windows (any runs' rows: see `latest_windows`),
    by incident id."""
    by_id: dict[int, list[PartitionWindowRow]] = {}
    for w in latest_windows(rows):
        iid = incident_id(w)
        assert iid is not None
        by_id.setdefault(iid, []).append(w)
    by_part: dict[tuple[str, int], list[Election]] = {}
    for e in elections:
        by_part.setdefault((e.topic, e.partition), []).append(e)

    def on_parts(windows: list[PartitionWindowRow]) -> list[Election]:
        parts = sorted({(w.topic, w.partition) for w in windows})
        return [e for part in parts for e in by_part.get(part, ())]

    return [roll_up(iid, by_id[iid], on_parts(by_id[iid]), as_of) for iid in sorted(by_id)]


def of_run(rows: Iterable[PartitionWindowRow], run_rows: Iterable[PartitionWindowRow],
           elections: Iterable[Election] = (), as_of: int | None = None) -> list[IncidentRow]:
    """The incidents a run lists: those with a window row of the run (`run_rows`) and
    those still open, rolled up over the windows of every run so far (`rows`, which holds
    `run_rows`). An incident with nothing new in a run keeps its row of the last run
    that listed it, so each incident's row of the latest run that lists it is the row one
    replay of every night gives."""
    touched = {iid for iid in map(incident_id, run_rows) if iid is not None}
    return [i for i in incidents(rows, elections, as_of)
            if i.incident_id in touched or i.end_seq is None]
