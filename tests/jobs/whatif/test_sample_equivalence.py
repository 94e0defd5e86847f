"""Equivalence and independence on the simulated `sample` log: one what-if run with the
baseline, a variant that drops events and a variant that injects one, each compared with a
plain `jobs.replay` of the log edited the same way (the injected event with its renumbered
seq: the log's events after its place shift by one). Every table must be identical, minus
the `variant` column (`run_summary` on its counts). Since each variant equals a replay that
knows no other variant, adding a variant never changes another variant's rows.

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
from jobs.sim.cli import write_log
from jobs.whatif.job import main as whatif_main
from schemas.tables import TABLES
from tests.helpers.event_log import ARROW_EVENT_SCHEMA

pytestmark = pytest.mark.slow

INJECT_AFTER = 2000
COUNTS = ["rows_read", "rows_applied", "rows_duplicate", "rows_quarantined", "rows_late"]


def edited_logs(log: pa.Table, root: Path) -> dict[str, Path]:
    """The log without the dropped events, and the log with the injected event."""
    startup_3 = pc.fill_null(pc.and_(pc.equal(log["event_type"], "BrokerStartup"),
                                     pc.equal(log["broker_id"], 3)), False)  # null: kept
    dropped = pc.or_(pc.equal(log["event_type"], "UncleanLeaderElection"), startup_3)
    after = pc.greater(log["seq"], INJECT_AFTER)
    shifted = log.set_column(1, "seq", pc.if_else(after, pc.add(log["seq"], 1), log["seq"]))
    at = log.filter(pc.equal(log["seq"], INJECT_AFTER))
    row = {name: None for name in ARROW_EVENT_SCHEMA.names}
    row.update(cluster="default", seq=INJECT_AFTER + 1, ts=pc.max(at["ts"]).as_py(),
               event_type="BrokerFailure", broker_id=2, source="whatif:inject")
    injected = pa.concat_tables([shifted, pa.Table.from_pylist([row], ARROW_EVENT_SCHEMA)])
    paths = {}
    for name, table in (("baseline", log), ("drop", log.filter(pc.invert(dropped))),
                        ("inject", injected)):
        (root / name).mkdir()
        pq.write_table(table, root / name / "part-0.parquet")
        paths[name] = root / name
    return paths


@pytest.fixture(scope="module")
def runs(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("whatif-sample")
    write_log(str(root / "log"), preset="sample", seed=1)
    log = ds.dataset(root / "log", schema=ARROW_EVENT_SCHEMA).to_table()
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
    assert whatif_main(["--events", str(root / "log"), "--scenario", str(scenario),
                        "--out", str(outs["whatif"]), *common], spark=spark) == 0
    for name, path in edited_logs(log, root).items():
        outs[name] = root / f"replay-{name}"
        assert replay_main(["--events", str(path), "--out", str(outs[name]), "--run-id", name,
                            *common], spark=spark) == 0
    outs["with-baseline"] = root / "whatif-baseline"
    assert whatif_main(["--events", str(root / "log"), "--scenario", str(scenario),
                        "--out", str(outs["with-baseline"]), "--baseline",
                        str(outs["baseline"]), *common], spark=spark) == 0
    return outs


@pytest.mark.parametrize("variant", ["baseline", "drop", "inject"])
def test_variant_tables_equal_a_plain_replay(spark: Any, runs: dict[str, Path],
                                            variant: str) -> None:
    for table, schema in TABLES.items():
        replayed = spark.read.schema(schema).parquet(str(runs[variant] / table)).drop("run_id")
        whatif = spark.read.parquet(str(runs["whatif"] / table)) \
            .where(F.col("variant") == variant).drop("variant", "run_id")
        if table == "run_summary":
            replayed, whatif = replayed.select(*COUNTS), whatif.select(*COUNTS)
        whatif = whatif.select(*replayed.columns)
        assert_df_equality(whatif, replayed, ignore_row_order=True, ignore_nullable=True)
        if table == "partition_windows":
            assert replayed.count() > 0


def test_baseline_from_a_replay_output(spark: Any, runs: dict[str, Path]) -> None:
    def impact(out: Path) -> dict[str, tuple[Any, ...]]:
        rows = spark.read.parquet(str(out / "whatif_impact")).drop("run_id").collect()
        return {r["variant"]: tuple(r) for r in rows}

    assert impact(runs["with-baseline"]) == impact(runs["whatif"])
