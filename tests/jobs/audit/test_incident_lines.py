"""One post-mortem line per incident (`jobs.audit.incidents.incident_line`), without Spark."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jobs.audit.incidents import incident_line


def incident(**changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "cause_seq": 3064, "cause_event": "BrokerFailure", "cause_broker": 5,
        "start_ts": datetime(2026, 1, 1, 0, 49, 3), "end_seq": 3492,
        "end_ts": datetime(2026, 1, 1, 0, 56, 25), "seconds": 442.1,
        "partitions_affected": 31, "topics_affected": 4, "peak_partitions_offline": 23,
        "offline_partition_seconds": 8830.7, "under_min_isr_partition_seconds": 12.0,
        "recovery_event": "BrokerStartup", "recovery_broker": 5, "unclean_elections": 0,
    }
    row.update(changes)
    return row


def test_a_closed_incident_names_its_cause_blast_radius_and_recovery() -> None:
    assert incident_line(incident()) == (
        "incident at seq 3064: BrokerFailure of broker 5 at 2026-01-01 00:49:03 took 31 "
        "partition(s) of 4 topic(s) offline or under min ISR (peak 23 offline) for 442.1 s, "
        "8830.7 partition-seconds offline; BrokerStartup of broker 5 at seq 3492 "
        "(2026-01-01 00:56:25) brought them back")


def test_an_open_incident_with_unclean_elections_says_so() -> None:
    line = incident_line(incident(end_seq=None, end_ts=None, recovery_event=None,
                                  recovery_broker=None, unclean_elections=2))
    assert line.endswith("still open at the run's end; 2 unclean election(s): data may be lost")
