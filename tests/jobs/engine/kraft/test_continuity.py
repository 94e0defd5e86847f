"""Holes of a KRaft metadata log and records delivered late (`jobs.engine.kraft.continuity`),
pure. The log's offsets are consecutive (`KafkaRaftClient` appends every record at the
next offset; only retention after a snapshot removes records: `KafkaMetadataLog`,
3.7.1), so an offset in neither a row nor a segment's range is a record not seen."""

from __future__ import annotations

from jobs.engine.kraft.continuity import OFFSET_GAP, holes, merged, offset_facts
from jobs.engine.kraft.metadata_source import ClusterLog, in_replay_order
from statemachine.kraft.records import MetadataRecord

SNAP = "00000000000000000020-0000000002.checkpoint"  # holds the records below offset 20


def _log(offsets: list[int], source: str = "seg.log", snapshot: bool = False) -> ClusterLog:
    rows = [(source, MetadataRecord(o, o, 1, 0, "TopicRecord")) for o in offsets]
    if snapshot:
        rows.append((SNAP, MetadataRecord(0, 0, 1, 0, "TopicRecord")))
    return in_replay_order(rows)


def test_ranges_are_merged_and_holes_found() -> None:
    assert merged([(5, 6), (0, 2), (3, 3), (9, 9)]) == [(0, 3), (5, 6), (9, 9)]
    assert holes([(0, 3), (5, 6), (9, 9)], 2, 10) == [(4, 4), (7, 8), (10, 10)]
    assert holes([(0, 9)], 0, 9) == []


def test_a_night_that_starts_after_a_hole_names_its_offsets() -> None:
    # The checkpoint folded through 15; tonight's segment starts at 21 (16-20 never came).
    facts = offset_facts(_log([21, 22, 24]), [(21, 25)], through=15)
    assert facts.gaps == ((16, 20),) and facts.missing == ((16, 20),)
    (finding,) = facts.findings
    assert (finding.kind, finding.seq) == (OFFSET_GAP, 16)
    assert "offsets 16-20 never arrived" in finding.detail and "--rebuild" in finding.detail


def test_noops_the_ingest_did_not_write_are_no_hole() -> None:
    # Offset 23 is a NoOp: not a row, but inside the segment's range.
    facts = offset_facts(_log([16, 22, 24]), [(16, 25)], through=15)
    assert facts.gaps == () and facts.top == 25  # the trailing NoOp read too


def test_a_hole_below_a_snapshot_is_said_to_be_retention() -> None:
    facts = offset_facts(_log([20, 21], snapshot=True), [(20, 21)], through=9)
    (finding,) = facts.findings
    assert facts.gaps == ((10, 19),)
    assert f"snapshot {SNAP} (end offset 20) holds them" in finding.detail
    assert "retention may have removed them" in finding.detail


def test_a_fresh_run_needs_only_the_log_after_its_snapshot() -> None:
    # Retention removed 0-19 (below the snapshot): a run from the snapshot misses nothing.
    assert offset_facts(_log([20, 21], snapshot=True), [(20, 21)], through=None).gaps == ()


def test_a_log_without_its_head_or_snapshot_says_so() -> None:
    (finding,) = offset_facts(_log([5, 6]), [(5, 6)], through=None).findings
    assert finding.detail.startswith("offsets 0-4 are not in the log and no snapshot")


def test_records_inside_an_earlier_hole_are_late_the_rest_already_folded() -> None:
    # The whole log delivered again, with 16-20 now there: those five are late.
    log = _log(list(range(0, 26)))
    facts = offset_facts(log, [(0, 25)], through=25, missing_before=[(16, 20)])
    assert facts.late == (16, 17, 18, 19, 20) and facts.gaps == ()
    assert facts.missing == ((16, 20),)  # still not folded: --rebuild folds them


def test_without_the_ingest_summary_nothing_is_guessed() -> None:
    facts = offset_facts(_log([21, 22]), None, through=15)
    assert (facts.checked, facts.gaps) == (False, ())
