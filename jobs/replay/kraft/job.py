"""`python -m jobs.replay --events DIR --out OUT` on a KRaft input (`source`): the whole log
folded on the driver by `statemachine.kraft` (no streaming query: a metadata log is a few
hundred thousand records a day), the tables written in the ZooKeeper run's layout and
schemas, plus `metadata_writes`. `--kafka-version` picks the KRaft profile (3.3 and later).

With `--checkpoint` a run folds only the records after those the checkpoint's last run
folded, into its saved fold (`checkpoint`), holding the checkpoint's lease (a second run
exits 75); `--rebuild` folds the whole log into a new state.

Refused with exit 2: a release line before 3.3 (ZooKeeper only), a checkpoint built under
another KRaft profile, `--initial-state` (a KRaft replay starts from the log's snapshot).
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jobs.common.config import DEFAULTS, load_config
from jobs.common.exitcodes import BAD_INPUT, CHECKPOINT_BUSY
from jobs.common.lease import CheckpointLease, LeaseHeld
from jobs.common.paths import run_id_problem
from jobs.common.tables import ensure_run_partitions, write_arrow, write_table
from jobs.dataloss.job import evidence_problem, find_evidence, write_data_loss
from jobs.replay.changes import change_batches
from jobs.replay.codec import rows_batch, rows_to_record_batch
from jobs.replay.failures import nested_problem, out_problem
from jobs.replay.incidents import incident_batches
from jobs.replay.kraft.checkpoint import Checkpoint, ClusterState, KraftState
from jobs.replay.kraft.fold import SKIPPED, ClusterRun, fold_cluster
from jobs.replay.kraft.source import KraftInput, find_kraft_input, ingest_noops, read_clusters
from jobs.replay.summary import print_rollup, summary_batches
from schemas.arrow import arrow_schema
from schemas.tables import KRAFT_TABLES
from statemachine.kraft.profiles import KraftProfile, kraft_profile_for

FOLD_TABLES = ("partition_states", "partition_windows", "findings", "broker_timeline",
               "controller_timeline")


def log(message: str) -> None:
    print(f"[replay] {message}", flush=True)


def error(message: str) -> int:
    print(f"[replay] ERROR: {message}", file=sys.stderr, flush=True)
    return BAD_INPUT


def kraft_events(argv: list[str] | None) -> KraftInput | None:
    """The KRaft input `--events` names, or None (a ZooKeeper-mode event log)."""
    from jobs.replay.job import parse_args

    return find_kraft_input(parse_args(argv).events)


def profile_of(version: str) -> KraftProfile:
    """The KRaft profile of `--kafka-version`; ValueError (one line) before 3.3."""
    try:
        return kraft_profile_for(version)
    except ValueError as exc:
        if "3.3 and later" in str(exc):
            raise ValueError(f"--kafka-version {version} is a ZooKeeper-only release line "
                             "and the events are a KRaft metadata log: KRaft profiles cover "
                             "3.3 and later") from None
        raise


def refused(args: Any) -> str | None:
    if args.rebuild and not args.checkpoint:
        return "--rebuild rebuilds a --checkpoint: give the checkpoint"
    if args.initial_state:
        return ("--initial-state with a KRaft metadata log: a KRaft replay starts from the "
                "log's snapshot (*.checkpoint); ingest it with the segments")
    if not args.audit and (args.fail_on or args.observed or args.verdict_json
                           or args.prometheus):
        return "--fail-on, --observed, --verdict-json, --prometheus configure the audit " \
               "of the run: add --audit"
    if args.verdict_json or args.prometheus:
        from jobs.audit.publish import publish_problem

        return publish_problem(args.verdict_json, args.prometheus)
    return None


def kraft_main(argv: list[str] | None, kraft: KraftInput,
               spark: SparkSession | None = None) -> int:
    from jobs.replay.job import parse_args

    args = parse_args(argv)
    try:
        cfg, cfg_path = load_config(args.config)
        version = str(args.kafka_version or cfg.get("kafka_version",
                                                     DEFAULTS["kafka_version"])).strip()
        profile = profile_of(version)
    except (ValueError, FileNotFoundError) as exc:
        return error(str(exc))
    run_id = args.run_id or datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    problem = (refused(args) or run_id_problem(run_id)
               or nested_problem(args.events, args.out, args.checkpoint))
    if problem is not None:
        return error(problem)
    log(f"events={kraft.records} (KRaft metadata log) out={args.out} run_id={run_id} "
        f"kafka_version={version} (KRaft profile {profile.name})")
    if spark is None:
        spark = session(cfg, cfg_path, args.master)
    problem = out_problem(spark, args.out, run_id) or evidence_problem(
        spark, args.offset_evidence)
    if problem is not None:
        return error(problem)
    min_isr = int(cfg["min_insync_replicas"])
    if args.checkpoint:
        try:
            with CheckpointLease(spark, args.checkpoint, run_id):
                rc = incremental(spark, kraft, args, run_id, profile, min_isr)
        except LeaseHeld as exc:  # the same command succeeds once it is free
            print(f"[replay] BUSY: checkpoint {args.checkpoint}: {exc}; retry later",
                  file=sys.stderr, flush=True)
            return CHECKPOINT_BUSY
        if rc is not None:
            return rc
    else:
        replay_kraft(spark, kraft, args.out, run_id, profile, min_isr)
    write_data_loss(spark, args.out, run_id,
                    find_evidence(spark, args.events, args.offset_evidence), log)
    if not args.audit:
        return 0
    from jobs.audit import options_from_config, run_audit
    from jobs.audit.publish import publish_run

    options = options_from_config(str(cfg_path) if cfg_path else None, fail_on=args.fail_on,
                                  observed=tuple(args.observed) or None)
    result = run_audit(spark, args.out, run_id, options)
    return publish_run(spark, args.out, result, verdict_json=args.verdict_json,
                       prometheus=args.prometheus)


def incremental(spark: SparkSession, kraft: KraftInput, args: Any, run_id: str,
                profile: KraftProfile, min_isr: int) -> int | None:
    """The run on the checkpoint's state; an exit code when it does not run (a run id the
    checkpoint holds: 0, nothing written; a checkpoint of another profile: 2)."""
    store = Checkpoint(args.checkpoint)
    state = None if args.rebuild else store.load()
    if state is not None and run_id in state.runs:
        log(f"run {run_id} is in checkpoint {args.checkpoint} already: nothing to do")
        return 0
    if state is not None and state.profile != profile.name:
        return error(f"--checkpoint {args.checkpoint} was built under KRaft profile "
                     f"{state.profile}; this run's is {profile.name} (--kafka-version): "
                     "replay into a new checkpoint, or --rebuild")
    runs = replay_kraft(spark, kraft, args.out, run_id, profile, min_isr,
                        {} if state is None else state.clusters)
    saved = KraftState(profile.name, {c: r.state for c, r in runs.items()
                                      if r.state is not None},
                       [] if state is None else state.runs)
    for cluster, kept in ({} if state is None else state.clusters).items():
        saved.clusters.setdefault(cluster, kept)  # a cluster this run did not read
    store.save(saved, run_id)
    return None


def session(cfg: dict[str, Any], cfg_path: Path | None, master: str | None) -> SparkSession:
    """The session the ZooKeeper replay would build: the config file's `spark_conf`
    properties for a local run (spark-submit passes its own)."""
    from jobs.common.config import find_file
    from jobs.common.session import build_session, under_spark_submit

    spark_conf = None
    if not under_spark_submit() and cfg.get("spark_conf"):
        base = cfg_path.parent.parent if cfg_path else None  # conf/replay.toml -> the root
        spark_conf = find_file(str(cfg["spark_conf"]), base)
    return build_session("kafka-controller-replay", master=master, properties_file=spark_conf)


def replay_kraft(spark: SparkSession, kraft: KraftInput, out: str, run_id: str,
                 profile: KraftProfile, default_min_isr: int,
                 resume: dict[str, ClusterState] | None = None) -> dict[str, ClusterRun]:
    """Fold every cluster of the input (from its saved state, `resume`) and write the
    run's tables."""
    started, t0 = datetime.now(UTC), time.perf_counter()
    clusters = read_clusters(kraft)
    noops = ingest_noops(kraft)
    runs = {c: fold_cluster(c, clusters[c], profile, default_min_isr, run_id,
                            noops.get(c, 0), (resume or {}).get(c)) for c in clusters}
    folded = time.perf_counter()
    write_tables(spark, runs, out, run_id)
    seconds = {"replay": folded - t0, "write": time.perf_counter() - folded}
    seconds["total"] = time.perf_counter() - t0
    counts = {c: r.counts for c, r in runs.items()}
    rollups = {c: r.rollup for c, r in runs.items()}
    facts = {c: r.facts for c, r in runs.items()}
    summary = summary_batches(counts, rollups, 1, run_id, 1, started, datetime.now(UTC),
                              seconds, facts)
    write_arrow(spark, summary, out, "run_summary", run_id)
    ensure_run_partitions(spark, out, run_id)
    print_kraft_summary(out, run_id, runs, {c: log.snapshot for c, log in clusters.items()})
    return runs


