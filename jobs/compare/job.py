"""Hold the replay against what Kafka itself logged.

    .venv/bin/python -m jobs.compare --observed DIR --replayed DIR --out DIR [--run-id ID]
    spark-submit --py-files dist/replay.zip jobs/submit.py compare <same arguments>

--observed is the ingest's --out (or its `observed_state_changes/`); --replayed is the
replay's --out (`state_changes/`, `leader_and_isr_requests/`, `update_metadata_requests/`,
`partition_state_writes/`, `partition_states/`, `replica_states/`, partitioned by run_id;
the newest run unless
--run-id). Writes under --out (schemas in `schemas.compare`, described in docs/tables.md):

    comparison/         one row per partition and per replica: agree / differ / not_observed /
                        not_replayed, agreement on state, leader, ISR and leader epoch, and the
                        first seq where they diverge (field, both values, the log line)
    brokers/            each time Kafka logged the registered brokers (failover `Currently
                        active brokers`, BrokerChange `all live brokers`): the replay's live
                        and shutting-down brokers at that seq (`broker_timeline`), agree or not
    transitions/        every transition: `observed` (the replay made it and Kafka logged it),
                        `inferred` (only the replay: Kafka 2.6+ logs most transitions at TRACE,
                        which the default INFO config drops), `observed_only` (Kafka logged it,
                        the replay did not: a divergence), `seeded` (logged by the failover
                        block whose PartitionSnapshot the replay first knew the partition from)
    compare_summary/    counts by status and by evidence; `kafka_profile:<name>`, the release
                        profile the comparison holds the replay to (`jobs.compare.profile`:
                        --kafka-version, else the release the ingest detected)

Stages: extract (the observations and the replay's tables, one layout for the cogroup) ->
transform (`jobs.compare.partitions.compare_partition` per partition through Spark's cogroup,
`applyInArrow`; the few broker lists on the driver, `jobs.compare.brokers`) -> load (write
the tables, then count them). How a logged value is matched is in `jobs.compare.partitions`.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import Row as SparkRow
from pyspark.sql import functions as F

from jobs.common.cli import command_parser
from jobs.common.command import run_job
from jobs.common.exitcodes import CHECK_FAILED, OK, BadInput
from jobs.compare.brokers import BROKER_KINDS, BrokerRow, compare_brokers
from jobs.compare.partitions import (
    ENTITY_COLUMNS,
    TRANSITION_COLUMNS,
    Observation,
    compare_partition,
)
from jobs.compare.profile import ProfileChoice, choose_profile
from jobs.store.filesystem import list_names, path_exists
from jobs.store.latest_state import read_state
from jobs.store.layout import table_path
from jobs.store.tables import read_table_or_empty
from schemas import event_types as ET
from schemas.arrow import arrow_schema
from schemas.compare import (
    BROKERS_SCHEMA,
    COMPARE_SUMMARY_SCHEMA,
    COMPARED_SCHEMA,
    REPLAYED_SCHEMA,
)
from schemas.tables import STATE_TABLES
from statemachine.rows import APPLIED, FAILED

log = logging.getLogger(__name__)
PARTITION_KEY = ("cluster", "topic", "partition")
COMPARISON, TRANSITION = "E", "T"  # `rtype` of the cogroup's rows
REPLAY_TABLES = ("state_changes", "leader_and_isr_requests", "update_metadata_requests",
                 "partition_states", "replica_states", "broker_timeline",
                 "partition_state_writes")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = command_parser("jobs.compare", __doc__, codes=(CHECK_FAILED,))
    p.add_argument("--observed", required=True, help="ingest output (or observed_state_changes)")
    p.add_argument("--replayed", required=True, help="replay output directory")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--run-id", help="replay run to compare (default: the newest)")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    p.add_argument("--kafka-version", help="Kafka release line of the log, X.Y from 0.8 to "
                   "3.9; a KRaft log 3.3 to 4.x (default: the one the ingest detected, else "
                   "3.7)")
    p.add_argument("--fail-on", choices=("differ", "never"), default="never",
                   help="exit 1 when a partition, replica or broker list differs from what "
                   "Kafka logged, after listing the first differences")
    return p.parse_args(list(argv) if argv is not None else None)


# -- extract -------------------------------------------------------------------------------

class Inputs(NamedTuple):
    observed: DataFrame  # observed_state_changes of a partition, the columns compared
    replayed: DataFrame  # the replay's rows in REPLAYED_SCHEMA's layout
    broker_lists: list[SparkRow]  # observations of the registered brokers (small)
    broker_timeline: list[SparkRow]  # the replay's broker_timeline (small)


def observed_dir(path: str) -> str:
    """`observed_state_changes/` of the ingest's --out, or the folder itself."""
    path = path.rstrip("/")
    if Path(path, "observed_state_changes").exists() or not path.endswith(
            "observed_state_changes"):
        path = f"{path}/observed_state_changes"
    return path


