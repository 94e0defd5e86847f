"""Equivalence and independence on the simulated `sample` log: one what-if run with the
baseline, a variant that drops events and a variant that injects one, each compared with a
plain `jobs.replay` of the log edited the same way (the injected event with its renumbered
seq: the log's events after its place shift by one; broker 2 kept dead as the variant
keeps it: its own later events out, out of the later failovers, and the ISR changes that
no longer apply out). Every table must be identical, minus the `variant` column
(`run_summary` on its counts, less the events that no longer apply, which the variant read
and the replay never sees; `findings` less their own finding). Since each variant equals a
replay that knows no other variant, adding a variant never changes another variant's rows.
Each variant is read whole through `jobs.store.variant_rows.read_variant_table`: a variant
stores only the rows that differ from the baseline's, and the equality holds on what the call
reads back (the pyarrow twin, `arrow_variant_table`, reads the same rows).

A second what-if run takes the plain replay as its `--baseline` and must give the same
impact for the injected variant.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from jobs.replay.job import main as replay_main
from jobs.store.variant_rows import read_variant_table, stored_rows
from jobs.store.variant_rows_arrow import arrow_variant_table
from jobs.whatif.job import main as whatif_main
from schemas.tables import TABLES
from schemas.whatif import WHATIF_TABLES
from tests.helpers.event_log import ARROW_EVENT_SCHEMA

pytestmark = pytest.mark.slow

INJECT_AFTER = 2000
RUN = "eq"  # the scenario file's stem
OWN_EVENTS = {"BrokerStartup", "BrokerFailure", "ControlledShutdown", "StopReplicaResponse"}
GONE = "log_event_no_longer_applies"
COUNTS = ["rows_read", "rows_applied", "rows_duplicate", "rows_quarantined", "rows_late"]


def held_dead(log: pa.Table, gone: set[tuple[int, str, int]]) -> pa.Table:
    """The log as a variant that fails broker 2 after INJECT_AFTER for good has it: broker
    2's own later events out, 2 out of the later failovers' live brokers (another broker
    elected when 2 was), and the ISR changes the variant found no longer apply (`gone`:
    seq, topic, partition) out."""
    later = pc.greater(log["seq"], INJECT_AFTER)
    own = pc.and_(pc.is_in(log["event_type"], value_set=pa.array(sorted(OWN_EVENTS))),
                  pc.equal(log["broker_id"], 2))
    out = pc.fill_null(pc.and_(later, own), False)
    rows = log.filter(pc.invert(out)).to_pylist()
    for r in rows:
        if r["event_type"] == "ControllerFailover" and r["seq"] > INJECT_AFTER \
                and 2 in r["brokers"]:
            r["brokers"] = [b for b in r["brokers"] if b != 2]
            r["broker_id"] = r["broker_id"] if r["broker_id"] != 2 else min(r["brokers"])
    rows = [r for r in rows if not (r["event_type"] == "IsrChanged"
                                    and (r["seq"], r["topic"], r["partition"]) in gone)]
    return pa.Table.from_pylist(rows, ARROW_EVENT_SCHEMA)


def edited_logs(log: pa.Table, root: Path, gone: set[tuple[int, str, int]]) -> dict[str, Path]:
    """The log without the dropped events, and the log with the injected event (and the
    events its failure makes impossible out)."""
    startup_3 = pc.fill_null(pc.and_(pc.equal(log["event_type"], "BrokerStartup"),
                                     pc.equal(log["broker_id"], 3)), False)  # null: kept
    dropped = pc.or_(pc.equal(log["event_type"], "UncleanLeaderElection"), startup_3)
    after = pc.greater(log["seq"], INJECT_AFTER)
    shifted = held_dead(log.set_column(1, "seq", pc.if_else(after, pc.add(log["seq"], 1),
                                                            log["seq"])), gone)
    at = log.filter(pc.equal(log["seq"], INJECT_AFTER))
    row = {name: None for name in ARROW_EVENT_SCHEMA.names}
    row.update(cluster="default", seq=INJECT_AFTER + 1, ts=pc.max(at["ts"]).as_py(),
               event_type="BrokerFailure", broker_id=2, source="whatif:inject")
    injected = pa.concat_tables([shifted, pa.Table.from_pylist([row], ARROW_EVENT_SCHEMA)])
    paths = {}
    for name, table in (("drop", log.filter(pc.invert(dropped))), ("inject", injected)):
        (root / name).mkdir()
        pq.write_table(table, root / name / "part-0.parquet")
        paths[name] = root / name
    return paths


@pytest.fixture(scope="module")
def runs(spark: Any, sample_log: Path, sample_tables: Path,
         tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("whatif-sample")
    log = ds.dataset(sample_log, schema=ARROW_EVENT_SCHEMA).to_table()
    assert pc.any(pc.equal(log["seq"], INJECT_AFTER)).as_py()
    scenario = root / "eq.toml"
    scenario.write_text(f"""
