"""An incident's cause in words, as the audit's post-mortem and the report both print it
(pure): "BrokerFailure of brokers 3, 5 (broker 3: 1 partition(s), 86.0 partition-seconds
offline (9%), back after 86.0 s; broker 5: ...)". One `BrokerChange` (ZooKeeper's
/brokers/ids watch, `KafkaController.processBrokerChange`) or one failover may lose several
brokers at once; the `incidents` row names each (`brokers`), with its share.

A `ControllerFailover` incident names the broker whose loss the new controller found (the
dead controller when it led the partitions). When the failover lost no broker the windows
name the new controller (`statemachine.windows.failover_cause`): given the controller the
failover elected (`controller_timeline`), the line says "ControllerFailover to broker 2 (no
broker lost)" rather than that broker 2 was lost.

A KRaft incident's cause is a metadata record; the line says what it did to the broker, as an
operator reads it: "broker 2 fenced (FenceBrokerRecord)", "broker 2 in controlled shutdown
(BrokerRegistrationChangeRecord)".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

CONTROLLER_FAILOVER = "ControllerFailover"
# A KRaft broker record (its registration change with the effect the fold read from its
# fields: `statemachine.kraft.fold`) -> what it did to the broker.
KRAFT_BROKER_WORDS = {
    "RegisterBrokerRecord": "registered",
    "UnregisterBrokerRecord": "unregistered",
    "FenceBrokerRecord": "fenced",
    "UnfenceBrokerRecord": "unfenced",
    "BrokerRegistrationChangeRecord(fenced)": "fenced",
    "BrokerRegistrationChangeRecord(unfenced)": "unfenced",
    "BrokerRegistrationChangeRecord(in controlled shutdown)": "in controlled shutdown",
    "BrokerRegistrationChangeRecord(unchanged)": "registration changed",
}


def _brokers(shares: Sequence[Mapping[str, Any]] | None) -> list[Mapping[str, Any]]:
    return sorted(shares or [], key=lambda b: int(b["broker_id"]))


def cause_text(event: str | None, broker: int | None,
               shares: Sequence[Mapping[str, Any]] | None = None,
               new_controller: int | None = None) -> str:
    """"BrokerFailure of broker 3", "BrokerFailure of brokers 3, 5", or the event alone
    when it names no broker; a failover says the broker was lost, not elected
    (`new_controller`: the broker it elected, when known); a KRaft broker record says what
    it did to the broker."""
    what = event or "an unknown event"
    ids = [int(b["broker_id"]) for b in _brokers(shares)] or \
        ([] if broker is None else [broker])
    if not ids:
        return what
    named = f"broker {ids[0]}" if len(ids) == 1 else \
        "brokers " + ", ".join(str(i) for i in ids)
    if event == CONTROLLER_FAILOVER:
        if new_controller is not None and ids == [new_controller]:
            return f"{what} to broker {new_controller} (no broker lost)"
        return f"{what} that found {named} lost"
    if what in KRAFT_BROKER_WORDS:
        return f"{named} {KRAFT_BROKER_WORDS[what]} ({what.split('(')[0]})"
    return f"{what} of {named}"


def shares_text(shares: Sequence[Mapping[str, Any]] | None, offline_total: float | None,
                open_at_end: str = "still out at the run's end") -> str:
    """Each broker's share of a multi-broker incident, "" for one broker (the line says it
    all). The percentage is of the incident's offline partition-seconds."""
    brokers = _brokers(shares)
    if len(brokers) < 2:
        return ""
    total = float(offline_total or 0.0)
    parts = []
    for b in brokers:
        offline = float(b["offline_partition_seconds"] or 0.0)
        share = f" ({100.0 * offline / total:.0f}%)" if total > 0 else ""
        back = open_at_end if b["seconds"] is None else f"back after {b['seconds']:.1f} s"
        parts.append(f"broker {b['broker_id']}: {b['partitions']} partition(s), "
                     f"{offline:.1f} partition-seconds offline{share}, {back}")
    return "; ".join(parts)
