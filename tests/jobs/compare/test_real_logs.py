"""Ingest -> replay -> compare, for every real log that contains a topic creation or a broker
change, plus the Spark job of `jobs.compare` once.

The replay runs through the pure core (`build_timeline` + `replay`), as the Spark replay
would. What each log shows, and where the replay cannot be held against it:

* The real logs are excerpts that start mid-life: none contains the controller's election,
  and the replay needs one (a ControllerFailover with the live brokers) before it can elect
  anything. Each test passes what the excerpt itself shows as `assume_controller` /
  `assume_live` (the `[Controller id=N]` prefix; the brokers the log names), which the
  ingest emits as a ControllerFailover at seq 0 with source `assumed:--assume-live`.
* cp-all-in-one-issue49 (2.6, state-change.log at INFO): the creation of eventbus-1 and -2
  is observed (NonExistent -> New, partition and replica) and matches the replay; New ->
  Online and the leader are only inferred (2.6 logs the Online transition at INFO, but the
  excerpt ends before it). eventbus-0 was created before the excerpt: not replayed.
* 2021-chinese-notes (2.0-2.3): the two creations are replayed; the only logged state is
  T-XXX-2's preferred-election result, leader 3, which the replay agrees with (3 is the
  first live replica of [3, 0]).
* dotnet-issue1460, hazelcast-issue22858 ("topic-create" in the name): only the NewReplica ->
  OnlineReplica lines are in the excerpt; the creation event is before it, so there is no
  partition to replay: every entity is `not_replayed` (observed only), nothing `differ`s.
* 2025-broker-startup, chinese-blog, 2016-confluent-docs (broker changes): no partition
  state is logged; the registered brokers Kafka printed (`all live brokers`) agree with the
  replay's broker timeline. Without the assumption the chinese-blog replay diverges: broker
  4's failure is of a broker the replay never saw (finding `unknown_broker_failure`) and
  brokers 1 and 2 are missing from its live set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.compare.brokers import BROKER_KINDS, compare_brokers
from jobs.compare.partitions import ENTITY_COLUMNS, compare_all
from jobs.ingest.logparse import pipeline
from schemas import event_types as ET
from schemas.arrow import arrow_schema
from statemachine.cluster import broker_intervals, build_timeline
from statemachine.events import Event
from statemachine.replay import replay
from tests.helpers import INGEST_FIXTURES, REAL_LOGS

REAL = REAL_LOGS
FIX = INGEST_FIXTURES


def ingest_replay(path: Path, controller: int | None = None, live: tuple[int, ...] = ()
                  ) -> dict[str, Any]:
    r = pipeline.ingest([str(path)], assume_controller=controller, assume_live=live)
    evs: list[Event] = list(r.events)  # every field, PartitionSnapshot's included
    tl = build_timeline(evs)  # cluster events and deletion activity
    _state, out = replay(None, [e for e in evs if e.event_type not in ET.CLUSTER_EVENTS], tl)
    obs = [o._asdict() for o in r.observations]
    rows, trans = compare_all(
        "default", obs, [c._asdict() for c in out.state_changes],
        [x._asdict() for x in out.leader_and_isr + out.update_metadata],
        [x._asdict() for x in out.partition_states], [x._asdict() for x in out.replica_states],
        [w._asdict() for w in out.partition_state_writes],
        [e._asdict() for e in evs if e.event_type == ET.PARTITION_SNAPSHOT])
    brokers = compare_brokers("default", [o for o in obs if o["kind"] in BROKER_KINDS],
                              [x._asdict() for x in broker_intervals(tl)])
    return {
        "ingest": r, "timeline": tl, "out": out, "brokers": brokers,
        "rows": [dict(zip(ENTITY_COLUMNS, x, strict=True)) for x in rows], "transitions": trans,
        "findings": [f.kind for f in (*tl.findings, *out.findings)],
    }


def _status(res: dict[str, Any]) -> dict[tuple[str, int, int | None], str]:
    return {(x["topic"], x["partition"], x["broker_id"]): x["status"] for x in res["rows"]}


def test_cp_all_in_one_topic_creation() -> None:
    res = ingest_replay(REAL / "confluentinc-cp-all-in-one-issue49__ak2.6__topic-create.log",
                        controller=1, live=(1,))
    assert res["findings"] == []
    assert _status(res) == {
        ("eventbus", 0, 1): "not_replayed",  # created before the excerpt
        ("eventbus", 1, None): "agree", ("eventbus", 1, 1): "agree",
        ("eventbus", 2, None): "agree", ("eventbus", 2, 1): "agree",
    }
    for x in res["rows"]:
        assert x["first_divergence_seq"] is None
        if x["status"] == "agree":
            assert (x["observed_transitions"], x["matched_transitions"],
                    x["inferred_transitions"]) == (1, 1, 1)
    # (partition, machine, from, to, evidence)
    evidence = sorted((t[2], t[4], t[7], t[8], t[10]) for t in res["transitions"])
    assert evidence == [
        (0, "replica", "NonExistentReplica", "NewReplica", "observed_only"),
        (1, "partition", "NewPartition", "OnlinePartition", "inferred"),
        (1, "partition", "NonExistentPartition", "NewPartition", "observed"),
        (1, "replica", "NewReplica", "OnlineReplica", "inferred"),
        (1, "replica", "NonExistentReplica", "NewReplica", "observed"),
        (2, "partition", "NewPartition", "OnlinePartition", "inferred"),
        (2, "partition", "NonExistentPartition", "NewPartition", "observed"),
        (2, "replica", "NewReplica", "OnlineReplica", "inferred"),
        (2, "replica", "NonExistentReplica", "NewReplica", "observed"),
    ]


def test_chinese_notes_topic_creation_and_preferred_leader() -> None:
    res = ingest_replay(
        REAL / "unattributed-2021-chinese-notes__ak2.0-2.3__topic-create-election.log",
        controller=0, live=(0, 1, 2, 3))
    assert res["findings"] == []
    statuses = _status(res)
    assert statuses.pop(("T-XXX", 2, None)) == "agree"
    assert set(statuses.values()) == {"not_observed"}  # everything else only inferred
    (t2,) = [x for x in res["rows"] if (x["topic"], x["partition"], x["broker_id"])
             == ("T-XXX", 2, None)]
    assert (t2["leader_agree"], t2["observed_points"]) == (True, 1)
    leaders = {(p.topic, p.partition): p.leader for p in res["out"].partition_states}
    assert leaders == {("T-XXX", 0): 1, ("T-XXX", 1): 0, ("T-XXX", 2): 3,
                       ("T-XXX-SNP", 0): 0, ("T-XXX-SNP", 1): 1, ("T-sss-SNP", 2): 3}


@pytest.mark.parametrize("name", [
    "confluentinc-confluent-kafka-dotnet-issue1460__ak2.6__topic-create.log",
    "hazelcast-issue22858__ak3.x__topic-create-testcontainer.log",
])
def test_creation_outside_the_excerpt_is_not_replayed(name: str) -> None:
    res = ingest_replay(REAL / name, controller=1, live=(1,))
    assert res["rows"]
    assert {x["status"] for x in res["rows"]} == {"not_replayed"}
    assert all(x["first_divergence_seq"] is None for x in res["rows"])


@pytest.mark.parametrize(("name", "controller", "live", "expected"), [
    ("unattributed-2025-broker-startup__ak3.5plus__new-broker-startup.log", 0, (0,),
     [(2, (0, 1, 2), True)]),
    ("unattributed-chinese-blog__ak0.8-0.10__broker-failure-no-timestamps.log", 1, (1, 2, 4),
     [(1, (1, 2, 3), True)]),
    ("unattributed-2016-confluent-docs__ak0.10.0__broker-startup.log", 1, (), []),
])
def test_broker_changes_agree_with_kafkas_broker_list(
        name: str, controller: int, live: tuple[int, ...],
        expected: list[tuple[int, tuple[int, ...], bool]]) -> None:
    res = ingest_replay(REAL / name, controller=controller, live=live)
    assert res["findings"] == []
    assert [(b[1], b[4], b[6]) for b in res["brokers"]] == expected
    assert res["rows"] == []  # no partition state in these excerpts


def test_chinese_blog_without_the_assumption_diverges_and_says_why() -> None:
    res = ingest_replay(
        REAL / "unattributed-chinese-blog__ak0.8-0.10__broker-failure-no-timestamps.log")
    assert res["findings"] == ["unknown_broker_failure"]
    (b,) = res["brokers"]
    assert (b[4], b[5], b[6], b[7]) == ((1, 2, 3), (3,), False, (1, 2))


def test_full_2_2_lifecycle_from_its_own_failover() -> None:
    """The 2.2 fixture starts with the controller's election, so no assumption is needed.
    Topic `payments` existed before the log (the failover lists it): the replay does not
    know it (findings), and its logged snapshot is `not_replayed`. Everything else that
    Kafka logged agrees, including the reassignment's epoch bump (epoch 2: the bounce of
    broker 1 elected 2 with ISR [2] in one write, so removing 1 from the ISR wrote nothing)."""
    res = ingest_replay(FIX / "versions" / "ak2.2")
    assert res["findings"] == ["election_rejected", "unknown_topic",
                               "stop_replica_response_ignored", "stop_replica_response_ignored"]
    statuses = _status(res)
    assert {k: v for k, v in statuses.items() if k[0] == "payments"} == {
        ("payments", 0, None): "not_replayed", ("payments", 0, 1): "not_replayed",
        ("payments", 0, 2): "not_replayed"}
    assert statuses[("audit", 0, None)] == "agree"
    assert statuses[("audit", 1, None)] == "agree"
    assert "differ" not in statuses.values()
    assert [(b[1], b[4], b[6]) for b in res["brokers"]] == [
        (1, (1, 2, 3), True), (4, (1, 2), True), (5, (1, 2, 3), True)]


def test_divergence_is_reported_with_its_first_seq() -> None:
    """The 3.7 fixture's reassignment never completes in the replay: the excerpt has no ISR
    change that brings the adding replica 4 into the ISR, so KIP-455 phase B (leader moves
    to 3, epoch 2) is logged by Kafka but not replayed. The comparison names seq 4."""
    res = ingest_replay(FIX / "versions" / "ak3.7")
    (p1,) = [x for x in res["rows"] if (x["topic"], x["partition"], x["broker_id"])
             == ("events", 1, None)]
    assert p1["status"] == "differ"
    assert (p1["first_divergence_seq"], p1["first_divergence_field"]) == (4, "state")
    assert p1["divergence_source"] == "state-change.log:9"
    (p0,) = [x for x in res["rows"] if (x["topic"], x["partition"], x["broker_id"])
             == ("events", 0, None)]
    assert p0["status"] == "agree"
    assert (p0["leader_agree"], p0["isr_agree"], p0["leader_epoch_agree"]) == (
        True, True, True)


def _write(table: pa.Table, path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path / "part-0.parquet")


def _write_replay_tables(res_by_cluster: dict[str, dict[str, Any]], out: Path) -> None:
    """The core's rows in the layout `jobs.replay` writes: `<table>/run_id=<id>/`, columns
    of `schemas.tables` after `run_id` (the partition column lives in the path)."""
    from schemas.tables import TABLES

    def rows_of(res: dict[str, Any], table: str) -> list[Any]:
        o = res["out"]
        return {
            "state_changes": o.state_changes, "leader_and_isr_requests": o.leader_and_isr,
            "update_metadata_requests": o.update_metadata, "partition_states":
            o.partition_states, "replica_states": o.replica_states,
            "broker_timeline": broker_intervals(res["timeline"]),
            "partition_state_writes": o.partition_state_writes,
        }[table]

    for table in ("state_changes", "leader_and_isr_requests", "update_metadata_requests",
                  "partition_states", "replica_states", "broker_timeline",
                  "partition_state_writes"):
        schema = arrow_schema(TABLES[table])
        schema = schema.remove(schema.get_field_index("run_id"))
        cols: dict[str, list[Any]] = {f.name: [] for f in schema}
        for cluster, res in res_by_cluster.items():
            for row in rows_of(res, table):
                cols["cluster"].append(cluster)
                for k, v in row._asdict().items():
                    cols[k].append(list(v) if isinstance(v, tuple) else v)
        arrays = [pa.array(cols[f.name], type=f.type) for f in schema]
        _write(pa.Table.from_arrays(arrays, schema=schema), out / table / "run_id=r1")


def _write_observed(cases: dict[str, dict[str, Any]], path: Path) -> None:
    """The ingest's observations of each case, as observed_state_changes of its cluster."""
    from schemas.ingest import OBSERVED_SCHEMA

    schema = arrow_schema(OBSERVED_SCHEMA)
    cols: dict[str, list[Any]] = {f.name: [] for f in schema}
    for cluster, res in cases.items():
        for o in res["ingest"].observations:
            cols["cluster"].append(cluster)
            for k, v in o._asdict().items():
                cols[k].append(list(v) if isinstance(v, tuple) else v)
    _write(pa.Table.from_arrays([pa.array(cols[f.name], type=f.type) for f in schema],
                                schema=schema), path)