def newest_run(spark: SparkSession, base: str) -> str | None:
    """The greatest `run_id=` partition of any replay table. Read from the directory names,
    not from the rows: a run in which a table stayed empty still has its partition (one
    schema-only file), and a replay written before that may lack a table altogether."""
    runs = {name.removeprefix("run_id=") for table in REPLAY_TABLES
            if path_exists(table_path(base, table))
            for name in list_names(table_path(base, table))
            if name.startswith("run_id=")}
    return max(runs) if runs else None


def read_replay_table(spark: SparkSession, base: str, table: str, run_id: str | None
                      ) -> DataFrame:
    """A replay table with its schema from `schemas.tables`; a table directory the replay
    did not write (no partition created in the excerpt, every replica deleted, an output
    written before every run wrote every table) reads as an empty table."""
    if run_id is not None and table in STATE_TABLES:
        return read_state(spark, base, table, run_id)  # the whole state after the run
    df = read_table_or_empty(spark, base, table)
    if run_id is not None:
        df = df.filter(F.col("run_id") == run_id)
    return df


def _replayed_layout(df: DataFrame, tag: str, taken: tuple[str, ...], n: str | None = None
                     ) -> DataFrame:
    """`df` in REPLAYED_SCHEMA's layout: the partition key, `tag`, the columns `taken` from
    `df`, `n` from its column `n` (step or batch), every other column null."""
    columns: list[Column] = []
    for f in REPLAYED_SCHEMA.fields:
        if f.name == "tag":
            columns.append(F.lit(tag).alias("tag"))
        elif f.name == "n" and n is not None:
            columns.append(F.col(n).cast(f.dataType).alias("n"))
        elif f.name in PARTITION_KEY or f.name in taken:
            columns.append(F.col(f.name))
        else:
            columns.append(F.lit(None).cast(f.dataType).alias(f.name))
    return df.select(*columns)


def read_seeds(spark: SparkSession, observed: str) -> DataFrame | None:
    """The leadership of the PartitionSnapshot events in the ingest's `events/` next to the
    observations (tag S): what the replay holds for a seeded partition until it sends one.
    None when the observations have no `events/` beside them."""
    path = observed_dir(observed).rsplit("/", 1)[0] + "/events"
    if not path_exists(path):
        return None
    events = spark.read.parquet(path).filter(
        (F.col("event_type") == ET.PARTITION_SNAPSHOT) & F.col("leader").isNotNull())
    events = events.withColumn("cluster", F.coalesce(F.col("cluster"),
                                                     F.lit(ET.DEFAULT_CLUSTER)))
    return _replayed_layout(events, "S", ("seq", "leader", "leader_epoch", "isr"))


