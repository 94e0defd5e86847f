"""Hold the replay against what Kafka itself logged (issue 5).

    .venv/bin/python -m jobs.compare --observed DIR --replayed DIR --out DIR [--run-id ID]
    spark-submit --py-files dist/replay.zip jobs/compare.py <same arguments>

--observed is the ingest's --out (or its `observed_state_changes/`); --replayed is the
replay's --out (`state_changes/`, `leader_and_isr_requests/`, `update_metadata_requests/`,
`partition_states/`, `replica_states/`, partitioned by run_id; the newest run unless
--run-id). Writes under --out:

    comparison/         one row per partition and per replica: agree / differ / not_observed /
                        not_replayed, agreement on state, leader, ISR and leader epoch, and the
                        first seq where they diverge (field, both values, the log line)
    brokers/            each time Kafka logged the registered brokers (failover `Currently
                        active brokers`, BrokerChange `all live brokers`): the replay's live
                        and shutting-down brokers at that seq (`broker_timeline`), agree or not
    transitions/        every transition: `observed` (the replay made it and Kafka logged it),
                        `inferred` (only the replay: Kafka 2.6+ logs most transitions at TRACE,
                        which the default INFO config drops), `observed_only` (Kafka logged it,
                        the replay did not: a divergence)
    compare_summary/    counts by status and by evidence

How a logged value is matched: an observation carries the `seq` of the last event at or
before it (`jobs.ingest.logparse.assemble`). A logged transition matches a replayed one with the
same (machine, broker, from, to, valid) at that seq, else at an earlier unmatched seq. A
logged leader / ISR / leader epoch agrees if any LeaderAndIsr or UpdateMetadata state the
replay produced for the partition at that seq has it (the value in force before it, if the
replay wrote none at that seq); ISRs are compared as sets. A value the replay cannot know
(nothing replayed yet for that partition) is counted neither way.

The comparison itself is pure Python (`compare_partition`), run per partition by Spark's
cogroup (`applyInArrow`); no Kafka rule is decided here.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

PARTITION, REPLICA = "partition", "replica"
OBSERVED, INFERRED, OBSERVED_ONLY = "observed", "inferred", "observed_only"
AGREE, DIFFER, NOT_OBSERVED, NOT_REPLAYED = "agree", "differ", "not_observed", "not_replayed"

# Observation kinds that carry a leader / leader epoch / ISR of the partition.
LEADERSHIP_KINDS = frozenset({
    "partition_transition", "isr_shrink", "leader_elected", "leader_epoch_updated",
    "leader_and_isr_request", "update_metadata_request", "broker_leader_and_isr",
    "broker_metadata", "broker_transition", "broker_leader_start", "broker_follower_start",
    "isr_update",
})
FIELDS = ("leader", "isr", "leader_epoch")

ENTITY_COLUMNS: tuple[str, ...] = (
    "cluster", "topic", "partition", "broker_id", "entity", "status", "observed_points",
    "observed_transitions", "matched_transitions", "inferred_transitions",
    "observed_only_transitions", "state_agree", "leader_agree", "isr_agree",
    "leader_epoch_agree", "first_divergence_seq", "first_divergence_field", "observed_value",
    "replayed_value", "divergence_source", "observed_state", "replayed_state",
)
TRANSITION_COLUMNS: tuple[str, ...] = (
    "cluster", "topic", "partition", "broker_id", "machine", "seq", "step", "from_state",
    "to_state", "valid", "evidence", "source",
)


def _v(x: Any) -> Any:
    """Normalise a value read back from Arrow/pandas (arrays -> tuples, NaN -> None)."""
    if x is None:
        return None
    if isinstance(x, float) and x != x:
        return None
    if hasattr(x, "tolist") and not isinstance(x, (int, str)):
        x = x.tolist()
    if isinstance(x, list):
        return tuple(int(i) for i in x)
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and x.is_integer():
        return int(x)  # a nullable int column read through pandas
    return x


def _fmt(x: Any) -> str | None:
    if x is None:
        return None
    if isinstance(x, tuple):
        return "[" + ",".join(str(i) for i in x) + "]"
    return str(x)


class _Entity:
    __slots__ = ("broker", "points", "obs_tr", "matched", "inferred", "only", "agree",
                 "first", "obs_state", "rep_state", "has_replay")

    def __init__(self, broker: int | None) -> None:
        self.broker = broker
        self.points = 0
        self.obs_tr = self.matched = self.inferred = self.only = 0
        self.agree: dict[str, bool | None] = {"state": None, **dict.fromkeys(FIELDS)}
        self.first: tuple[int, int, str, Any, Any, str | None] | None = None
        self.obs_state: str | None = None
        self.rep_state: str | None = None
        self.has_replay = False

    def verdict(self, field: str, ok: bool, seq: int, pos: int, observed: Any, replayed: Any,
                source: str | None) -> None:
        if ok:
            if self.agree[field] is None:
                self.agree[field] = True
            return
        self.agree[field] = False
        cand = (seq, pos, field, observed, replayed, source)
        if self.first is None or cand[:2] < self.first[:2]:
            self.first = cand


def compare_partition(
    cluster: str, topic: str, partition: int,
    observed: Iterable[dict[str, Any]],
    changes: Iterable[dict[str, Any]],
    leadership: Iterable[dict[str, Any]],
    final_partition_state: str | None,
    final_replica_states: dict[int, str],
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Compare one partition. `observed`: rows of observed_state_changes; `changes`: rows of
    state_changes; `leadership`: rows of leader_and_isr_requests and
    update_metadata_requests (seq, batch, leader, leader_epoch, isr). Returns
    (comparison rows, transition rows) as tuples in ENTITY_COLUMNS / TRANSITION_COLUMNS order.
    """
    obs = sorted((dict(o) for o in observed), key=lambda o: (_v(o["seq"]), _v(o["pos"])))
    rep = sorted((dict(c) for c in changes), key=lambda c: (_v(c["seq"]), _v(c["step"])))
    # (seq, batch, *FIELDS)
    leads: list[tuple[Any, ...]] = sorted(
        ((_v(x["seq"]), _v(x.get("batch")) or 0, _v(x["leader"]), _v(x["isr"]),
          _v(x["leader_epoch"])) for x in leadership),
        key=lambda lead: (lead[0], lead[1]))
    entities: dict[int | None, _Entity] = {}

    def ent(b: int | None) -> _Entity:
        e = entities.get(b)
        if e is None:
            e = entities[b] = _Entity(b)
        return e

    # -- replayed transitions, by (machine, broker) ----------------------------------------
    rep_by: dict[tuple[str, int | None], list[list[Any]]] = {}
    for c in rep:
        machine = c["machine"]
        b = _v(c["broker_id"]) if machine == REPLICA else None
        e = ent(b)
        e.has_replay = True
        rep_by.setdefault((machine, b), []).append(
            [_v(c["seq"]), _v(c["step"]), c["from_state"], c["to_state"], bool(c["valid"]),
             None])  # last: the observation that matched it
    if final_partition_state is not None:
        ent(None).has_replay = True
        ent(None).rep_state = final_partition_state
    for b, st in final_replica_states.items():
        ent(b).has_replay = True
        ent(b).rep_state = st
    if leads:
        ent(None).has_replay = True

    def replay_state_at(machine: str, b: int | None, seq: int) -> str | None:
        st = None
        for r in rep_by.get((machine, b), ()):
            if r[0] > seq:
                break
            if r[4]:
                st = r[3]
        return st

    def touched_by(seq: int) -> bool:
        return any(r[0] <= seq for rs in rep_by.values() for r in rs) or any(
            lead[0] <= seq for lead in leads)

    transitions: list[tuple[Any, ...]] = []
    for o in obs:
        kind = o["kind"]
        seq, pos, src = _v(o["seq"]), _v(o["pos"]), o.get("source")
        if kind in ("partition_transition", "replica_transition"):
            machine = PARTITION if kind == "partition_transition" else REPLICA
            b = _v(o["broker_id"]) if machine == REPLICA else None
            e = ent(b)
            e.points += 1
            e.obs_tr += 1
            valid = bool(_v(o["valid"])) if _v(o["valid"]) is not None else True
            if valid:
                e.obs_state = o["to_state"]
            key = (o["from_state"], o["to_state"], valid)
            cands = rep_by.get((machine, b), [])
            hit = next((r for r in cands if r[5] is None and r[0] == seq
                        and (r[2], r[3], r[4]) == key), None)
            if hit is None:
                hit = next((r for r in cands if r[5] is None and r[0] <= seq
                            and (r[2], r[3], r[4]) == key), None)
            if hit is not None:
                hit[5] = src
                e.matched += 1
                e.verdict("state", True, seq, pos, None, None, src)
            else:
                e.only += 1
                transitions.append((cluster, topic, partition, b, machine, seq, None,
                                    o["from_state"], o["to_state"], valid, OBSERVED_ONLY, src))
                if touched_by(seq) or e.has_replay:
                    e.verdict("state", False, seq, pos,
                              f"{o['from_state']}->{o['to_state']}" + ("" if valid else
                                                                       " (failed)"),
                              replay_state_at(machine, b, seq), src)
        elif kind in ("partition_snapshot", "replica_snapshot"):
            machine = PARTITION if kind == "partition_snapshot" else REPLICA
            b = _v(o["broker_id"]) if machine == REPLICA else None
            e = ent(b)
            e.points += 1
            got = replay_state_at(machine, b, seq)
            if got is not None:
                e.verdict("state", got == o["to_state"], seq, pos, o["to_state"], got, src)
        if kind in LEADERSHIP_KINDS:
            vals: dict[str, Any] = {f: _v(o[f]) for f in FIELDS}
            if all(v is None for v in vals.values()):
                continue
            e = ent(None)
            if kind not in ("partition_transition",):
                e.points += 1
            at = [lead for lead in leads if lead[0] == seq]
            if not at:
                before = [lead for lead in leads if lead[0] < seq]
                at = before[-1:]
            if not at and not touched_by(seq):
                continue  # nothing replayed for this partition yet: cannot be compared
            for i, f in enumerate(FIELDS):
                want = vals[f]
                if want is None:
                    continue
                values = [lead[2 + i] for lead in at]
                if f == "isr":
                    ok = any(g is not None and set(g) == set(want) for g in values)
                else:
                    ok = want in values
                e.verdict(f, ok, seq, pos, _fmt(want), _fmt(values[-1]) if values else None,
                          src)

    for (machine, b), rs in rep_by.items():
        for r in rs:
            e = ent(b)
            if r[5] is None:
                e.inferred += 1
            transitions.append((cluster, topic, partition, b, machine, r[0], r[1], r[2], r[3],
                                r[4], OBSERVED if r[5] is not None else INFERRED, r[5]))

    rows: list[tuple[Any, ...]] = []
    for b in sorted(entities, key=lambda x: -1 if x is None else x):
        e = entities[b]
        if not e.has_replay:
            status = NOT_REPLAYED
        elif e.points == 0:
            status = NOT_OBSERVED
        elif any(v is False for v in e.agree.values()):
            status = DIFFER
        else:
            status = AGREE
        first = e.first or (None, None, None, None, None, None)
        rows.append((
            cluster, topic, partition, b, PARTITION if b is None else REPLICA, status,
            e.points, e.obs_tr, e.matched, e.inferred, e.only, e.agree["state"],
            e.agree["leader"], e.agree["isr"], e.agree["leader_epoch"], first[0], first[2],
            _fmt(first[3]), _fmt(first[4]), first[5], e.obs_state, e.rep_state,
        ))
    return rows, transitions


