"""The KRaft simulator (`jobs.sim.kraft_history`) decoded by the ingest's decoder and folded
by the KRaft replay (pure): its offline windows reconcile with the records it wrote."""

from __future__ import annotations

from pathlib import Path

from jobs.engine.kraft.fold import ClusterRun, fold_cluster
from jobs.engine.kraft.metadata_source import in_replay_order
from jobs.ingest.kraft.inputs import SEGMENT, Input, decode_all
from jobs.sim.kraft_history import simulate, write_log
from statemachine.kraft.profiles import kraft_profile_for
from statemachine.kraft.records import record_of

MINUTES = 90


def _run(tmp_path: Path) -> tuple[ClusterRun, list[object]]:
    counts = write_log(tmp_path, simulate(MINUTES, seed=3), MINUTES)
    folder = tmp_path / "__cluster_metadata-0"
    rows, summaries = decode_all(Input(p.name, SEGMENT, p.read_bytes())
                                 for p in sorted(folder.iterdir()))
    assert sum(s.records for s in summaries) == counts["records"]
    assert sum(s.noops for s in summaries) == counts["noops"] == MINUTES * 120
    records = [record_of(r) for r in rows]
    log = in_replay_order([(r.source, rec) for r, rec in zip(rows, records, strict=True)])
    return fold_cluster("sim", log, kraft_profile_for("3.7"), 1, "r1",
                        counts["noops"]), records


def test_offline_windows_are_the_fences_of_single_replica_partitions(tmp_path: Path) -> None:
    run, records = _run(tmp_path)
    assert run.counts.rows_read == run.counts.rows_applied + sum(run.skipped.values())
    assert run.outputs.findings == []
    by_offset = {r.offset: r for r in records}  # type: ignore[attr-defined]
    offline = [w for w in run.outputs.partition_windows if w.kind == "offline"]
    assert offline and all(w.end_seq is not None for w in offline)
    parts = {(s.topic, s.partition): s for s in run.outputs.partition_states}
    for w in offline:
        # Opened by the fence (or controlled shutdown) of the broker, closed by its unfence:
        # at the partition's own record of the operation's batch when it has one (leader
        # -1, then its election), else at the broker record.
        event = by_offset[w.incident_id]
        assert event.record_type == "BrokerRegistrationChangeRecord"
        assert event.fenced or event.in_controlled_shutdown
        assert event.broker_id == w.cause_broker
        for edge, leader_ok in ((by_offset[w.start_seq], lambda x: x == -1),
                                (by_offset[w.end_seq], lambda x: x is not None and x >= 0)):
            if edge.record_type == "PartitionChangeRecord":
                assert edge.partition == w.partition and leader_ok(edge.leader)
            else:
                assert edge.record_type == "BrokerRegistrationChangeRecord"
                assert edge.broker_id == w.cause_broker
        closed = by_offset[w.end_seq]
        unfence = closed if closed.record_type != "PartitionChangeRecord" else next(
            r for r in records if r.batch_base_offset == closed.batch_base_offset  # type: ignore[attr-defined]
            and r.record_type == "BrokerRegistrationChangeRecord")  # type: ignore[attr-defined]
        assert unfence.fenced is False and unfence.broker_id == w.cause_broker
        if (w.topic, w.partition) in parts:  # not the deleted topic's
            assert parts[(w.topic, w.partition)].replicas == (w.cause_broker,)
    assert run.rollup.seconds == sum(w.seconds for w in offline)
    assert {i.incident_id for i in run.incidents} == {w.incident_id for w in offline}