def read_replayed(spark: SparkSession, base: str, run_id: str | None) -> DataFrame:
    def table(name: str) -> DataFrame:
        return read_replay_table(spark, base, name, run_id)

    transitions = ("seq", "broker_id", "machine", "from_state", "to_state", "outcome",
                   "reason")
    leadership = ("seq", "leader", "leader_epoch", "isr")
    return (
        _replayed_layout(table("state_changes"), "C", transitions, n="step")
        .unionByName(_replayed_layout(table("leader_and_isr_requests"), "L", leadership,
                                      n="batch"))
        .unionByName(_replayed_layout(table("partition_state_writes"), "W", leadership,
                                      n="write"))
        .unionByName(_replayed_layout(table("update_metadata_requests"), "L", leadership,
                                      n="batch"))
        .unionByName(_replayed_layout(table("partition_states"), "P", ("state",)))
        .unionByName(_replayed_layout(table("replica_states"), "R", ("broker_id", "state")))
    )


def with_outcome(observed: DataFrame) -> DataFrame:
    """An ingest output written before `outcome` replaced `valid` reads with `outcome`
    derived from it (true: applied; false: failed, the old ingest did not tell a rejection
    from a failure)."""
    if "outcome" in observed.columns or "valid" not in observed.columns:
        return observed
    return observed.withColumn("outcome", F.when(F.col("valid"), F.lit(APPLIED))
                               .when(~F.col("valid"), F.lit(FAILED)))


def extract(spark: SparkSession, args: argparse.Namespace) -> Inputs:
    obs_dir = observed_dir(args.observed)
    run_id = args.run_id or newest_run(spark, args.replayed)
    observed = (
        with_outcome(spark.read.parquet(obs_dir))
        .filter(F.col("topic").isNotNull() & F.col("partition").isNotNull())
        .select(*PARTITION_KEY, *Observation._fields)
    )
    broker_lists = (spark.read.parquet(obs_dir).filter(F.col("kind").isin(*BROKER_KINDS))
                    .select("cluster", "seq", "pos", "source", "kind", "brokers").collect())
    timeline = read_replay_table(spark, args.replayed, "broker_timeline", run_id).collect()
    replayed = read_replayed(spark, args.replayed, run_id)
    seeds = read_seeds(spark, args.observed)
    if seeds is not None:
        replayed = replayed.unionByName(seeds)
    return Inputs(observed, replayed, broker_lists, timeline)


# -- transform -----------------------------------------------------------------------------

class Outputs(NamedTuple):
    compared: DataFrame  # the cogroup's result, persisted: comparison + transition rows
    comparison: DataFrame
    transitions: DataFrame
    brokers: DataFrame
    clusters: list[str]  # every excerpt (cluster) with an observation


_COMPARED_ARROW = arrow_schema(COMPARED_SCHEMA)


def compare_group(key: tuple[pa.Scalar, ...], observed: pa.Table, replayed: pa.Table
                  ) -> pa.Table:
    """One partition, in the cogroup: its replayed rows back to the tables they came from,
    `compare_partition`, and both kinds of output row in COMPARED_SCHEMA's layout."""
    cluster, topic, partition = (x.as_py() if hasattr(x, "as_py") else x for x in key)
    rows = replayed.to_pylist()
    changes = [{**x, "step": x["n"]} for x in rows if x["tag"] == "C"]
    leadership = [{**x, "batch": x["n"]} for x in rows if x["tag"] == "L"]
    writes = [{**x, "write": x["n"]} for x in rows if x["tag"] == "W"]
    seeds = [{**x, "batch": 0} for x in rows if x["tag"] == "S"]
    partition_state = next((x["state"] for x in rows if x["tag"] == "P"), None)
    replica_states = {int(x["broker_id"]): x["state"] for x in rows if x["tag"] == "R"}
    comparison, transitions = compare_partition(
        cluster, topic, int(partition), observed.to_pylist(), changes,
        leadership, partition_state, replica_states, writes, seeds)
    columns: dict[str, list[object]] = {f.name: [] for f in _COMPARED_ARROW}
    tagged = [*((COMPARISON, r._asdict()) for r in comparison),
              *((TRANSITION, r._asdict()) for r in transitions)]
    for tag, record in tagged:
        columns["rtype"].append(tag)
        for name, values in columns.items():
            if name != "rtype":
                v = record.get(name)
                values.append(list(v) if isinstance(v, tuple) else v)
    return pa.Table.from_arrays([pa.array(columns[f.name], type=f.type)
                                 for f in _COMPARED_ARROW], schema=_COMPARED_ARROW)