def _write_events(cases: dict[str, dict[str, Any]], path: Path) -> None:
    """The ingest's events of each case, as `events/` of its cluster."""
    from schemas.events import EVENT_SCHEMA

    schema = arrow_schema(EVENT_SCHEMA)
    cols: dict[str, list[Any]] = {f.name: [] for f in schema}
    for cluster, res in cases.items():
        for e in res["ingest"].events:
            row = {**e._asdict(), "cluster": cluster}
            for name, values in cols.items():
                v = row.get(name)
                values.append(list(v) if isinstance(v, tuple) else v)
    _write(pa.Table.from_arrays([pa.array(cols[f.name], type=f.type) for f in schema],
                                schema=schema), path)


def test_compare_job(spark: Any, tmp_path: Path, capsys: Any) -> None:
    from jobs.compare import job as compare

    cases = {
        # A failover that seeds old-0, then the full UpdateMetadata of a joining broker:
        # compare reads the seeded leadership from the ingest's events/.
        "seeded": ingest_replay(FIX / "failover-elections" / "ak1.1"),
        "cp": ingest_replay(REAL / "confluentinc-cp-all-in-one-issue49__ak2.6__topic-create.log",
                            controller=1, live=(1,)),
        "v37": ingest_replay(FIX / "versions" / "ak3.7"),
        "blog": ingest_replay(
            REAL / "unattributed-chinese-blog__ak0.8-0.10__broker-failure-no-timestamps.log",
            controller=1, live=(1, 2, 4)),
    }
    _write_observed(cases, tmp_path / "ingest" / "observed_state_changes")
    _write_events(cases, tmp_path / "ingest" / "events")
    _write_replay_tables(cases, tmp_path / "replay")

    # One partition differs (below): --fail-on differ makes that exit 1, after listing it.
    assert compare.main(["--observed", str(tmp_path / "ingest"), "--replayed",
                         str(tmp_path / "replay"), "--out", str(tmp_path / "cmp"),
                         "--fail-on", "differ"], spark=spark) == 1
    listed = [line for line in capsys.readouterr().err.splitlines() if "differs:" in line]
    assert listed == ["[compare] WARNING: differs: v37 events-1 from seq 4: state logged "
                      "OnlinePartition->OnlinePartition, replayed OnlinePartition"]
    got = spark.read.parquet(str(tmp_path / "cmp" / "comparison")).collect()
    got_rows = sorted((tuple(r[c] for c in ENTITY_COLUMNS) for r in got), key=repr)
    want_rows = sorted(
        ((cluster, *tuple(x[c] for c in ENTITY_COLUMNS[1:]))
         for cluster, res in cases.items() for x in res["rows"]), key=repr)
    assert got_rows == want_rows
    trans = spark.read.parquet(str(tmp_path / "cmp" / "transitions")).count()
    assert trans == sum(len(res["transitions"]) for res in cases.values())
    brokers = [(r.cluster, r.seq, list(r.observed), list(r.replayed), r.agree) for r in
               spark.read.parquet(str(tmp_path / "cmp" / "brokers")).collect()]
    assert sorted(brokers, key=repr) == [("blog", 1, [1, 2, 3], [1, 2, 3], True),
                                         ("seeded", 1, [1, 3], [1, 3], True),
                                         ("seeded", 3, [1, 3, 4], [1, 3, 4], True),
                                         ("v37", 1, [1, 2, 3, 4], [1, 2, 3, 4], True)]
    assert {x["status"] for x in cases["seeded"]["rows"]} == {"agree"}
    summary = dict(spark.read.parquet(str(tmp_path / "cmp" / "compare_summary")).collect())
    assert summary["partition_differ"] == 1  # events-1 of the 3.7 fixture
    assert summary["brokers_agree"] == 4
    assert summary["transitions_seeded"] == 3
    # No ingest_summary next to the observations, no --kafka-version: the default profile.
    assert [k for k in summary if k.startswith("kafka_profile:")] == ["kafka_profile:3.7"]


