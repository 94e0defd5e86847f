"""The `incidents` rows of one BrokerChange that lost two brokers, through the table's
contract (pure: the core's replay, the driver's roll-up, the Arrow batch the sink writes)."""

from __future__ import annotations

from jobs.engine.incidents_table import incident_batches, run_incidents
from schemas import event_types as ET
from schemas.arrow import arrow_schema
from schemas.tables import TABLES
from tests.helpers.core import replay_log, two_brokers_lost

SECOND = 1_000_000


def test_the_incidents_row_keeps_every_broker_lost_with_its_share() -> None:
    lost = two_brokers_lost(SECOND)
    change = lost.change
    _, out = replay_log(lost.log)
    reads = [("east", "n1", w) for w in out.partition_windows]
    found = run_incidents(reads, [], "n1", {"east": (change + 442) * SECOND})
    [batch] = incident_batches(found, "n1")
    assert batch.schema == arrow_schema(TABLES["incidents"])
    [row] = batch.to_pylist()
    assert (row["cluster"], row["incident_id"], row["cause_event"], row["seconds"]) == (
        "east", change, ET.BROKER_FAILURE, 442.0)
    assert row["brokers"] == [
        {"broker_id": 3, "partitions": 1, "offline_partition_seconds": 86.0,
         "under_min_isr_partition_seconds": 86.0, "seconds": 86.0},
        {"broker_id": 5, "partitions": 2, "offline_partition_seconds": 884.0,
         "under_min_isr_partition_seconds": 884.0, "seconds": 442.0}]