def compare_broker_lists(spark: SparkSession, broker_lists: list[SparkRow],
                         timeline: list[SparkRow]) -> DataFrame:
    """Small (one row per logged broker list): compared on the driver, per cluster."""
    rows: list[BrokerRow] = []
    for cluster in sorted({o["cluster"] for o in broker_lists}):
        rows += compare_brokers(
            cluster, [o.asDict() for o in broker_lists if o["cluster"] == cluster],
            [r.asDict() for r in timeline if r["cluster"] == cluster])
    return spark.createDataFrame(
        [[list(v) if isinstance(v, tuple) else v for v in r] for r in rows], BROKERS_SCHEMA)


def transform(spark: SparkSession, inputs: Inputs) -> Outputs:
    compared = (inputs.observed.groupBy(*PARTITION_KEY)
                .cogroup(inputs.replayed.groupBy(*PARTITION_KEY))
                .applyInArrow(compare_group, COMPARED_SCHEMA).persist())
    return Outputs(
        compared,
        compared.filter(F.col("rtype") == COMPARISON).select(*ENTITY_COLUMNS),
        compared.filter(F.col("rtype") == TRANSITION).select(*TRANSITION_COLUMNS),
        compare_broker_lists(spark, inputs.broker_lists, inputs.broker_timeline),
        sorted({*(str(r["cluster"]) for r in inputs.observed.select("cluster").distinct()
                  .collect()), *(str(o["cluster"]) for o in inputs.broker_lists)}),
    )


# -- load ----------------------------------------------------------------------------------

COVERAGE = ("partitions_compared", "observations_compared", "transitions_matched",
            "broker_lists_compared")


def coverage_counts(outputs: Outputs) -> dict[str, int]:
    """Per excerpt (cluster), how much could be compared: partitions the log and the replay
    both know (status agree or differ), the observations of those partitions and replicas,
    the logged transitions matched to a replayed one, the broker lists compared. An excerpt
    whose counts are all 0 "agrees" on nothing: it shows as such, with every count named."""
    both = F.col("status").isin("agree", "differ")
    rows = outputs.comparison.groupBy("cluster").agg(
        F.sum(F.when(both & (F.col("entity") == "partition"), 1).otherwise(0))
        .alias("partitions_compared"),
        F.sum(F.when(both, F.col("observed_points")).otherwise(0))
        .alias("observations_compared"),
        F.sum("matched_transitions").alias("transitions_matched")).collect()
    brokers = {r["cluster"]: r["count"]
               for r in outputs.brokers.groupBy("cluster").count().collect()}
    counts: dict[str, int] = {}
    for cluster in sorted({*outputs.clusters, *brokers, *(r["cluster"] for r in rows)}):
        found = next((r.asDict() for r in rows if r["cluster"] == cluster), {})
        found["broker_lists_compared"] = brokers.get(cluster, 0)
        for name in COVERAGE:
            counts[f"excerpt:{cluster}:{name}"] = int(found.get(name) or 0)
    return counts


def summary_counts(outputs: Outputs) -> dict[str, int]:
    """Brokers by agreement, entities by status, transitions by evidence, and per excerpt
    how much could be compared (`coverage_counts`)."""
    counts: dict[str, int] = coverage_counts(outputs)
    for r in outputs.brokers.groupBy("agree").count().collect():
        counts["brokers_agree" if r["agree"] else "brokers_differ"] = r["count"]
    for r in outputs.comparison.groupBy("entity", "status").count().collect():
        counts[f"{r['entity']}_{r['status']}"] = r["count"]
    for r in outputs.transitions.groupBy("evidence").count().collect():
        counts[f"transitions_{r['evidence']}"] = r["count"]
    return counts


