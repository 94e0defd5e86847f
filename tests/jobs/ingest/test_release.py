"""The release the ingest detects is the replay's default (`jobs.ingest.release`).

`release-default/ak2.4` is a 2.4.1 excerpt: a controlled shutdown takes follower 2 out of
the ISR of `orders-0`, then the leader puts it back while it is still shutting down. Up to
2.6 the leader writes the ISR to ZooKeeper itself and the controller only reloads it
(KafkaController.scala at 2.4.1, lines 1711-1730: `processIsrChangeNotification` ->
`updateLeaderAndIsrCache`, then UpdateMetadata to every broker, logged at
ControllerChannelManager.scala:481-482). From 3.3 the controller refuses an ISR with a
shutting-down member itself (KIP-841, INELIGIBLE_REPLICA), so replayed under the 3.7 rules
the change is rejected and the partition ends with ISR [1] where Kafka logged [1, 2]."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.ingest.release import (
    RELEASE_FILE,
    Detected,
    choose_release,
    parse_record,
    read_record,
    record_text,
)
from tests.helpers import INGEST_FIXTURES
from tests.helpers.excerpts import detected, differing, run, statuses

AK24 = INGEST_FIXTURES / "release-default" / "ak2.4"


def test_the_24_excerpt_is_dated_24_to_25_and_replayed_as_25_by_default() -> None:
    found = detected(AK24)
    assert found is not None and found.text() == "2.4-2.5"
    choice = choose_release(None, Detected(found.text(), {}), "3.7", "config")
    assert choice.version == "2.5"
    assert choice.reason == "detected by jobs.ingest from the log's formats: 2.4-2.5"


def test_replayed_under_its_release_every_point_agrees() -> None:
    x = run(AK24, "2.5")
    assert statuses(x) == {"agree"}
    [state] = x.out.partition_states
    assert (state.leader, state.isr) == (1, (1, 2))
    assert not [f for f in x.out.findings if f.kind == "alter_partition_rejected"]


def test_replayed_under_37_the_leaders_isr_write_is_rejected() -> None:
    x = run(AK24, "3.7")
    assert [f.kind for f in x.out.findings] == ["alter_partition_rejected"]
    assert differing(x) == [("orders", 0, None, "isr", "[1,2]", "[1]", "state-change.log:13")]


def test_the_flag_overrides_what_was_detected() -> None:
    choice = choose_release("3.7", Detected("2.4-2.5", {}), "3.1", "config")
    assert choice == ("3.7", "--kafka-version 3.7")


def test_nothing_detected_falls_back_to_the_config() -> None:
    assert choose_release(None, None, "3.1", "config").version == "3.1"
    assert choose_release(None, Detected(None, {"a.log": None}), "3.1", "config").version == "3.1"
    unreadable = choose_release(None, Detected("banana", {}), "3.1", "config")
    assert unreadable.version == "3.1" and "unreadable" in unreadable.reason


def test_files_of_two_releases_are_said_and_none_is_guessed() -> None:
    files = {"broker-1/controller.log": "2.2", "broker-2/controller.log": "2.4-2.5",
             "broker-2/state-change.log": None}
    choice = choose_release(None, Detected(None, files), "3.7", "config [kafka] kafka_version")
    assert choice.version == "3.7"
    assert choice.reason == (
        "config [kafka] kafka_version: the log's files point at 2 releases (2.2: "
        "broker-1/controller.log; 2.4-2.5: broker-2/controller.log); pass --kafka-version "
        "to choose")


def test_a_bad_flag_or_fallback_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported Kafka version '4.0'"):
        choose_release("4.0", None, "3.7", "config")
    with pytest.raises(ValueError, match="malformed Kafka version"):
        choose_release(None, Detected("2.4-2.5", {}), "2.x", "config")


def test_the_record_reads_back_and_a_foreign_file_is_none(tmp_path: Path) -> None:
    assert read_record(str(tmp_path)) is None
    (tmp_path / RELEASE_FILE).write_text(record_text("2.4-2.5", {"b.log": "2.4-2.5"}))
    assert read_record(str(tmp_path)) == Detected("2.4-2.5", {"b.log": "2.4-2.5"})
    assert parse_record("not json") is None
    assert parse_record('{"kafka_version": 3}') is None
