"""Variants that share their work give the tables of variants replayed on their own.

On the simulated `sample` log, a sweep that fails each broker at the log's midpoint and
restarts it ten minutes later, a controlled shutdown, a drop late in the log and a variant
that changes nothing are run twice: sharing (the default: the prefix folded once per group,
untouched groups taken whole from the baseline) and with `--no-share` (every variant a
replay of its own, which `test_sample_equivalence` holds equal to `jobs.replay` of the
edited log). Every table of every variant, read whole (`read_variant_table`: the shared run
stores of each variant only what differs from the baseline; `--no-share` stores every
variant whole), must be identical, row for row.
"""

from __future__ import annotations

import shutil
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.replay.job import main as replay_main
from jobs.sim.cli import write_log
from jobs.store.ledger import ClusterCounts
from jobs.store.variant_rows import read_variant_table, stored_rows
from jobs.store.variant_rows_arrow import arrow_variant_table
from jobs.whatif import variant_summary
from jobs.whatif.job import main as whatif_main
from jobs.whatif.stored_sums import GROUP, read_sharing, whole_sums
from schemas.whatif import IMPACT_TABLES, SHARED_EVENT_KEYS, VARIANT_SEPARATOR, WHATIF_TABLES
from tests.helpers.event_log import ARROW_EVENT_SCHEMA

pytestmark = pytest.mark.slow
CLOCKS = ("started_at", "finished_at", "stage_seconds")  # run_summary's, not the replay's
SHARING = ("buckets_replayed", "events_shared")  # whatif_impact's: what each run replayed