def load(spark: SparkSession, outputs: Outputs, out: str,
         extra: dict[str, int] | None = None) -> dict[str, int]:
    out = out.rstrip("/")
    outputs.comparison.write.mode("overwrite").parquet(f"{out}/comparison")
    outputs.transitions.write.mode("overwrite").parquet(f"{out}/transitions")
    outputs.brokers.write.mode("overwrite").parquet(f"{out}/brokers")
    counts = {**summary_counts(outputs), **(extra or {})}
    spark.createDataFrame(sorted(counts.items()), COMPARE_SUMMARY_SCHEMA).coalesce(1) \
        .write.mode("overwrite").parquet(f"{out}/compare_summary")
    return counts


def detected_version(spark: SparkSession, observed: str) -> str | None:
    """The total row's `kafka_version` of the ingest summary next to the observations."""
    path = observed_dir(observed).rsplit("/", 1)[0] + "/ingest_summary"
    if not path_exists(path):
        return None
    df = spark.read.parquet(path)
    if "kafka_version" not in df.columns:
        return None  # an ingest output written before the column existed
    total = df.filter(F.col("file") == "*").select("kafka_version").collect()
    return str(total[0][0]) if total and total[0][0] is not None else None


def run(spark: SparkSession, args: argparse.Namespace,
        log: Callable[[str], object] = print) -> dict[str, int]:
    choice: ProfileChoice = choose_profile(args.kafka_version,
                                           detected_version(spark, args.observed))
    log(f"compare: Kafka release profile {choice.profile} ({choice.reason})")
    outputs = transform(spark, extract(spark, args))
    counts = load(spark, outputs, args.out, {f"kafka_profile:{choice.profile}": 1})
    outputs.compared.unpersist()
    log("compare: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    return counts


def main(argv: Sequence[str] | None = None, spark: SparkSession | None = None) -> int:
    return run_job("compare", None if argv is None else list(argv), compare, spark)


def compare(argv: list[str], spark: SparkSession | None) -> int:
    args = parse_args(argv)
    try:
        choose_profile(args.kafka_version, None)  # a bad --kafka-version stops before Spark
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if spark is None:
        from jobs.common.session import build_session

        spark = build_session("kafka-controller-compare", master=args.master)
    counts = run(spark, args)
    differing = differences(counts)
    if differing:
        for line in difference_lines(spark, args.out, DIFFERENCES_LISTED):
            log.warning(line)
    if differing and args.fail_on == "differ":
        return CHECK_FAILED
    return OK


DIFFERENCES_LISTED = 10  # the first differences the command prints (the table has all)


def differences(counts: dict[str, int]) -> int:
    """The partitions, replicas and broker lists that differ from what Kafka logged."""
    return sum(n for k, n in counts.items()
               if k in ("partition_differ", "replica_differ", "brokers_differ"))


def difference_lines(spark: SparkSession, out: str, limit: int) -> list[str]:
    """A short list of the differences, first by cluster, topic, partition, broker: where
    the replay first parted from Kafka's log, and the two values."""
    out = out.rstrip("/")
    rows = spark.read.parquet(f"{out}/comparison").where(F.col("status") == "differ") \
        .orderBy("cluster", "topic", "partition", F.col("broker_id").asc_nulls_first()) \
        .limit(limit).collect()
    lines = [f"differs: {r['cluster']} {r['topic']}-{r['partition']}"
             + (f" replica {r['broker_id']}" if r["broker_id"] is not None else "")
             + f" from seq {r['first_divergence_seq']}: {r['first_divergence_field']} logged "
             f"{r['observed_value']}, replayed {r['replayed_value']}" for r in rows]
    brokers = spark.read.parquet(f"{out}/brokers").where(~F.col("agree")) \
        .orderBy("cluster", "seq").limit(limit).collect()
    lines += [f"differs: {r['cluster']} live brokers at seq {r['seq']}: logged "
              f"{list(r['observed'])}, replayed {list(r['replayed'])}" for r in brokers]
    return lines[:limit] + ([f"... and more in {out}/comparison and {out}/brokers"]
                            if len(lines) > limit else [])