def compare_all(cluster: str, observations: Iterable[dict[str, Any]], state_changes: Iterable[
        dict[str, Any]], leadership: Iterable[dict[str, Any]],
        partition_states: Iterable[dict[str, Any]], replica_states: Iterable[dict[str, Any]]
        ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """`compare_partition` over every partition of one cluster, in one process (tests,
    small logs): the same grouping the Spark job does with cogroup."""
    groups: dict[tuple[str, int], dict[str, Any]] = {}

    def g(t: str, p: int) -> dict[str, Any]:
        return groups.setdefault((t, p), {"o": [], "c": [], "l": [], "p": None, "r": {}})

    for o in observations:
        if o.get("topic") is not None and o.get("partition") is not None:
            g(o["topic"], o["partition"])["o"].append(o)
    for c in state_changes:
        g(c["topic"], c["partition"])["c"].append(c)
    for x in leadership:
        g(x["topic"], x["partition"])["l"].append(x)
    for ps in partition_states:
        g(ps["topic"], ps["partition"])["p"] = ps["state"]
    for rs in replica_states:
        g(rs["topic"], rs["partition"])["r"][rs["broker_id"]] = rs["state"]
    rows: list[tuple[Any, ...]] = []
    trans: list[tuple[Any, ...]] = []
    for (t, p), d in sorted(groups.items()):
        r, tr = compare_partition(cluster, t, p, d["o"], d["c"], d["l"], d["p"], d["r"])
        rows += r
        trans += tr
    return rows, trans


BROKER_KINDS = frozenset({"failover_brokers", "live_brokers"})
BROKER_COLUMNS: tuple[str, ...] = (
    "cluster", "seq", "source", "kind", "observed", "replayed", "agree", "missing_in_replay",
    "extra_in_replay",
)


def compare_brokers(cluster: str, observed: Iterable[dict[str, Any]],
                    intervals: Iterable[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Kafka's registered brokers vs the replay's live + shutting-down brokers after the
    same seq. `intervals`: rows of broker_timeline (status over [seq_from, seq_to))."""
    iv = [(_v(r["broker_id"]), r["status"], _v(r["seq_from"]), _v(r["seq_to"]))
          for r in intervals]
    rows: list[tuple[Any, ...]] = []
    for o in sorted(observed, key=lambda o: (_v(o["seq"]), _v(o["pos"]))):
        seq = _v(o["seq"])
        want = tuple(sorted(_v(o["brokers"]) or ()))
        got = tuple(sorted({b for b, st, lo, hi in iv if st in ("live", "shutting_down")
                            and lo <= seq and (hi is None or seq < hi)}))
        rows.append((cluster, seq, o.get("source"), o["kind"], want, got, want == got,
                     tuple(b for b in want if b not in got),
                     tuple(b for b in got if b not in want)))
    return rows


# -- Spark ----------------------------------------------------------------------------------

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="jobs.compare", description=__doc__.split("\n\n")[0])
    p.add_argument("--observed", required=True, help="ingest output (or observed_state_changes)")
    p.add_argument("--replayed", required=True, help="replay output directory")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--run-id", help="replay run to compare (default: the newest)")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    return p.parse_args(argv)


def _schemas() -> tuple[Any, Any, Any]:
    from pyspark.sql import types as T

    types: dict[str, Any] = {
        "cluster": T.StringType(), "topic": T.StringType(), "partition": T.IntegerType(),
        "broker_id": T.IntegerType(), "entity": T.StringType(), "status": T.StringType(),
        "first_divergence_seq": T.LongType(), "first_divergence_field": T.StringType(),
        "observed_value": T.StringType(), "replayed_value": T.StringType(),
        "divergence_source": T.StringType(), "observed_state": T.StringType(),
        "replayed_state": T.StringType(), "machine": T.StringType(), "seq": T.LongType(),
        "step": T.IntegerType(), "from_state": T.StringType(), "to_state": T.StringType(),
        "valid": T.BooleanType(), "evidence": T.StringType(), "source": T.StringType(),
    }
    for c in ("observed_points", "observed_transitions", "matched_transitions",
              "inferred_transitions", "observed_only_transitions"):
        types[c] = T.LongType()
    for c in ("state_agree", "leader_agree", "isr_agree", "leader_epoch_agree"):
        types[c] = T.BooleanType()
    entity = T.StructType([T.StructField(c, types[c], True) for c in ENTITY_COLUMNS])
    trans = T.StructType([T.StructField(c, types[c], True) for c in TRANSITION_COLUMNS])
    # cogroup output: tag + union of both row layouts
    union_cols = ["rtype", *ENTITY_COLUMNS,
                  *[c for c in TRANSITION_COLUMNS if c not in ENTITY_COLUMNS]]
    types["rtype"] = T.StringType()
    union = T.StructType([T.StructField(c, types[c], True) for c in union_cols])
    return entity, trans, union


def _read_table(spark: Any, base: str, table: str, run_id: str | None) -> Any:
    from pyspark.sql import functions as F

    df = spark.read.parquet(f"{base.rstrip('/')}/{table}")
    if "run_id" in df.columns and run_id is not None:
        df = df.filter(F.col("run_id") == run_id)
    return df


def _newest_run(spark: Any, base: str) -> str | None:
    from pyspark.sql import functions as F

    df = spark.read.parquet(f"{base.rstrip('/')}/partition_states")
    if "run_id" not in df.columns:
        return None
    row = df.agg(F.max("run_id").alias("r")).collect()[0]
    return None if row["r"] is None else str(row["r"])


def _compare_brokers_table(spark: Any, obs_dir: str, replayed: str, run_id: str | None
                           ) -> Any:
    """Small (one row per logged broker list): collected and compared on the driver."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    obs = (spark.read.parquet(obs_dir).filter(F.col("kind").isin(*BROKER_KINDS))
           .select("cluster", "seq", "pos", "source", "kind", "brokers").collect())
    try:
        tl = _read_table(spark, replayed, "broker_timeline", run_id).collect()
    except Exception:  # noqa: BLE001 - a replay without cluster events has no timeline
        tl = []
    rows: list[tuple[Any, ...]] = []
    for cluster in sorted({o["cluster"] for o in obs}):
        rows += compare_brokers(cluster, [o.asDict() for o in obs if o["cluster"] == cluster],
                                [r.asDict() for r in tl if r["cluster"] == cluster])
    ints = T.ArrayType(T.IntegerType(), True)
    schema = T.StructType([
        T.StructField("cluster", T.StringType()), T.StructField("seq", T.LongType()),
        T.StructField("source", T.StringType()), T.StructField("kind", T.StringType()),
        T.StructField("observed", ints), T.StructField("replayed", ints),
        T.StructField("agree", T.BooleanType()), T.StructField("missing_in_replay", ints),
        T.StructField("extra_in_replay", ints),
    ])
    return spark.createDataFrame([[*r[:4], list(r[4]), list(r[5]), r[6], list(r[7]),
                                   list(r[8])] for r in rows], schema)


def run(spark: Any, args: argparse.Namespace, log: Any = print) -> dict[str, int]:
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema

    entity_schema, trans_schema, union_schema = _schemas()
    obs_dir = args.observed.rstrip("/")
    if Path(obs_dir, "observed_state_changes").exists() or not obs_dir.endswith(
            "observed_state_changes"):
        obs_dir = f"{obs_dir}/observed_state_changes"
    run_id = args.run_id or _newest_run(spark, args.replayed)
    key = ["cluster", "topic", "partition"]

    observed = (
        spark.read.parquet(obs_dir)
        .filter(F.col("topic").isNotNull() & F.col("partition").isNotNull())
        .select(*key, "seq", "pos", "source", "kind", "broker_id", "from_state", "to_state",
                "leader", "leader_epoch", "isr", "valid")
    )
    changes = _read_table(spark, args.replayed, "state_changes", run_id).select(
        *key, F.lit("C").alias("tag"), "seq", F.col("step").cast("long").alias("n"),
        "broker_id", "machine", "from_state", "to_state", "valid",
        F.lit(None).cast("int").alias("leader"), F.lit(None).cast("int").alias("leader_epoch"),
        F.lit(None).cast("array<int>").alias("isr"), F.lit(None).cast("string").alias("state"))
    lead_cols = [*key, "seq", F.col("batch").cast("long").alias("n"),
                 F.lit(None).cast("int").alias("broker_id"),
                 F.lit(None).cast("string").alias("machine"),
                 F.lit(None).cast("string").alias("from_state"),
                 F.lit(None).cast("string").alias("to_state"),
                 F.lit(None).cast("boolean").alias("valid"), "leader", "leader_epoch", "isr",
                 F.lit(None).cast("string").alias("state")]
    lai = _read_table(spark, args.replayed, "leader_and_isr_requests", run_id).select(
        *lead_cols[:3], F.lit("L").alias("tag"), *lead_cols[3:])
    um = _read_table(spark, args.replayed, "update_metadata_requests", run_id).select(
        *lead_cols[:3], F.lit("L").alias("tag"), *lead_cols[3:])
    nulls = [F.lit(None).cast("long").alias("seq"), F.lit(None).cast("long").alias("n")]
    pst = _read_table(spark, args.replayed, "partition_states", run_id).select(
        *key, F.lit("P").alias("tag"), *nulls, F.lit(None).cast("int").alias("broker_id"),
        *lead_cols[6:10], F.lit(None).cast("int").alias("leader"),
        F.lit(None).cast("int").alias("leader_epoch"),
        F.lit(None).cast("array<int>").alias("isr"), "state")
    rst = _read_table(spark, args.replayed, "replica_states", run_id).select(
        *key, F.lit("R").alias("tag"), *nulls, "broker_id", *lead_cols[6:10],
        F.lit(None).cast("int").alias("leader"), F.lit(None).cast("int").alias("leader_epoch"),
        F.lit(None).cast("array<int>").alias("isr"), "state")
    replayed = changes.unionByName(lai).unionByName(um).unionByName(pst).unionByName(rst)
    union_cols = [f.name for f in union_schema.fields]

    arrow_schema = to_arrow_schema(union_schema, timezone="UTC")

    def fn(k: tuple[Any, ...], o: pa.Table, r: pa.Table) -> pa.Table:
        cluster, topic, partition = (x.as_py() if hasattr(x, "as_py") else x for x in k)
        recs = r.to_pylist()
        ch = [{**x, "step": x["n"]} for x in recs if x["tag"] == "C"]
        ld = [{**x, "batch": x["n"]} for x in recs if x["tag"] == "L"]
        ps = next((x["state"] for x in recs if x["tag"] == "P"), None)
        rs = {int(x["broker_id"]): x["state"] for x in recs if x["tag"] == "R"}
        ents, trans = compare_partition(cluster, topic, int(partition), o.to_pylist(),
                                        ch, ld, ps, rs)
        cols: dict[str, list[Any]] = {c: [] for c in union_cols}
        for tag, names, rows in (("E", ENTITY_COLUMNS, ents), ("T", TRANSITION_COLUMNS, trans)):
            for row in rows:
                cols["rtype"].append(tag)
                d = dict(zip(names, row, strict=True))
                for c in union_cols[1:]:
                    v = d.get(c)
                    cols[c].append(list(v) if isinstance(v, tuple) else v)
        return pa.Table.from_arrays([pa.array(cols[f.name], type=f.type) for f in arrow_schema],
                                    schema=arrow_schema)

    result = (observed.groupBy(*key).cogroup(replayed.groupBy(*key))
              .applyInArrow(fn, union_schema).persist())
    comparison = result.filter(F.col("rtype") == "E").select(*ENTITY_COLUMNS)
    transitions = result.filter(F.col("rtype") == "T").select(*TRANSITION_COLUMNS)
    out = args.out.rstrip("/")
    comparison.write.mode("overwrite").parquet(f"{out}/comparison")
    transitions.write.mode("overwrite").parquet(f"{out}/transitions")
    brokers = _compare_brokers_table(spark, obs_dir, args.replayed, run_id)
    brokers.write.mode("overwrite").parquet(f"{out}/brokers")
    counts: dict[str, int] = {}
    for r in brokers.groupBy("agree").count().collect():
        counts["brokers_agree" if r["agree"] else "brokers_differ"] = r["count"]
    for r in comparison.groupBy("entity", "status").count().collect():
        counts[f"{r['entity']}_{r['status']}"] = r["count"]
    for r in transitions.groupBy("evidence").count().collect():
        counts[f"transitions_{r['evidence']}"] = r["count"]
    spark.createDataFrame(sorted(counts.items()), "name string, count long").coalesce(1) \
        .write.mode("overwrite").parquet(f"{out}/compare_summary")
    result.unpersist()
    log("compare: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    return counts


def main(argv: Sequence[str] | None = None, spark: Any = None) -> int:
    args = parse_args(list(argv) if argv is not None else None)
    if spark is None:
        from jobs.common.session import build_session

        spark = build_session("kafka-controller-compare", master=args.master)
    run(spark, args)
    return 0

