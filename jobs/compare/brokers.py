"""The registered brokers Kafka logged, held against the replay's broker timeline.

Kafka prints the registered brokers on a controller failover (`Currently active brokers in
the cluster`) and on a BrokerChange (`all live brokers`); at the same seq the replay's
broker_timeline says which brokers are live or shutting down. Pure Python.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from jobs.compare.values import Row, value

# Observation kinds that list the registered brokers.
BROKER_KINDS = frozenset({"failover_brokers", "live_brokers"})
# Broker states of the replay in which the broker is still registered in ZooKeeper.
_REGISTERED = ("live", "shutting_down")

Ints = tuple[int, ...]


class BrokerRow(NamedTuple):
    """A row of `brokers/`."""

    cluster: str
    seq: int
    source: str | None
    kind: str
    observed: Ints
    replayed: Ints
    agree: bool
    missing_in_replay: Ints
    extra_in_replay: Ints


BROKER_COLUMNS: tuple[str, ...] = BrokerRow._fields


class BrokerInterval(NamedTuple):
    """A row of broker_timeline: `status` over [seq_from, seq_to) (seq_to None: open)."""

    broker_id: int
    status: str
    seq_from: int
    seq_to: int | None


def compare_brokers(cluster: str, observed: Iterable[Row],
                    intervals: Iterable[Row]) -> list[BrokerRow]:
    """Kafka's registered brokers vs the replay's live + shutting-down brokers after the
    same seq. `observed`: observations of BROKER_KINDS; `intervals`: rows of
    broker_timeline."""
    timeline = [BrokerInterval(value(r["broker_id"]), r["status"], value(r["seq_from"]),
                               value(r["seq_to"])) for r in intervals]
    rows: list[BrokerRow] = []
    for o in sorted(observed, key=lambda o: (value(o["seq"]), value(o["pos"]))):
        seq = value(o["seq"])
        want = tuple(sorted(value(o["brokers"]) or ()))
        got = tuple(sorted({i.broker_id for i in timeline if i.status in _REGISTERED
                            and i.seq_from <= seq and (i.seq_to is None or seq < i.seq_to)}))
        rows.append(BrokerRow(cluster, seq, o.get("source"), o["kind"], want, got, want == got,
                              missing_in_replay=tuple(b for b in want if b not in got),
                              extra_in_replay=tuple(b for b in got if b not in want)))
    return rows
