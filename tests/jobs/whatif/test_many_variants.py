"""A thousand variants in one run: each drops one seq of the simulated `tiny` log. The drops
are a join with a frame of (variant, drop entry), so the query's plan does not grow with
the variants (one OR condition per variant overflowed the JVM's stack at 500)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest
from pyspark.sql import functions as F

from jobs.sim.cli import write_log
from jobs.whatif.job import main
from tests.helpers.event_log import ARROW_EVENT_SCHEMA

pytestmark = pytest.mark.slow

VARIANTS = 1000


def test_a_thousand_variants_run_and_count_their_drops(
        spark: Any, tmp_path: Path) -> None:
    write_log(str(tmp_path / "log"), preset="tiny", seed=1)
    seqs = ds.dataset(tmp_path / "log", schema=ARROW_EVENT_SCHEMA).to_table(
        columns=["seq"]).column("seq").to_pylist()
    rows_of = Counter(seqs)
    distinct = sorted(rows_of)
    dropped = {f"drop-{i}": distinct[i % len(distinct)] for i in range(VARIANTS)}
    scenario = tmp_path / "many.toml"
    scenario.write_text("".join(f'[[variant]]\nname = "{name}"\ndrop = [{{ seq = {seq} }}]\n'
                                for name, seq in dropped.items()))
    assert main(["--events", str(tmp_path / "log"), "--scenario", str(scenario),
                 "--out", str(tmp_path / "out"), "--buckets", "1"], spark=spark) == 0
    impact = spark.read.parquet(str(tmp_path / "out" / "whatif_impact"))
    got = {r["variant"]: r["events_dropped"]
           for r in impact.select("variant", "events_dropped").collect()}
    assert len(got) == VARIANTS + 1
    assert got == {"baseline": 0, **{name: rows_of[seq] for name, seq in dropped.items()}}
    # Each variant's own run_summary read the log less the rows it dropped.
    summary = spark.read.parquet(str(tmp_path / "out" / "run_summary"))
    read = {r["variant"]: r["rows_read"]
            for r in summary.select("variant", "rows_read").collect()}
    assert all(read[name] == len(seqs) - rows_of[seq] for name, seq in dropped.items())
    assert impact.where(F.col("variant") == "baseline").first()["rank"] is not None