def test_compare_job_reads_empty_and_missing_replay_tables(spark: Any, tmp_path: Path) -> None:
    """Excerpts in which no partition was replayed: the replay's partition tables are empty
    (one schema-only file) or, in a replay output written before every run wrote every table,
    absent. Compare reads them as empty tables, still compares the broker lists, and its
    summary says per excerpt that nothing but the broker list could be compared."""
    import shutil

    from jobs.compare import job as compare

    cases = {
        "blog": ingest_replay(
            REAL / "unattributed-chinese-blog__ak0.8-0.10__broker-failure-no-timestamps.log",
            controller=1, live=(1, 2, 4)),
        "dotnet": ingest_replay(
            REAL / "confluentinc-confluent-kafka-dotnet-issue1460__ak2.6__topic-create.log",
            controller=1, live=(1,)),
    }
    _write_observed(cases, tmp_path / "ingest" / "observed_state_changes")
    _write_replay_tables(cases, tmp_path / "replay")
    for table in ("state_changes", "partition_states", "leader_and_isr_requests"):
        shutil.rmtree(tmp_path / "replay" / table)  # as an older replay left them
    # The ingest dated the log's formats to 1.0-2.2: compare holds it to the 2.2 profile.
    from schemas.ingest import INGEST_SUMMARY_SCHEMA
    spark.createDataFrame([("blog", "*", 0, 0, 0, 0, 0, 0, 0, 0, "1.0-2.2", 0, None)],
                          INGEST_SUMMARY_SCHEMA).write.parquet(
        str(tmp_path / "ingest" / "ingest_summary"))

    assert compare.main(["--observed", str(tmp_path / "ingest"), "--replayed",
                         str(tmp_path / "replay"), "--out", str(tmp_path / "cmp")],
                        spark=spark) == 0
    statuses = {r.status for r in spark.read.parquet(str(tmp_path / "cmp" / "comparison"))
                .collect()}
    assert statuses == {"not_replayed"}
    brokers = [(r.cluster, r.seq, list(r.observed), r.agree) for r in
               spark.read.parquet(str(tmp_path / "cmp" / "brokers")).collect()]
    assert brokers == [("blog", 1, [1, 2, 3], True)]
    summary = dict(spark.read.parquet(str(tmp_path / "cmp" / "compare_summary")).collect())
    assert {k: v for k, v in summary.items() if k.startswith("excerpt:")} == {
        "excerpt:blog:partitions_compared": 0, "excerpt:blog:observations_compared": 0,
        "excerpt:blog:transitions_matched": 0, "excerpt:blog:broker_lists_compared": 1,
        "excerpt:dotnet:partitions_compared": 0, "excerpt:dotnet:observations_compared": 0,
        "excerpt:dotnet:transitions_matched": 0, "excerpt:dotnet:broker_lists_compared": 0,
    }
    assert [k for k in summary if k.startswith("kafka_profile:")] == ["kafka_profile:2.2"]