[[variant]]
name = "drop"
drop = [
  {{ event_type = "UncleanLeaderElection" }},
  {{ event_type = "BrokerStartup", broker_id = 3 }},
]
[[variant]]
name = "inject"
inject = [
  {{ after_seq = {INJECT_AFTER}, event_type = "BrokerFailure", broker_id = 2 }},
]
""")
    # The injected event's source defaults to "whatif:<variant>".
    outs = {"whatif": root / "whatif"}
    common = ["--buckets", "4"]
    assert whatif_main(["--events", str(sample_log), "--scenario", str(scenario),
                        "--out", str(outs["whatif"]), *common], spark=spark) == 0
    findings = read_variant_table(spark, str(outs["whatif"]), "findings", RUN, ["inject"]) \
        .where(F.col("kind") == GONE).collect()
    gone = {(r["seq"], r["topic"], r["partition"]) for r in findings}
    assert gone  # broker 2's ISR changes after its failure
    outs["gone"] = root / "gone.txt"
    outs["gone"].write_text("".join(f"{g}\n" for g in sorted(gone)))
    # The baseline's plain replay is the session's (`sample_tables`: the same log, other
    # buckets, which change no row); the edited logs are replayed here.
    outs["baseline"] = sample_tables
    for name, path in edited_logs(log, root, gone).items():
        outs[name] = root / f"replay-{name}"
        assert replay_main(["--events", str(path), "--out", str(outs[name]), "--run-id", name,
                            *common], spark=spark) == 0
    outs["with-baseline"] = root / "whatif-baseline"
    assert whatif_main(["--events", str(sample_log), "--scenario", str(scenario),
                        "--out", str(outs["with-baseline"]), "--baseline",
                        str(outs["baseline"]), *common], spark=spark) == 0
    return outs


@pytest.mark.parametrize("variant", ["baseline", "drop", "inject"])
def test_variant_tables_equal_a_plain_replay(spark: Any, runs: dict[str, Path],
                                            variant: str) -> None:
    for table, schema in TABLES.items():
        if table not in WHATIF_TABLES:  # not copied per variant (schemas.whatif)
            continue
        replayed = spark.read.schema(schema).parquet(str(runs[variant] / table)).drop("run_id")
        whatif = read_variant_table(spark, str(runs["whatif"]), table, RUN, [variant]) \
            .drop("variant", "run_id")
        if table == "findings":  # the replay never sees the events that no longer apply
            whatif = whatif.where(F.col("kind") != GONE)
        if table == "run_summary":
            gone = runs["gone"].read_text().count("\n") if variant == "inject" else 0
            replayed, whatif = replayed.select(*COUNTS), whatif.select(*[
                (F.col(c) - gone).alias(c) if c in ("rows_read", "rows_applied") else c
                for c in COUNTS])
        whatif = whatif.select(*replayed.columns)
        assert_df_equality(whatif, replayed, ignore_row_order=True, ignore_nullable=True)
        if table == "partition_windows":
            assert replayed.count() > 0


@pytest.mark.parametrize("table", ["state_changes", "partition_windows", "partition_states",
                                   "replica_states", "findings"])
def test_a_variant_stores_only_what_differs(spark: Any, runs: dict[str, Path],
                                            table: str) -> None:
    """The dropped events start at seq 1457 of about 6,000: the variant stores its rows
    from there on, and of its final state the partitions that differ (about a third: the
    injected variant's renumbered seqs make nearly every partition differ); read whole, its
    rows are as many as its replay's. pyarrow reads the rows Spark reads."""
    out = str(runs["whatif"])
    stored = stored_rows(spark, out, table, RUN, ["drop"]).count()
    whole = read_variant_table(spark, out, table, RUN, ["drop"])
    assert 0 < stored < whole.count()
    assert whole.count() == spark.read.parquet(str(runs["drop"] / table)).count()
    arrow = arrow_variant_table(out, table, RUN, ["drop"])
    assert sorted(map(repr, arrow.to_pylist())) == sorted(map(repr, whole.toArrow().to_pylist()))


def test_baseline_from_a_replay_output(spark: Any, runs: dict[str, Path]) -> None:
    def impact(out: Path) -> dict[str, tuple[Any, ...]]:
        # What each run replayed differs: with --baseline the first variant is the one the
        # others share their fold with.
        rows = spark.read.parquet(str(out / "whatif_impact")) \
            .drop("run_id", "buckets_replayed", "events_shared").collect()
        return {r["variant"]: tuple(r) for r in rows}

    assert impact(runs["with-baseline"]) == impact(runs["whatif"])