@pytest.fixture(scope="module")
def outs(spark: Any, sample_log: Path,
         tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("shared-sweep")
    log = ds.dataset(sample_log, schema=ARROW_EVENT_SCHEMA).to_table()
    ts = pc.cast(log["ts"], "int64")
    low, high = pc.min(ts).as_py(), pc.max(ts).as_py()
    mid = datetime.fromtimestamp((low + high) / 2e6, UTC).isoformat()
    late = int(pc.max(log["seq"]).as_py()) - 200
    scenario = root / "sweep.toml"
    scenario.write_text(f"""
[[variant]]
name = "late-drop"
drop = [{{ seq_from = {late}, event_type = "IsrChanged" }}]
[[variant]]
name = "nothing"
[[variant]]
name = "shutdown-1"
inject = [{{ at = "{mid}", event_type = "ControlledShutdown", broker_id = 1, for = "5m" }}]
[sweep]
fail_each_broker = {{ at = "{mid}", for = "10m" }}
""")
    result = {}
    for name, extra in (("shared", []), ("alone", ["--no-share"])):
        result[name] = root / name
        assert whatif_main(["--events", str(sample_log), "--scenario", str(scenario),
                            "--out", str(result[name]), "--buckets", "4", *extra],
                           spark=spark) == 0
    return result


@pytest.mark.parametrize("table", sorted({**WHATIF_TABLES, **IMPACT_TABLES}))
def test_every_table_of_every_variant_is_the_same(spark: Any, outs: dict[str, Path],
                                                 table: str) -> None:
    def read(name: str) -> Any:
        df = read_variant_table(spark, str(outs[name]), table, "sweep").drop("run_id")
        df = df.drop(*CLOCKS) if table == "run_summary" else df
        df = df.drop(*SHARING) if table == "whatif_impact" else df
        # Maps cannot be sorted on: compared as their sorted entries.
        return df.select(*[F.array_sort(F.map_entries(f.name)).alias(f.name)
                           if isinstance(f.dataType, T.MapType) else F.col(f.name)
                           for f in df.schema.fields])

    shared, alone = read("shared"), read("alone")
    assert_df_equality(shared, alone.select(*shared.columns), ignore_row_order=True,
                       ignore_nullable=True)
    if table == "partition_states":
        variants = {r["variant"] for r in shared.select("variant").distinct().collect()}
        assert {"baseline", "nothing", "late-drop", "shutdown-1"} <= variants
        assert sum(v.startswith("fail-broker-") for v in variants) >= 3


def test_the_shared_run_stores_less(spark: Any, outs: dict[str, Path]) -> None:
    """The variants take what they share from the baseline's rows: the shared run stores
    fewer rows than `--no-share`, and its `whatif_sharing` names a group of every variant
    but the baseline (and none with `--no-share`)."""
    def stored(name: str) -> int:
        return sum(stored_rows(spark, str(outs[name]), t, "sweep").count()
                   for t in ("state_changes", "partition_states", "partition_windows"))

    assert stored("shared") < 0.8 * stored("alone")
    sharing = stored_rows(spark, str(outs["shared"]), "whatif_sharing", "sweep")
    variants = {r["variant"] for r in sharing.select("variant").distinct().collect()}
    assert "baseline" not in variants and {"nothing", "late-drop", "shutdown-1"} <= variants
    assert {r["base"] for r in sharing.select("base").distinct().collect()} == {"baseline"}
    assert stored_rows(spark, str(outs["alone"]), "whatif_sharing", "sweep").count() == 0


def test_each_variant_says_what_it_replayed(spark: Any, outs: dict[str, Path]) -> None:
    def replayed(name: str) -> dict[str, tuple[int, int]]:
        rows = spark.read.parquet(str(outs[name] / "whatif_impact")).collect()
        return {r["variant"]: (r["buckets_replayed"], r["events_shared"]) for r in rows}

    shared, alone = replayed("shared"), replayed("alone")
    assert set(alone.values()) == {(4, 0)}  # 4 buckets, each folded whole by each variant
    assert shared["baseline"] == (4, 0)
    assert shared["nothing"][0] == 0  # every group taken whole from the baseline's fold
    assert shared["nothing"][1] == max(e for _, e in shared.values())
    failures = [v for k, v in shared.items() if k.startswith("fail-broker-")]
    # A failure at the midpoint leaves the baseline there: about half the events shared.
    assert all(b == 4 and 0.3 < e / shared["nothing"][1] < 0.7 for b, e in failures)
    assert shared["late-drop"][1] > 0.9 * shared["nothing"][1]


def test_the_variant_that_changes_nothing_is_flagged(spark: Any,
                                                     outs: dict[str, Path]) -> None:
    rows = spark.read.parquet(str(outs["shared"] / "whatif_impact")) \
        .where(F.col("variant") == "nothing").collect()
    assert [(r["no_edit"], r["same_as_baseline"]) for r in rows] == [(True, True)]


def test_summaries_read_one_variant_at_a_time_are_the_runs(spark: Any, outs: dict[str, Path],
                                                          tmp_path: Path) -> None:
    """The driver reads the variants' whole windows a bounded number of rows at a time
    (`variant_summary.WINDOW_ROWS_PER_READ`, here all at once). Read one variant at a time,
    they give the run's own offline figures and `incidents`, row for row."""
    out = tmp_path / "out"
    shutil.copytree(outs["shared"], out)
    summary = arrow_variant_table(out, "run_summary", "sweep")
    ends = pc.cast(summary["period_end"], pa.int64()).to_pylist()
    counts = {f"{r['cluster']}{VARIANT_SEPARATOR}{r['variant']}": ClusterCounts(
        rows_written=Counter(dict(r["rows_written"])), last_ts=end)
        for r, end in zip(summary.to_pylist(), ends, strict=True)}
    keys = sorted(counts)
    assert len(list(variant_summary.variant_reads(keys, counts, 1))) == len(keys) >= 7
    assert len(list(variant_summary.variant_reads(keys, counts, 10**9))) == 1

    rollups = variant_summary.offline_rollups(str(out), "sweep", counts, budget=1)
    for row in summary.to_pylist():
        rollup = rollups[f"{row['cluster']}{VARIANT_SEPARATOR}{row['variant']}"]
        assert rollup.seconds == pytest.approx(row["offline_partition_seconds"], abs=1e-6)
        assert rollup.by_topic == pytest.approx(dict(row["offline_seconds_by_topic"]))
        assert rollup.by_cause_broker == \
            pytest.approx(dict(row["offline_seconds_by_cause_broker"]))
    assert sum(r.seconds for r in rollups.values()) > 0
    variant_summary.write_incidents(str(out), "sweep",
                                    {k: c.last_ts for k, c in counts.items()}, counts, budget=1)

    def incidents(root: Path) -> Any:
        return read_variant_table(spark, str(root), "incidents", "sweep")

    assert incidents(out).count() > 0
    assert_df_equality(incidents(out), incidents(outs["shared"]), ignore_row_order=True,
                       ignore_nullable=True)


@pytest.mark.parametrize("table", ["partition_windows", "update_metadata_requests",
                                   "partition_states", "replica_states"])
def test_sums_from_storage_are_the_sums_over_whole_rows(spark: Any, outs: dict[str, Path],
                                                        table: str) -> None:
    """What the impact stage sums from the stored rows and the base's sums per group and
    cut (`jobs.whatif.stored_sums`; a state table less the base's rows of the partitions a
    variant overrides) is what summing each variant's whole rows gives: the count and the
    hash of every row, and, per event table, per key column value."""
    out = str(outs["shared"])
    sharing = read_sharing(spark, out, "sweep")
    assert sharing is not None and sharing.bases == ("baseline",)
    by = ["seq"] if table in SHARED_EVENT_KEYS else []
    key = [F.col(SHARED_EVENT_KEYS[table]).alias("seq")] if by else []

    def values(rows: Any) -> Any:
        return rows.select(*GROUP, *key, F.lit(1).cast("long").alias("n"),
                           F.xxhash64("topic", "partition").cast("decimal(38,0)").alias("h"))

    sums = whole_sums(stored_rows(spark, out, table, "sweep"), table, sharing, values, by)
    whole = read_variant_table(spark, out, table, "sweep").select("cluster", "variant", *key,
                                                                  "topic", "partition")
    expected = whole.groupBy("cluster", "variant", *by).agg(
        F.count(F.lit(1)).alias("n"),
        F.sum(F.xxhash64("topic", "partition").cast("decimal(38,0)")).alias("h"))
    # A state table's subtraction leaves a zero where a variant has no row of its own.
    assert_df_equality(sums.where(F.col("n") != 0), expected.select(*sums.columns),
                       ignore_row_order=True, ignore_nullable=True)
    assert sums.select("variant").distinct().count() >= 7


def test_a_log_with_bad_rows_quarantines_as_a_plain_replay(spark: Any, tmp_path: Path) -> None:
    """Bad rows, conflicting seqs among them, as a real schedule delivers them: the shared
    baseline quarantines exactly what `jobs.replay` does, a variant keeps the bad rows it
    does not drop, and `--no-share` quarantines the same rows as the shared run."""
    write_log(str(tmp_path / "log"), preset="tiny", seed=3, bad_rows=0.05)
    scenario = tmp_path / "bad.toml"
    scenario.write_text("""
[[variant]]
name = "no-isr-changes"
drop = [{ event_type = "IsrChanged" }]
[[variant]]
name = "fail-1"
inject = [{ after_seq = 40, event_type = "BrokerFailure", broker_id = 1 }]
""")
    common = ["--events", str(tmp_path / "log"), "--buckets", "4"]
    for out, extra in (("whatif", []), ("alone", ["--no-share"])):
        assert whatif_main([*common, "--scenario", str(scenario), "--out",
                            str(tmp_path / out), *extra], spark=spark) == 0
    assert replay_main([*common, "--out", str(tmp_path / "replay")], spark=spark) == 0
    counts = ["rows_read", "rows_applied", "rows_duplicate", "rows_quarantined"]
    def read(out: str, table: str) -> Any:
        return read_variant_table(spark, str(tmp_path / out), table, "bad").drop("run_id")

    for table, columns in (("quarantine", None), ("run_summary", counts)):
        replayed = spark.read.parquet(str(tmp_path / "replay" / table)).drop("run_id")
        whatif = read("whatif", table).where(F.col("variant") == "baseline").drop("variant")
        if columns is not None:
            replayed, whatif = replayed.select(*columns), whatif.select(*columns)
        assert_df_equality(whatif.select(*replayed.columns), replayed, ignore_row_order=True,
                           ignore_nullable=True)
    summary = {r["variant"]: r for r in read("whatif", "run_summary").collect()}
    assert summary["baseline"]["rows_quarantined"] > 0
    assert summary["fail-1"]["rows_quarantined"] == summary["baseline"]["rows_quarantined"]
    dropped_bad = read("whatif", "quarantine") \
        .where((F.col("variant") == "baseline") & (F.col("event_type") == "IsrChanged")) \
        .count()
    assert summary["no-isr-changes"]["rows_quarantined"] == \
        summary["baseline"]["rows_quarantined"] - dropped_bad
    # --no-share judges every variant's rows as the shared run does.
    for table, columns in (("quarantine", None), ("run_summary", ["variant", *counts])):
        shared, alone = (read(out, table) for out in ("whatif", "alone"))
        if columns is not None:
            shared, alone = shared.select(*columns), alone.select(*columns)
        assert_df_equality(alone, shared.select(*alone.columns), ignore_row_order=True,
                           ignore_nullable=True)
