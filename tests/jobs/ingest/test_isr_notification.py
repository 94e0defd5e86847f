"""ISR changes up to 2.6 (`logparse.assemble`): the leader wrote the ISR to ZooKeeper itself
and left a notification; the controller's `processIsrChangeNotification` (2.3.0
KafkaController.scala:1447-1466) reloads the partitions (`updateLeaderAndIsrCache`), logs
`Sending MetadataRequest to Brokers: .. for TopicPartitions: ..` (DEBUG) and sends them in
UpdateMetadata, whose per-partition TRACE lines carry the new ISR. Up to 1.0 the listener
(`IsrChangeNotificationListener`, 0.10.2.1 KafkaController.scala:1339-1363) logs `Sending
MetadataRequest to Brokers:.. for TopicAndPartitions:..` with `[t,0]` partitions.

`isr-notification/ak2.3` is a 2.3.0 log: orders-0 ([2, 1]) loses broker 2, which comes back,
rejoins the ISR ([1, 2]) and is elected preferred leader.
"""

from __future__ import annotations

from pathlib import Path

from jobs.ingest.logparse import pipeline
from schemas import event_types as ET
from tests.helpers import INGEST_FIXTURES

FIX = INGEST_FIXTURES / "isr-notification" / "ak2.3"


def test_the_notifications_update_metadata_lines_are_isr_changes() -> None:
    r = pipeline.ingest([str(FIX)])
    assert r.unparsed == []
    assert [e.event_type for e in r.events] == [
        ET.CONTROLLER_FAILOVER, ET.PARTITION_CREATED, ET.BROKER_FAILURE, ET.BROKER_STARTUP,
        ET.ISR_CHANGED, ET.PREFERRED_LEADER_ELECTION]
    (isr,) = [e for e in r.events if e.event_type == ET.ISR_CHANGED]
    assert (isr.topic, isr.partition, isr.isr, isr.leader_epoch, isr.source) == (
        "orders", 0, (1, 2), 1, "state-change.log:3")
    # The UpdateMetadata line is still an observation, of the IsrChanged's seq.
    (um,) = [o for o in r.observations if o.source == "state-change.log:3"]
    assert (um.kind, um.seq) == ("update_metadata_request", isr.seq)


def _write(folder: Path, controller: list[str], state_change: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "controller.log").write_text("\n".join(controller) + "\n")
    (folder / "state-change.log").write_text("\n".join(state_change) + "\n")
    return folder


def test_a_notification_of_several_partitions_is_one_controller_event(tmp_path: Path) -> None:
    # 0.10.2.1: `Controller {C} epoch {E} sending UpdateMetadata request (Leader:..,ISR:..,
    # LeaderEpoch:..,ControllerEpoch:..) to broker {B} for partition [t,p]`, one line per
    # broker; only the first line of each partition is its change.
    um = ("[2017-05-01 10:00:00,{ms}] TRACE Controller 1 epoch 3 sending UpdateMetadata "
          "request (Leader:{l},ISR:{isr},LeaderEpoch:4,ControllerEpoch:3) to broker {b} for "
          "partition [t,{p}] (state.change.logger)")
    folder = _write(tmp_path / "ak0.10", [
        "[2017-05-01 10:00:00,000] DEBUG [IsrChangeNotificationListener on Controller 1]: "
        "Sending MetadataRequest to Brokers:ArrayBuffer(1, 2, 3) for "
        "TopicAndPartitions:Set([t,0], [t,1]) (kafka.controller.IsrChangeNotificationListener)",
        "[2017-05-01 10:00:01,000] INFO [Controller 1]: Shutting down broker 3 "
        "(kafka.controller.KafkaController)",
    ], [
        um.format(ms="010", l=1, isr="1,2,3", b=1, p=0),
        um.format(ms="011", l=1, isr="1,2,3", b=2, p=0),
        um.format(ms="012", l=2, isr="2,3", b=1, p=1),
        # After the next controller event: not the notification's.
        um.format(ms="999", l=2, isr="2", b=1, p=1).replace("10:00:00,999", "10:00:02,000"),
    ])
    r = pipeline.ingest([str(folder)])
    assert r.unparsed == []
    changes = [(e.seq, e.partition, e.isr, e.leader_epoch) for e in r.events
               if e.event_type == ET.ISR_CHANGED]
    assert changes == [(1, 0, (1, 2, 3), 4), (1, 1, (2, 3), 4)]
    assert [e.event_type for e in r.events][-1] == ET.CONTROLLED_SHUTDOWN


def test_a_notification_without_its_trace_lines_changes_nothing(tmp_path: Path) -> None:
    # From 2.6 state.change.logger logs at INFO: only the request summary remains.
    folder = _write(tmp_path / "ak2.6", [
        "[2020-09-01 10:00:00,000] DEBUG [Controller id=1] Sending MetadataRequest to "
        "Brokers: ArrayBuffer(1, 2) for TopicPartitions: ArrayBuffer(t-0) "
        "(kafka.controller.KafkaController)",
    ], [
        "[2020-09-01 10:00:00,010] INFO [Controller id=1 epoch=2] Sending UpdateMetadata "
        "request to brokers Set(1, 2) for 1 partitions (state.change.logger)",
    ])
    r = pipeline.ingest([str(folder)])
    assert r.unparsed == [] and r.events == []
