"""The parser over every documented format family (docs/ingest-compare.md), beyond the real
excerpts: complete 0.10, 2.2 and 3.7 controller sequences written from the catalogued
templates, several brokers' folders merged in the controller's order, gzip, time zones,
hard wraps, and each line envelope seen in real logs (docker compose prefix, test-harness
wrapper, log4j2 test layout, LinkedIn fork layout, grep output, no timestamp).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from jobs.ingest.logparse import envelope, known, patterns, pipeline, values
from jobs.ingest.logparse.idents import strip
from tests.helpers import INGEST_FIXTURES

FIX = INGEST_FIXTURES


def _events(r: pipeline.IngestResult) -> list[tuple[object, ...]]:
    return [(e.seq, e.event_type, e.broker_id, e.topic, e.partition, e.replicas, e.isr,
             e.leader_epoch, e.brokers, e.error, e.unclean_leader_election, e.source)
            for e in r.events]


BROKER_KINDS = ("failover_brokers", "live_brokers")


def _brokers_seen(r: pipeline.IngestResult) -> list[tuple[object, ...]]:
    """What the controller logged as the registered brokers (failover, BrokerChange)."""
    return [(o.seq, o.kind, o.brokers) for o in r.observations if o.kind in BROKER_KINDS]


def _clean(r: pipeline.IngestResult) -> None:
    assert r.unparsed == []
    for s in r.summary:
        assert s.lines_unparsed == 0
        assert s.lines_read == s.lines_extracted + s.lines_informational + s.lines_ignored


def test_ak0_10_controller_and_state_change() -> None:
    r = pipeline.ingest([str(FIX / "versions" / "ak0.10")])
    _clean(r)
    assert _events(r) == [
        (1, "ControllerFailover", 1, None, None, None, None, None, (1, 2), None, None,
         "controller.log:2"),
        (2, "PartitionCreated", None, "orders", 0, (1, 2), None, None, None, None, None,
         "controller.log:13"),
        (2, "PartitionCreated", None, "orders", 1, (2, 1), None, None, None, None, None,
         "controller.log:13"),
        (3, "BrokerFailure", 2, None, None, None, None, None, None, None, None,
         "controller.log:20"),
        (4, "TopicDeletionRequested", None, "orders", None, None, None, None, None, None, None,
         "controller.log:25"),
        (5, "StopReplicaResponse", 1, "orders", 0, None, None, None, None, None, None,
         "controller.log:27"),
        (5, "StopReplicaResponse", 1, "orders", 1, None, None, None, None, None, None,
         "controller.log:27"),
        (6, "TopicDeletionCompleted", None, "orders", None, None, None, None, None, None, None,
         "controller.log:28"),
    ]
    assert _brokers_seen(r) == [(1, "failover_brokers", (1, 2)), (3, "live_brokers", (1,))]
    obs = [(o.seq, o.kind, o.topic, o.partition, o.broker_id, o.from_state, o.to_state,
            o.leader, o.leader_epoch, o.isr, o.outcome, o.observed_by) for o in r.observations
           if o.kind not in BROKER_KINDS]
    assert obs == [
        (2, "partition_transition", "orders", 0, None, "NonExistentPartition", "NewPartition",
         None, None, None, "applied", "controller"),
        (2, "partition_transition", "orders", 1, None, "NonExistentPartition", "NewPartition",
         None, None, None, "applied", "controller"),
        (2, "replica_transition", "orders", 0, 1, "NonExistentReplica", "NewReplica",
         None, None, None, "applied", "controller"),
        (2, "leader_elected", "orders", 0, None, None, None, 1, 0, (1, 2), None, "controller"),
        (2, "partition_transition", "orders", 0, None, "NewPartition", "OnlinePartition",
         1, None, None, "applied", "controller"),
        (2, "leader_and_isr_request", "orders", 0, 1, None, None, 1, 0, (1, 2), None,
         "controller"),
        (2, "update_metadata_request", "orders", 0, None, None, None, 1, 0, (1, 2), None,
         "controller"),
        (2, "broker_leader_and_isr", "orders", 0, 2, None, None, 1, 0, (1, 2), None, "broker"),
        (2, "broker_transition", "orders", 0, 2, None, None, None, None, None, None, "broker"),
        (3, "leader_elected", "orders", 1, None, None, None, 1, 1, (1,), None, "controller"),
        (3, "partition_transition", "orders", 1, None, "OfflinePartition", "OnlinePartition",
         1, None, None, "applied", "controller"),
        (3, "replica_transition", "orders", 0, 2, "OnlineReplica", "OfflineReplica",
         None, None, None, "applied", "controller"),
        (3, "partition_transition", "orders", 1, None, "OnlinePartition",
         "NonExistentPartition", None, None, None, "rejected", "controller"),
        (3, "isr_shrink", "orders", 0, None, None, None, 1, 1, (1,), None, "controller"),
    ]
    failed = [o for o in r.observations if o.outcome == "rejected"]
    assert failed[0].detail is not None
    assert failed[0].detail.startswith("java.lang.IllegalStateException: Partition [orders,1]")


def test_ak2_2_controller_full_lifecycle() -> None:
    r = pipeline.ingest([str(FIX / "versions" / "ak2.2")])
    _clean(r)
    got = [(e.seq, e.event_type, e.broker_id, e.topic, e.partition, e.replicas, e.brokers)
           for e in r.events]
    assert got == [
        (1, "ControllerFailover", 2, None, None, None, (1, 2, 3)),
        (2, "PartitionCreated", None, "audit", 1, (2, 3), None),
        (2, "PartitionCreated", None, "audit", 0, (1, 2), None),
        (3, "ControlledShutdown", 3, None, None, None, None),
        (4, "BrokerFailure", 3, None, None, None, None),  # + its failure callback
        (5, "BrokerStartup", 3, None, None, None, None),  # new
        (5, "BrokerStartup", 1, None, None, None, None),  # bounced: a start of a known broker
        (6, "ReassignmentRequested", None, "audit", 0, (2, 3), None),
        (7, "PreferredLeaderElection", None, "audit", 1, None, None),
        (7, "PreferredLeaderElection", None, "payments", 0, None, None),
        (8, "TopicDeletionRequested", None, "payments", None, None, None),
        (9, "StopReplicaResponse", 1, "payments", 0, None, None),
        (10, "StopReplicaResponse", 2, "payments", 0, None, None),
        (11, "TopicDeletionCompleted", None, "payments", None, None, None),
    ]
    assert _brokers_seen(r) == [(1, "failover_brokers", (1, 2, 3)), (4, "live_brokers", (1, 2)),
                                (5, "live_brokers", (1, 2, 3))]
    kinds = [(o.seq, o.kind, o.topic, o.partition, o.broker_id, o.to_state, o.leader,
              o.leader_epoch) for o in r.observations if o.kind not in BROKER_KINDS]
    assert kinds == [
        (1, "replica_snapshot", "payments", 0, 1, "OnlineReplica", None, None),
        (1, "replica_snapshot", "payments", 0, 2, "OnlineReplica", None, None),
        (1, "partition_snapshot", "payments", 0, None, "OnlinePartition", None, None),
        (6, "leader_epoch_updated", "audit", 0, None, None, None, 2),
        (7, "leader_elected", "audit", 1, None, None, 2, None),
    ]


def test_ak3_7_kip455_isr_unclean_and_stop_replica_errors() -> None:
    r = pipeline.ingest([str(FIX / "versions" / "ak3.7")])
    _clean(r)
    assert _events(r) == [
        (1, "ControllerFailover", 1, None, None, None, None, None, (1, 2, 3, 4), None, None,
         "controller.log:1"),
        (2, "PartitionCreated", None, "events", 0, (1, 2, 3), None, None, None, None, None,
         "controller.log:5"),
        (2, "PartitionCreated", None, "events", 1, (2, 3, 1), None, None, None, None, None,
         "controller.log:5"),
        (3, "IsrChanged", None, "events", 0, None, (1, 2), 0, None, None, None,
         "controller.log:8"),
        (4, "ReassignmentRequested", None, "events", 1, (3, 1, 4), None, None, None, None, None,
         "controller.log:9"),
        (5, "TopicConfigChanged", None, "events", None, None, None, None, None, None, True,
         "controller.log:15"),
        (6, "UncleanLeaderElection", None, "events", 0, None, None, None, None, None, None,
         "controller.log:16"),
        (7, "TopicDeletionRequested", None, "events", None, None, None, None, None, None, None,
         "controller.log:17"),
        (8, "StopReplicaResponse", 2, "events", 0, None, None, None, None, None, None,
         "controller.log:19"),
        (8, "StopReplicaResponse", 2, "events", 1, None, None, None, None, "KAFKA_STORAGE_ERROR",
         None, "controller.log:19"),
    ]
    online = [(o.seq, o.topic, o.partition, o.from_state, o.to_state, o.leader, o.leader_epoch,
               o.isr, o.zk_version) for o in r.observations if o.kind == "partition_transition"
              and o.to_state == "OnlinePartition"]
    assert online == [
        (2, "events", 0, "NewPartition", "OnlinePartition", 1, 0, (1, 2, 3), 0),
        (2, "events", 1, "NewPartition", "OnlinePartition", 2, 0, (2, 3, 1), 0),
        (4, "events", 1, "OnlinePartition", "OnlinePartition", 3, 2, (3, 1, 4), 3),
    ]
    broker = [(o.kind, o.broker_id, o.leader, o.leader_epoch, o.isr) for o in r.observations
              if o.observed_by == "broker"]
    assert broker == [("broker_follower_start", 2, 1, 0, None),
                      ("broker_leader_start", 2, 2, 0, (2, 3, 1))]


@pytest.mark.parametrize(("tz", "first_ts"), [
    ("UTC", datetime(2021, 6, 1, 9, 0, tzinfo=UTC)),
    ("Europe/Paris", datetime(2021, 6, 1, 7, 0, tzinfo=UTC)),  # CEST, UTC+2
])
def test_brokers_merged_in_controller_order_with_gzip_and_zone(tz: str, first_ts: datetime
                                                               ) -> None:
    r = pipeline.ingest([str(FIX / "multi-broker")], tz=tz)
    _clean(r)
    # File order would put broker-1's events first; the controller's order is by time.
    got = [(e.seq, e.event_type, e.broker_id, e.brokers, e.source) for e in r.events]
    assert got == [
        (1, "ControllerFailover", 2, (1, 2, 3), "broker-2/controller.log:1"),
        (2, "ControlledShutdown", 2, None, "broker-2/controller.log:4"),
        (3, "ControllerFailover", 1, (1, 3), "broker-1/controller.log:1"),
        (4, "BrokerStartup", 2, None, "broker-1/controller.log:4"),
    ]
    assert r.events[0].ts == int(first_ts.timestamp()) * 1_000_000
    assert _brokers_seen(r) == [(1, "failover_brokers", (1, 2, 3)),
                                (3, "failover_brokers", (1, 3)), (4, "live_brokers", (1, 2, 3))]
    (o,) = [o for o in r.observations if o.kind not in BROKER_KINDS]
    assert (o.seq, o.source, o.leader, o.leader_epoch, o.isr, o.zk_version) == (
        2, "broker-2/state-change.log.gz:1", 1, 4, (1, 3), 6)


def test_hard_wrapped_lines_are_rejoined() -> None:
    r = pipeline.ingest([str(FIX / "hard-wrap.log")])
    _clean(r)
    assert r.summary[0].lines_extracted == 4
    assert [(o.kind, o.leader, o.leader_epoch, o.isr) for o in r.observations] == [
        ("leader_and_isr_summary", None, None, None),
        ("partition_transition", 0, 1, (0, 1)),
    ]


MSG = "[Controller id=1 epoch=2] Changed partition t-0 state from NewPartition to OfflinePartition"


@pytest.mark.parametrize("line", [
    f"[2023-10-01 14:41:35,289] TRACE {MSG} (state.change.logger)",
    f"kafka-1   | [2023-10-01 14:41:35,289] TRACE {MSG} (state.change.logger)",
    f"kafka1/state-change.log:[2023-10-01 14:41:35,289] TRACE {MSG} (state.change.logger)",
    f"07:08:49,859  INFO || - [Harness] stream - STDOUT: [2023-10-01 14:41:35,289] TRACE {MSG} "
    "(state.change.logger)",
    f"2023-10-01T14:41:35.289Z stdout F [2023-10-01 14:41:35,289] TRACE {MSG} "
    "(state.change.logger)",
    f"2023-10-01 14:41:35 TRACE state.change.logger:76 - {MSG}",
    f"2023-10-01 14:41:35,289 [controller-event-thread] TRACE state.change.logger - {MSG}",
    f"2023/10/01 14:41:35.289 [state.change.logger] {MSG}",
    f"TRACE {MSG} (state.change.logger)",
    f"2023-10-01 14:41:35,289 TRACE {MSG} (state.change.logger) [controller-event-thread]",
    # log4j's `%c:%L` (Kafka's test log4j.properties, connect-log4j.properties)
    f"[2023-10-01 14:41:35,289] TRACE {MSG} (state.change.logger:76)",
    f"2023-10-01 14:41:35,289 TRACE {MSG} (state.change.logger:76) [controller-event-thread]",
    f"TRACE {MSG} (state.change.logger:76)",
])
def test_envelopes(line: str) -> None:
    env = envelope.split(line)
    assert env is not None
    assert env.msg == MSG
    ident, body = strip(env.msg)
    assert (ident.controller_id, ident.controller_epoch) == (1, 2)
    facts = patterns.extract(body, ident)
    assert facts is not None and facts[0].to_state == "OfflinePartition"
    if env.ts:
        assert envelope.Clock("UTC").micros(env.ts) // 1_000_000 == 1696171295


@pytest.mark.parametrize("line", [
    "java.lang.IllegalStateException: Partition t-0 should be in one of ...",
    "\tat kafka.controller.ZkPartitionStateMachine.handleStateChanges(PSM.scala:1)",
    "kafka_1   | kafka.common.StateChangeFailedException: Failed to elect leader",
    "ogger)",
])
def test_continuations(line: str) -> None:
    assert envelope.split(line) is None


def test_timestamp_with_zone_wins_over_default() -> None:
    c = envelope.Clock("Europe/Paris")
    assert c.micros("2021-01-01 00:00:00,000") == c.micros("2020-12-31T23:00:00.000Z")
    assert c.micros("2021-01-01 01:00:00,000+0100") == c.micros("2021-01-01T00:00:00Z")


def test_values_renderings() -> None:
    assert values.tp("my-topic-2-13") == ("my-topic-2", 13)
    assert values.tp("[my-topic,3]") == ("my-topic", 3)
    assert values.tp("partitionA") == ("partitionA", None)
    lead = values.leadership
    assert lead('{"leader":1,"leader_epoch":4,"isr":[1,2]}')[:3] == (1, 4, (1, 2))
    assert lead("(Leader:2,ISR:2,1,LeaderEpoch:1,ControllerEpoch:5)")[:5] == (
        2, 1, (2, 1), None, 5)
    assert lead("(Leader:1,ISR:1,LeaderRecoveryState:RECOVERED,LeaderEpoch:2,ZkVersion:3,"
                "ControllerEpoch:4)")[:5] == (1, 2, (1,), 3, 4)
    assert lead("LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, 2), zkVersion=0)")[:4] == (
        1, 0, (1, 2), 0)
    assert lead("LeaderAndIsr(leader=-1, leaderEpoch=3, isrWithBrokerEpoch=List(BrokerState("
                "brokerId=1, brokerEpoch=-1)), leaderRecoveryState=RECOVERED, "
                "partitionEpoch=7)")[:4] == (-1, 3, (1,), 7)
    assert values.assignment("Map([t,0] -> List(1, 2), [t,1] -> List(2))") == [
        ("t", 0, (1, 2)), ("t", 1, (2,))]
    assert values.topics("Set(a, b)") == ["a", "b"]
    assert values.topics("a,b") == ["a", "b"]


@pytest.mark.parametrize("msg", [
    "Checking need to trigger auto leader balancing",
    "Registering handlers",
    "List of topics to be deleted: ",
    "Initializing manager with initial deletions: Set(), initial ineligible deletions: Set()",
    "Controller 0 connected to kafka:9092 (id: 0 rack: null) for sending state change requests",
    "Removed ArrayBuffer() from list of shutting down brokers.",
    "Starting",
    "Deletion of topic t (re)started",
    "Resigned",
])
def test_known_informational_templates(msg: str) -> None:
    assert known.is_known(msg)


def test_unknown_controller_line_is_unparsed_not_dropped(tmp_path: Path) -> None:
    p = tmp_path / "controller.log"
    p.write_text("[2021-01-01 00:00:00,000] INFO [Controller id=1] Something Kafka never "
                 "logged (kafka.controller.KafkaController)\n"
                 "[2021-01-01 00:00:00,001] INFO Something else (kafka.server.KafkaServer)\n")
    r = pipeline.ingest([str(p)])
    (s,) = r.summary
    assert (s.lines_read, s.lines_unparsed, s.lines_ignored) == (2, 1, 1)
    (u,) = r.unparsed
    assert (u.file, u.line) == ("controller.log", 1)
    assert "Something Kafka never logged" in u.text


def test_controller_line_in_unknown_layout_is_reported(tmp_path: Path) -> None:
    p = tmp_path / "controller.log"
    p.write_text(
        "[2021-01-01 00:00:00,000] ERROR [Controller id=1] Error processing event X "
        "(kafka.controller.KafkaController)\n"
        "java.lang.IllegalStateException: boom\n"
        "<14>Jan  1 00:00:01 host kafka: INFO [Controller id=1] Shutting down broker 2 "
        "(kafka.controller.KafkaController)\n"
        "\tat kafka.controller.KafkaController.process(KafkaController.scala:1)\n")
    r = pipeline.ingest([str(p)])
    (s,) = r.summary
    assert (s.lines_read, s.lines_informational, s.lines_unparsed) == (4, 3, 1)
    (u,) = r.unparsed
    assert (u.line, u.reason) == (3, "controller line in an unknown layout")


def test_logger_with_line_number_is_read_and_no_phantom_broker(tmp_path: Path) -> None:
    """`(kafka.controller.KafkaController:66)`: the logger and its line number are the
    envelope, not the message (else `:66` reads as a broker 66 of the failover)."""
    p = tmp_path / "controller.log"
    p.write_text(
        "[2024-01-01 10:00:00,123] INFO [Controller id=0] 0 successfully elected as the "
        "controller. Epoch incremented to 1 and epoch zk version is now 1 "
        "(kafka.controller.KafkaController:66)\n"
        "[2024-01-01 10:00:00,130] INFO [Controller id=0] Currently active brokers in the "
        "cluster: Set(0, 1) (kafka.controller.KafkaController:66)\n")
    r = pipeline.ingest([str(p)])
    _clean(r)
    assert [(e.event_type, e.broker_id, e.brokers) for e in r.events] == [
        ("ControllerFailover", 0, (0, 1))]
    env = envelope.split("[2024-01-01 10:00:00,123] INFO m (kafka.controller.KafkaController"
                         ":66)")
    assert env is not None and (env.msg, env.logger) == ("m", "kafka.controller.KafkaController")


def test_controller_line_whose_logger_cannot_be_read_is_unparsed(tmp_path: Path) -> None:
    """A layout no envelope knows (here a `(logger@line)` suffix) must not produce data."""
    p = tmp_path / "controller.log"
    p.write_text(
        "[2024-01-01 10:00:00,123] INFO [Controller id=0] 0 successfully elected as the "
        "controller. Epoch incremented to 1 and epoch zk version is now 1 "
        "(kafka.controller.KafkaController@66)\n")
    r = pipeline.ingest([str(p)])
    assert r.events == [] and r.observations == []
    (u,) = r.unparsed
    assert u.reason == "the logger of this controller line cannot be read"


def test_shutdownable_thread_lines_are_known(tmp_path: Path) -> None:
    """Every line of Kafka's ShutdownableThread (`kafka.utils.ShutdownableThread` up to 3.4,
    `org.apache.kafka.server.util.ShutdownableThread` after), under the controller's threads'
    loggers: used, carrying nothing to replay."""
    ident = "[RequestSendThread controllerId=0] "
    logger = "(kafka.controller.RequestSendThread)"
    lines = [f"[2024-01-01 10:00:00,{k:03d}] {level} {ident}{msg} {logger}" for k, (level, msg)
             in enumerate([
                 ("INFO", "Starting"), ("INFO", "Shutting down"),
                 ("TRACE", "shutdownInitiated latch count reached zero. Shutdown called."),
                 ("INFO", "Stopped"), ("INFO", "Shutdown completed"),
                 ("ERROR", "Error due to")])]
    lines.append("java.lang.InterruptedException")
    p = tmp_path / "controller.log"
    p.write_text("\n".join(lines) + "\n")
    r = pipeline.ingest([str(p)])
    _clean(r)
    assert (r.summary[0].lines_read, r.summary[0].lines_informational) == (7, 7)
    assert r.events == [] and r.observations == []


def test_producer_id_block_lines_under_the_controllers_logger_are_known() -> None:
    """3.0+: `KafkaController.processAllocateProducerIds` passes itself as the logger of
    `ZkProducerIdManager.getNewProducerIdBlock` (ProducerIdManager.scala, 3.7.1 lines
    74-107), so its four lines carry `[Controller id=1] ... (kafka.controller.KafkaController)`:
    known, counted, no event."""
    r = pipeline.ingest([str(INGEST_FIXTURES / "producer-id-blocks" / "ak3.7")])
    _clean(r)
    assert (r.summary[0].lines_read, r.summary[0].lines_informational) == (6, 5)
    assert [e.event_type for e in r.events] == ["ControllerFailover"]
    assert [o.kind for o in r.observations] == []


@pytest.mark.parametrize("logger", ["state.change.logger", "kafka.controller"])
def test_log4j_jmx_registration_is_ignored(tmp_path: Path, logger: str) -> None:
    """log4j 1.x registers an MBean per logger and its `AbstractDynamicMBean.preRegister`
    logs under the very logger it registers: not Kafka output, ignored under every logger."""
    p = tmp_path / "state-change.log"
    p.write_text(f"[2024-01-01 10:00:00,001] DEBUG preRegister called. "
                 f"Server=com.sun.jmx.mbeanserver.JmxMBeanServer@1234, name=log4j:logger={logger}"
                 f" ({logger})\n")
    r = pipeline.ingest([str(p)])
    _clean(r)
    assert (r.summary[0].lines_read, r.summary[0].lines_ignored) == (1, 1)


def test_failed_broker_change_is_not_replayed_as_completed() -> None:
    """0.10.2 `BrokerChangeListener`: `controllerContext.liveBrokers` is set, then
    `ControllerChannelManager.addBroker` throws `BrokerEndPointNotAvailableException`, so
    `onBrokerStartup(1010)` never runs: no BrokerStartup event for 1010, the failure kept as
    an observation (with the exception); the next change is whole again."""
    r = pipeline.ingest([str(FIX / "broker-change-failed.log")], assume_controller=1011,
                        assume_live=(1011,))
    _clean(r)
    assert [(e.seq, e.event_type, e.broker_id, e.source) for e in r.events] == [
        (0, "ControllerFailover", 1011, "assumed:--assume-live"),
        (1, "BrokerStartup", 1012, "broker-change-failed.log:10"),
        (1, "BrokerFailure", 1010, "broker-change-failed.log:10"),
    ]
    assert [(o.seq, o.kind, o.brokers, o.outcome, o.source) for o in r.observations] == [
        (0, "live_brokers", (1010, 1011), None, "broker-change-failed.log:2"),
        (0, "broker_change_failed", None, "failed", "broker-change-failed.log:3"),
        (1, "live_brokers", (1011, 1012), None, "broker-change-failed.log:10"),
    ]
    assert r.observations[1].detail == (
        "kafka.common.BrokerEndPointNotAvailableException: End point with security protocol "
        "PLAINTEXT not found for broker 1010")


def test_isr_without_brackets() -> None:
    assert values.leadership("PartitionState(controllerEpoch=1, leader=2, leaderEpoch=3, "
                             "isr=2,1, zkVersion=4, replicas=2,1)")[:4] == (2, 3, (2, 1), 4)


def test_assumed_controller_for_a_log_that_starts_mid_life() -> None:
    r = pipeline.ingest(
        [str(FIX / "real-logs" / "confluentinc-cp-all-in-one-issue49__ak2.6__topic-create.log")],
        assume_controller=1, assume_live=[2, 3])
    first, second = r.events[:2]
    assert (first.seq, first.event_type, first.broker_id, first.brokers, first.source) == (
        0, "ControllerFailover", 1, (1, 2, 3), "assumed:--assume-live")
    assert first.ts == second.ts  # it happens when the log begins
    assert second.seq == 1
