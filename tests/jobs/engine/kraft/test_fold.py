"""The KRaft replay's fold of one cluster (`jobs.engine.kraft.fold`), pure: the history of
`tests/helpers/kraft_segments.py` decoded by the ingest's decoder, folded, and every
table's rows checked against the hand derivation in that history's comments."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.engine.kraft.changes import kraft_changes
from jobs.engine.kraft.fold import ClusterRun, fold_cluster
from jobs.engine.kraft.metadata_source import ClusterLog, in_replay_order
from jobs.ingest.kraft.inputs import SEGMENT, Input, decode_all
from jobs.report.brokers import Election, controller_events
from statemachine.kraft.profiles import kraft_profile_for
from statemachine.kraft.records import record_of
from statemachine.model import NO_LEADER
from statemachine.rows import ControllerRow
from tests.helpers.kraft_segments import START_MS, write_segments

S = START_MS * 1000  # µs


def _run(tmp_path: Path) -> ClusterRun:
    folder = write_segments(tmp_path)
    inputs = [Input(p.name, SEGMENT, p.read_bytes()) for p in sorted(folder.iterdir())]
    rows, summaries = decode_all(inputs)
    log = in_replay_order([(r.source, record_of(r)) for r in rows])
    noops = sum(s.noops for s in summaries)
    assert (len(rows), noops) == (20, 3)
    return fold_cluster("k1", log, kraft_profile_for("3.7"), 1, "r1", noops)


def test_the_run_summary_counts_reconcile(tmp_path: Path) -> None:
    run = _run(tmp_path)
    c = run.counts
    # 3 registrations, 4 unfences, 2 TopicRecords, 3 PartitionRecords, 4 changes, the
    # fence and the RemoveTopicRecord; skipped: the LeaderChangeMessage (control), the
    # FeatureLevelRecord (not in the image) and the NoOps the ingest counted.
    assert (c.rows_read, c.rows_applied) == (23, 18)
    assert run.skipped == {"skipped:control": 1, "skipped:FeatureLevelRecord": 1,
                           "skipped:NoOpRecord": 3}
    assert c.rows_read == c.rows_applied + sum(run.skipped.values())
    assert c.findings_by_kind == run.skipped  # no finding in this history
    assert (run.facts.seq_min, run.facts.seq_max) == (0, 21)


def test_fence_opens_one_incident_and_the_unfence_closes_it(tmp_path: Path) -> None:
    run = _run(tmp_path)
    windows = {(w.partition, w.kind): w for w in run.outputs.partition_windows}
    assert sorted(windows) == [(0, "under_replicated"), (1, "offline"), (1, "under_min_isr")]
    off = windows[(1, "offline")]
    # From p1's own record of the fence's batch (offset 13, leader -1, +60 s) to its own
    # election in the unfence's batch (offset 17, +180 s); the fence (14) is its event.
    assert (off.start_seq, off.start_ts, off.end_seq, off.end_ts, off.seconds) == (
        13, S + 60_000_000, 17, S + 180_000_000, 120.0)
    assert (off.cause_event, off.cause_broker, off.end_event, off.incident_id) == (
        "FenceBrokerRecord", 1, "UnfenceBrokerRecord", 14)
    # p0's ISR [2] until the AlterPartition at offset 18 (+190 s) grows it back.
    assert (windows[(0, "under_replicated")].end_seq,
            windows[(0, "under_replicated")].seconds) == (18, 130.0)
    [incident] = run.incidents
    assert (incident.incident_id, incident.cause_event, incident.cause_broker,
            incident.end_seq, incident.seconds, incident.peak_partitions_offline,
            incident.offline_partition_seconds, incident.recovery_event) == (
        14, "FenceBrokerRecord", 1, 17, 120.0, 1, 120.0, "UnfenceBrokerRecord")
    assert (run.rollup.seconds, run.rollup.by_topic, run.rollup.by_cause_broker) == (
        120.0, {"orders": 120.0}, {"1": 120.0})
    assert run.rollup.period_end_us == S + 240_000_000  # the RemoveTopicRecord's time


def test_final_states_and_metadata_writes_carry_the_image_epochs(tmp_path: Path) -> None:
    run = _run(tmp_path)
    states = [(s.topic, s.partition, s.leader, s.leader_epoch, s.isr, s.zk_version)
              for s in run.outputs.partition_states]
    # p0: leader 1 -> 2 (epoch 1), ISR [2] then [2, 1]: partition epoch 2. p1: leader
    # -1 then 1 (two leader epochs), ISR [1] untouched. tmp is gone.
    assert states == [("orders", 0, 2, 1, (2, 1), 2), ("orders", 1, 1, 2, (1,), 2)]
    writes = {w.seq: w for w in run.writes}
    assert len(run.writes) == 18 and 11 not in writes and 1 not in writes
    assert (writes[13].record_type, writes[13].leader, writes[13].isr,
            writes[13].leader_epoch, writes[13].partition_epoch) == (
        "PartitionChangeRecord", -1, None, 1, 1)
    assert (writes[18].leader, writes[18].leader_epoch, writes[18].partition_epoch) == (
        -2, 1, 2)
    assert (writes[21].record_type, writes[21].topic) == ("RemoveTopicRecord", "tmp")
    assert (writes[14].broker_id, writes[14].fenced) == (1, True)


def test_the_changes_digest(tmp_path: Path) -> None:
    run = _run(tmp_path)
    got = {c.change: (c.count, [(r[0], r[2], r[3], r[4], r[5]) for r in c.first])
           for c in run.changes}
    assert list(got) == ["topic_created", "topic_deleted", "leader_moved",
                         "controller_failover", "broker_registered", "broker_unfenced",
                         "broker_fenced"]
    assert got["topic_created"] == (2, [(8, "orders", None, None, "2 partitions"),
                                        (19, "tmp", None, None, "1 partition")])
    assert got["topic_deleted"] == (1, [(21, "tmp", None, None, None)])
    assert got["leader_moved"] == (1, [(12, "orders", 0, None, "1 -> 2")])
    assert got["controller_failover"] == (1, [(0, None, None, 1, "the new controller, epoch 1")])
    assert got["broker_fenced"] == (1, [(14, None, None, 1, "epoch 1")])
    assert got["broker_unfenced"][0] == 4 and got["broker_registered"][0] == 3


@pytest.mark.parametrize("version, name", [("3.3", "3.3"), ("3.9", "3.6"), ("4.1", "4.0")])
def test_an_elr_record_is_outside_the_3x_profiles(version: str, name: str) -> None:
    from tests.helpers.kraft_history import batch, pcr, setup

    records = [*setup(), *batch(20, 1, pcr(0, elr=(2,)))]
    run = fold_cluster("k1", ClusterLog(records, rows_read=len(records)),
                       kraft_profile_for(version), 1, "r1")
    outside = run.counts.findings_by_kind["record_outside_profile"]
    assert kraft_profile_for(version).name == name
    assert outside == (0 if name == "4.0" else 1)
    assert run.counts.rows_read == run.counts.rows_applied + sum(run.skipped.values())


def test_the_printed_summary_reconciles(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from jobs.engine.kraft.pipeline import print_kraft_summary

    print_kraft_summary("OUT", "r1", {"k1": _run(tmp_path)}, {"k1": None})
    text = capsys.readouterr().out
    assert ("cluster k1: rows read 23 = applied 18 + skipped 5 (FeatureLevelRecord 1, "
            "NoOpRecord 3, control 1)") in text
    assert "offsets 0-21" in text and "offline partitions at the end: 0" in text
    assert "offline partition-seconds in this run: 120.0" in text


def test_a_quorum_epoch_without_a_leader_says_no_leader() -> None:
    """`kafka-dump-log` prints a LEADER_CHANGE control record without its leader: the
    digest and the report's axis say "no leader", never "broker -1"."""
    [change] = kraft_changes([], [], "r1", [ControllerRow(NO_LEADER, 4, 7, 1_000, (1, 2)),
                                            ControllerRow(2, 5, 9, 2_000, (1, 2))])
    assert [(r[4], r[5]) for r in change.first] == [
        (None, "a new quorum epoch 4, no leader named"), (2, "the new controller, epoch 5")]
    assert [e.label for e in controller_events([Election("k", NO_LEADER, 4, 7, 1_000),
                                                Election("k", 2, 5, 9, 2_000)])] == [
        "no leader (epoch 4)", "controller 2 (epoch 5)"]
