"""Release-line detection from a log's line formats (`jobs.ingest.logparse.version`): the
real-log excerpts and the version fixtures fall in the release lines their names give."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jobs.compare.profile import choose_profile
from jobs.ingest.logparse.version import MARKERS, VersionRange, detect, markers_in, parse_range
from statemachine.profiles import parse_version
from tests.helpers import INGEST_FIXTURES

# File names carry the release as `__ak2.0__`, `__ak1.1-2.0__`, `__ak0.8-0.10__`, `__ak3.x__`.
_NAMED = re.compile(r"ak(\d+)\.(\d+|x)(?:\.\d+)?(?:-dev|plus)?(?:-(\d+)\.(\d+))?")


def _markers(path: Path) -> set[str]:
    seen: set[str] = set()
    for line in path.read_text(errors="replace").splitlines():
        seen.update(markers_in(line))
    return seen


def _named_range(path: Path) -> tuple[tuple[int, int], tuple[int, int]] | None:
    m = _NAMED.search(f"{path.parent.name}/{path.name}")
    if m is None:
        return None
    major = int(m.group(1))
    if m.group(2) == "x":
        return (major, 0), (major, 99)
    low = (major, int(m.group(2)))
    high = (int(m.group(3)), int(m.group(4))) if m.group(3) else low
    return low, (high if "plus" not in path.name else (3, 99))


LOGS = sorted(p for p in INGEST_FIXTURES.rglob("*.log") if _named_range(p) is not None)


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_detected_range_holds_the_release_the_file_is_named_for(path: Path) -> None:
    found = detect(_markers(path))
    named = _named_range(path)
    assert named is not None
    if found is not None:
        low, high = parse_version(found.low), parse_version(found.high)
        assert low <= named[1] and named[0] <= high, (found, named)


def test_the_version_fixtures_are_told_apart() -> None:
    versions = INGEST_FIXTURES / "versions"
    assert detect(_markers(versions / "ak0.10" / "controller.log")) == VersionRange("0.8", "0.11")
    assert detect(_markers(versions / "ak2.2" / "controller.log")) == VersionRange("2.2", "2.2")
    assert detect(_markers(versions / "ak3.7" / "controller.log")) == VersionRange("3.5", "3.9")


def _folder(path: Path) -> VersionRange | None:
    return detect(set().union(*(_markers(p) for p in sorted(path.glob("*.log")))))


@pytest.mark.parametrize(("folder", "found", "before", "profile"), [
    # 1.1.1: `Epoch incremented to 3` alone (1.1-2.0), a broker change without bounced
    # brokers (up to 2.1), the request classes' PartitionState (up to 2.3).
    ("failover-elections/ak1.1", "1.1-2.0", "2.2", "2.0"),
    # 2.3.0: `Starting preferred replica leader election for partitions` (up to 2.3), bounced
    # brokers (2.2+), the per-partition UpdateMetadata line (up to 2.5).
    ("isr-notification/ak2.3", "2.2-2.3", "3.7", "2.3"),
    # 2.5.1: LeaderAndIsrPartitionState (2.4+), the per-partition UpdateMetadata line and
    # ControllerBrokerRequestBatch's `The stop replica request (delete = false)` (up to 2.5).
    ("version-markers/ak2.5", "2.4-2.5", "3.7", "2.5"),
])
def test_markers_only_old_releases_print_narrow_the_range(folder: str, found: str, before: str,
                                                          profile: str) -> None:
    got = _folder(INGEST_FIXTURES / folder)
    assert got is not None and got.text() == found
    assert choose_profile(None, got.text()).profile == profile != before


def test_no_marker_and_contradicting_markers_give_no_range() -> None:
    assert detect([]) is None
    assert detect(["controller_colon", "partition_epoch"]) is None  # 0.8-0.11 and 3.3+


@pytest.mark.parametrize(("line", "names"), [
    ("[2018-01-01 00:00:00,000] INFO [Controller id=1] Newly added brokers: 2 "
     "(kafka.controller.KafkaController)", ["controller_id"]),
    ("[2019-05-05 10:00:00,000] INFO [Topic Deletion Manager 0], Partition deletion "
     "callback (kafka.controller.TopicDeletionManager)", ["topic_deletion_comma"]),
    ("[2021-01-01 00:00:00,000] INFO [Topic Deletion Manager 0] Handling deletion "
     "(kafka.controller.TopicDeletionManager)", ["topic_deletion_no_comma"]),
    ("TRACE Controller 0 epoch 1 changed state of replica 1", ["state_change_plain"]),
    # 1.0.2's KafkaController.elect: `Incremented epoch to`; 0.11's `Controller 1
    # incremented epoch to` is not it.
    ("[2018-01-01 00:00:00,000] INFO [Controller id=1] Incremented epoch to 5 "
     "(kafka.controller.KafkaController)", ["controller_id", "incremented_epoch"]),
    ("[2017-01-01 00:00:00,000] INFO [Controller 1]: Controller 1 incremented epoch to 5 "
     "(kafka.controller.KafkaController)", ["controller_colon"]),
    # 2.1+ prints the epoch with its zk version on the election line: not the 1.1-2.0 one.
    ("INFO [Controller id=1] 1 successfully elected as the controller. Epoch incremented to "
     "12 and epoch zk version is now 12 (kafka.controller.KafkaController)",
     ["controller_id", "epoch_zk_version"]),
    ("INFO [Controller id=1] Epoch incremented to 12 (kafka.controller.KafkaController)",
     ["controller_id", "epoch_incremented_alone"]),
    # 2.6+: the UpdateMetadata summary is not the per-partition line of 1.0-2.5.
    ("INFO [Controller id=1 epoch=2] Sending UpdateMetadata request to brokers Set(1, 2) for "
     "1 partitions (state.change.logger)", []),
    # AlterIsr's DEBUG line (2.7-3.2).
    ("DEBUG [Controller id=1] ISR for partition t-0 updated to [1,2] and zkVersion updated to "
     "[5] (kafka.controller.KafkaController)", ["controller_id", "isr_updated_brackets"]),
    ("LeaderAndIsr(leader=1, leaderEpoch=2, isr=List(1), leaderRecoveryState=RECOVERED, "
     "partitionEpoch=3)", ["leader_recovery_state", "partition_epoch"]),
])
def test_markers_of_single_lines(line: str, names: list[str]) -> None:
    assert markers_in(line) == names


def test_marker_ranges_are_supported_lines_and_ranges_round_trip() -> None:
    for m in MARKERS:
        assert parse_version(m.low) <= parse_version(m.high), m
    assert parse_range("2.4-3.9") == VersionRange("2.4", "3.9")
    assert parse_range(VersionRange("2.3", "2.3").text()) == VersionRange("2.3", "2.3")
    with pytest.raises(ValueError, match="Kafka version"):
        parse_range("x-3.9")
