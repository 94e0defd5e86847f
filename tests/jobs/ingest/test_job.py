"""The Spark ingest job over every real log and the format fixtures at once (one Spark test:
a SparkSession costs seconds to start): its tables equal the pure pipeline's, `events/` has
EVENT_SCHEMA exactly, nothing is unparsed, and the summary reconciles.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from jobs.engine.event_log import check_event_files
from jobs.ingest import job as ingest_logs
from jobs.ingest.logparse import pipeline, version
from schemas.events import EVENT_SCHEMA
from schemas.ingest import OFFSET_EVIDENCE_SCHEMA
from tests.helpers import INGEST_FIXTURES

FIX = INGEST_FIXTURES
# The whole fixtures folder: its README.md is skipped (not a log name), the rest is read.
INPUTS = [str(FIX)]


def test_ingest_job_matches_pure_pipeline(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert ingest_logs.main(["--logs", *INPUTS, "--out", str(out), "--cluster", "c1"],
                            spark=spark) == 0
    expected = pipeline.ingest(INPUTS)
    assert [p.rsplit("/", 1)[-1] for p in expected.skipped] == ["README.md"]

    events = spark.read.parquet(str(out / "events"))
    assert events.schema == EVENT_SCHEMA
    # The replay job's own fail-fast check of event files (e.g. microsecond timestamps).
    assert check_event_files(str(out / "events"), log=lambda _m: None) > 0
    got_events = sorted(
        (r.seq, r.event_type, r.broker_id, r.topic, r.partition,
         tuple(r.replicas) if r.replicas is not None else None,
         tuple(r.isr) if r.isr is not None else None, r.leader_epoch,
         tuple(r.brokers) if r.brokers is not None else None, r.error,
         r.unclean_leader_election, r.source, r.cluster, r.leader, r.zk_version,
         r.controller_epoch, r.partition_state,
         tuple(r.topics_to_be_deleted) if r.topics_to_be_deleted is not None else None)
        for r in events.collect())
    want_events = sorted(
        (e.seq, e.event_type, e.broker_id, e.topic, e.partition, e.replicas, e.isr,
         e.leader_epoch, e.brokers, e.error, e.unclean_leader_election, e.source, "c1",
         e.leader, e.zk_version, e.controller_epoch, e.partition_state, e.topics_to_be_deleted)
        for e in expected.events)
    assert got_events == want_events
    # The failover-snapshot fixtures' PartitionSnapshot comes out of Spark too: all the
    # fixtures are one merged log here, so the first failover (0.8.2's) seeds old-0 and the
    # later ones find it known.
    assert [(e[3], e[-5], e[-2]) for e in want_events if e[1] == "PartitionSnapshot"] == [
        ("old", 2, "OnlinePartition")]
    # An ISR change notification's UpdateMetadata line (2.3) is an IsrChanged out of Spark
    # too, though the line is no event of its own.
    assert [(e[3], e[6]) for e in want_events if e[1] == "IsrChanged"
            and e[11].endswith("isr-notification/ak2.3/state-change.log:3")] == [
        ("orders", (1, 2))]
    assert len({r.seq for r in events.collect()}) == max(e.seq for e in expected.events)
    ts_by_source = {r.source: r.ts for r in events.collect()}
    for e in expected.events:  # the session time zone is UTC
        got = ts_by_source[e.source]
        assert int(got.timestamp() * 1_000_000) == e.ts or e.ts == 0

    observed = spark.read.parquet(str(out / "observed_state_changes")).collect()
    got_obs = sorted((r.pos, r.seq, r.source, r.kind, r.topic, r.partition, r.broker_id,
                      r.leader, r.leader_epoch, tuple(r.isr) if r.isr else r.isr, r.outcome)
                     for r in observed)
    want_obs = sorted((o.pos, o.seq, o.source, o.kind, o.topic, o.partition, o.broker_id,
                       o.leader, o.leader_epoch, o.isr, o.outcome)
                      for o in expected.observations)
    assert got_obs == want_obs

    assert spark.read.parquet(str(out / "unparsed")).count() == 0
    summary = {r.file: r for r in spark.read.parquet(str(out / "ingest_summary")).collect()}
    for s in expected.summary:
        r = summary[s.file]
        assert (r.lines_read, r.lines_extracted, r.lines_informational, r.lines_ignored,
                r.lines_unparsed) == (s.lines_read, s.lines_extracted, s.lines_informational,
                                      s.lines_ignored, s.lines_unparsed)
    total = summary["*"]
    assert total.lines_read == sum(s.lines_read for s in expected.summary)
    assert total.lines_read == total.lines_used + total.lines_ignored + total.lines_unparsed
    assert total.events == len(expected.events)
    assert total.observations == len(expected.observations)
    # The release lines each file's formats fit: the JVM's regular expressions agree with
    # the pure detector, and the fixtures of three releases make the total contradictory.
    for name, row in summary.items():
        if name != "*":
            seen: set[str] = set()
            raw = (FIX / name).read_bytes()
            text = gzip.decompress(raw) if name.endswith(".gz") else raw
            for line in text.decode(errors="replace").splitlines():
                seen.update(version.markers_in(line))
            found = version.detect(seen)
            assert row.kafka_version == (found.text() if found else None), name
    assert summary["versions/ak2.2/controller.log"].kafka_version == "2.2"
    assert summary["versions/ak3.7/controller.log"].kafka_version == "3.5-3.9"
    assert total.kafka_version is None

    # The broker offset lines (tests/fixtures/ingest/broker-logs and the real logs' server.log
    # lines) come out of Spark as the pure pipeline reads them, each with the broker that
    # wrote it (its line's, else its file's).
    evidence = spark.read.parquet(str(out / "offset_evidence"))
    assert evidence.schema == OFFSET_EVIDENCE_SCHEMA
    got_ev = sorted(
        (r.source, int(r.ts.timestamp() * 1_000_000), r.broker_id, r.broker_from, r.kind,
         r.topic, r.partition, r.leader_epoch, r.offset, r.log_end_offset, r.high_watermark,
         tuple(r.isr) if r.isr is not None else None, r.leader, r.format, r.text,
         tuple((x.broker_id, x.log_end_offset) for x in r.replica_offsets)
         if r.replica_offsets is not None else None)
        for r in evidence.collect())
    want_ev = sorted(
        (e.source, e.ts, e.broker_id, e.broker_from, e.kind, e.topic, e.partition,
         e.leader_epoch, e.offset, e.log_end_offset, e.high_watermark, e.isr, e.leader,
         e.format, e.text, e.replica_offsets) for e in expected.evidence)
    assert got_ev == want_ev and len(want_ev) >= 18
    assert {e.broker_from for e in expected.evidence} == {"line", "file"}
    for s in expected.summary:
        assert summary[s.file].offset_lines == sum(e.file == s.file for e in expected.evidence)
        assert summary[s.file].broker_id == expected.owners.get(s.file), s.file
    assert total.offset_lines == len(want_ev)

def test_an_assumed_failover_takes_the_epoch_its_lines_state(spark: Any, tmp_path: Path) -> None:
    """`controller-epoch/ak2.5` starts mid-life in epoch 16: the Spark job finds the epoch
    as the pure pipeline does (`logparse.assemble.assumed_epoch`)."""
    path = FIX / "controller-epoch" / "ak2.5"
    out = tmp_path / "out"
    assert ingest_logs.main(["--logs", str(path), "--out", str(out),
                             "--assume-controller", "2", "--assume-live", "1,2,3"],
                            spark=spark) == 0
    [row] = spark.read.parquet(str(out / "events")).where("seq = 0").collect()
    expected = pipeline.ingest([str(path)], assume_controller=2, assume_live=(1, 2, 3))
    assert (row.event_type, row.controller_epoch) == ("ControllerFailover", 16)
    assert expected.events[0].controller_epoch == 16
