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
                                  recovery_broker=None, unclean_elections=2, seconds=None),
                         as_of=datetime(2026, 1, 1, 0, 51, 3))
    assert line.endswith("still open at the run's end; 2 unclean election(s): data may be lost")
    # Its length so far (to the run's last event), not "for 0.0 s".
    assert "(peak 23 offline) open, 120 s so far, 8830.7 partition-seconds" in line
    assert " for " not in line


def test_one_event_that_lost_two_brokers_names_both_with_their_shares() -> None:
    """One BrokerChange lost brokers 3 and 5: broker 3 was back in 86 s, broker 5's 442 s
    is the incident's length. The line names both, each with its share."""
    brokers = [
        {"broker_id": 5, "partitions": 23, "offline_partition_seconds": 7946.7,
         "under_min_isr_partition_seconds": 0.0, "seconds": 442.1},
        {"broker_id": 3, "partitions": 8, "offline_partition_seconds": 884.0,
         "under_min_isr_partition_seconds": 12.0, "seconds": 86.0}]
    line = incident_line(incident(brokers=brokers))
    assert line.startswith("incident at seq 3064: BrokerFailure of brokers 3, 5 at ")
    assert ("8830.7 partition-seconds offline (broker 3: 8 partition(s), 884.0 "
            "partition-seconds offline (10%), back after 86.0 s; broker 5: 23 partition(s), "
            "7946.7 partition-seconds offline (90%), back after 442.1 s); BrokerStartup"
            in line)


def test_a_failover_names_the_broker_it_found_lost() -> None:
    line = incident_line(incident(cause_event="ControllerFailover", cause_broker=1,
                                  brokers=[{"broker_id": 1, "partitions": 2,
                                            "offline_partition_seconds": 4.0,
                                            "under_min_isr_partition_seconds": 4.0,
                                            "seconds": 2.0}]))
    assert "ControllerFailover that found broker 1 lost at 2026-01-01" in line


def test_a_failover_that_lost_no_broker_names_the_controller_it_elected() -> None:
    """With no broker lost, the windows name the new controller (2); the line must not say
    broker 2 was lost."""
    line = incident_line(incident(cause_event="ControllerFailover", cause_broker=2,
                                  new_controller=2))
    assert "ControllerFailover to broker 2 (no broker lost) at 2026-01-01" in line
    assert "lost at" not in line
    # Elected 2, lost 1: the broker lost is named.
    assert "ControllerFailover that found broker 1 lost" in incident_line(
        incident(cause_event="ControllerFailover", cause_broker=1, new_controller=2))


def test_a_kraft_incident_says_what_the_record_did_to_the_broker() -> None:
    fenced = incident_line(incident(cause_event="BrokerRegistrationChangeRecord(fenced)",
                                    cause_broker=2))
    assert fenced.startswith("incident at seq 3064: broker 2 fenced "
                             "(BrokerRegistrationChangeRecord) at ")
    shutdown = incident_line(incident(
        cause_event="BrokerRegistrationChangeRecord(in controlled shutdown)", cause_broker=4))
    assert "broker 4 in controlled shutdown (BrokerRegistrationChangeRecord)" in shutdown
    assert "broker 5 fenced (FenceBrokerRecord)" in incident_line(
        incident(cause_event="FenceBrokerRecord"))