def print_kraft_summary(out: str, run_id: str, runs: dict[str, ClusterRun],
                        snapshots: dict[str, str | None]) -> None:
    """`jobs.replay.summary.print_summary`'s lines, with the rows read reconciled as a
    KRaft run counts them (applied + skipped)."""
    print(f"\n== replay run {run_id} (KRaft metadata log) ==")
    for cluster, r in runs.items():
        c = r.counts
        skipped = ", ".join(f"{k.removeprefix(SKIPPED)} {v}" for k, v in sorted(r.skipped.items()))
        print(f"cluster {cluster}: rows read {c.rows_read} = applied {c.rows_applied} + "
              f"skipped {sum(r.skipped.values())} ({skipped or 'none'})")
        print(f"  replayed from: {snapshots.get(cluster) or 'the log start (no snapshot)'}, "
              f"offsets {r.facts.seq_min}-{r.facts.seq_max}")
        states = ", ".join(f"{k} {v}" for k, v in sorted(c.partitions_by_state.items()))
        print(f"  partitions by state: {states or 'none'}")
        offline = c.offline_partitions()
        print(f"  offline partitions: {c.partitions_by_state.get('OfflinePartition', 0)}"
              + (f" ({', '.join(f'{t}-{p}' for t, p in offline)})" if offline else ""))
        print_rollup(r.rollup)
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(c.findings_by_kind.items())
                          if not k.startswith(SKIPPED))
        print(f"  findings by kind: {kinds or 'none'}")
    print(f"tables written under {out}/<table>/run_id={run_id}\n", flush=True)


