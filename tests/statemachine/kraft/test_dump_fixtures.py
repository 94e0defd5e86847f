"""The KRaft fold on the real dump text quoted in apache/kafka's `config/kraft/README.md`
(3.0.0 to 3.3.x; `tests/fixtures/kraft/`), decoded by `jobs.ingest.kraft` as the replay
will read it, and on the dump written in the 3.8 format. Outcomes derived by hand from the
lines and the image rules (`statemachine.kraft.image`)."""

from __future__ import annotations

from pathlib import Path

from jobs.ingest.kraft.inputs import DUMP_LOG, Input, decode_all
from statemachine.kraft.fold import KraftOutputs, fold
from statemachine.kraft.records import record_of
from statemachine.rows import BrokerIntervalRow, ControllerRow, PartitionStateRow
from tests.helpers import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "kraft"


def fold_dump(path: Path) -> KraftOutputs:
    rows, _ = decode_all([Input(path.name, DUMP_LOG, path.read_bytes())])
    return fold(record_of(r) for r in rows)


def test_readme_dump_final_partition_brokers_and_quorum_by_hand() -> None:
    out = fold_dump(FIXTURES / "dump-log-ak3.0.0-config-kraft-README.txt")
    # offset 8: PartitionRecord foo-0, replicas [1], ISR [1], leader 1, leaderEpoch 0,
    # partitionEpoch 0, in a batch of partitionLeaderEpoch 2; broker 1 is unfenced since
    # offset 6, so nothing is unavailable.
    assert out.partition_states == [PartitionStateRow(
        "foo", 0, "OnlinePartition", 1, 0, (1,), (1,), (), (), 0, 2, "RECOVERED", False, 8)]
    assert out.partition_windows == []
    # Broker 1: registered fenced (RegisterBrokerRecord v0's Fenced defaults to true) at 1,
    # unfenced at 2, fenced at 3, registered again (epoch 4, fenced: still dead) at 5,
    # unfenced at 6.
    ms = 1000
    assert out.broker_timeline == [
        BrokerIntervalRow(1, "dead", 1, 2, 1614382632329 * ms, 1614382632453 * ms),
        BrokerIntervalRow(1, "live", 2, 3, 1614382632453 * ms, 1614382634484 * ms),
        BrokerIntervalRow(1, "dead", 3, 6, 1614382634484 * ms, 1614382672544 * ms),
        BrokerIntervalRow(1, "live", 6, None, 1614382672544 * ms, None),
    ]
    # The control batches at 0 and 4 open quorum epochs 1 and 2; --skip-record-metadata
    # prints no control record fields, so the leader's id is unknown (-1).
    assert out.controller_timeline == [
        ControllerRow(-1, 1, 0, 1614382631640 * ms, ()),
        ControllerRow(-1, 2, 4, 1614382671857 * ms, ()),
    ]
    assert (out.counts.applied, out.counts.control, out.findings) == (7, 2, [])


def test_38_dump_aborted_topic_is_never_created() -> None:
    """The TopicRecord at 102 is in an aborted transaction: the change of its partition at
    105 and the registration change of broker 3 (never registered) at 107 are what Kafka's
    image would throw on."""
    out = fold_dump(FIXTURES / "dump-log-ak3.8-format.txt")
    assert out.partition_states == [] and out.partition_windows == []
    assert [(f.seq, f.kind, f.broker_id) for f in out.findings] == [
        (105, "metadata_record_rejected", None), (107, "metadata_record_rejected", 3)]
    c = out.counts
    assert (c.applied, c.aborted, c.unknown, c.control, c.rejected) == (0, 3, 1, 2, 2)
    assert [(r.controller_epoch, r.seq) for r in out.controller_timeline] == [(5, 100)]