def write_tables(spark: SparkSession, runs: dict[str, ClusterRun], out: str,
                 run_id: str) -> None:
    for table in FOLD_TABLES:
        batches = []
        for cluster, r in runs.items():
            rows = getattr(r.outputs, table)
            r.counts.rows_written[table] = len(rows)
            batches.append(rows_to_record_batch(table, cluster, run_id, rows))
        write_arrow(spark, batches, out, table, run_id)
    for r in runs.values():
        r.counts.rows_written["incidents"] = len(r.incidents)
        r.counts.rows_written["metadata_writes"] = len(r.writes)
    write_arrow(spark, incident_batches({c: r.incidents for c, r in runs.items()
                                         if r.incidents}, run_id), out, "incidents", run_id)
    write_arrow(spark, change_batches({c: r.changes for c, r in runs.items()}, run_id),
                out, "changes", run_id)
    write_metadata_writes(spark, runs, out, run_id)


def write_metadata_writes(spark: SparkSession, runs: dict[str, ClusterRun], out: str,
                          run_id: str) -> int:
    """`metadata_writes` (not in `schemas.tables.TABLES`: written here, not by
    `write_arrow`)."""
    schema = KRAFT_TABLES["metadata_writes"]
    body = arrow_schema(schema).remove(1)  # run_id is the partition directory
    batches = []
    for cluster, r in runs.items():
        rows = rows_batch(pa.schema(list(body)[1:]), r.writes)
        batches.append(rows.add_column(0, body[0], pa.repeat(cluster, len(r.writes))
                                       .cast(pa.string())))
    table = pa.Table.from_batches(batches, schema=body) if batches else None
    rows = 0 if table is None else table.num_rows
    spark_schema = schema.__class__([f for f in schema.fields if f.name != "run_id"])
    df = None
    if table is not None and rows:
        df = spark.createDataFrame(table.combine_chunks(), schema=spark_schema) \
            .withColumn("run_id", F.lit(run_id))
    write_kraft_table(spark, df, out, run_id, rows)
    return rows


def write_kraft_table(spark: SparkSession, df: Any, out: str, run_id: str, rows: int) -> None:
    path = f"{out.rstrip('/')}/metadata_writes"
    if df is None or rows == 0:
        empty = KRAFT_TABLES["metadata_writes"]
        body = empty.__class__([f for f in empty.fields if f.name != "run_id"])
        spark.createDataFrame([], body).coalesce(1).write.mode("overwrite") \
            .parquet(f"{path}/run_id={run_id}")
        return
    write_table(spark, df, out, "metadata_writes", run_id, rows, replace=True)
