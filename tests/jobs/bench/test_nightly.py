"""`make bench-nightly` on a tiny log: the first run over most of the log with a checkpoint,
then the night over the rest; the night's state tables equal a full replay's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from jobs.bench import nightly

pytestmark = pytest.mark.slow


def test_a_night_after_a_checkpoint_equals_a_full_replay(spark: Any, tmp_path: Path) -> None:
    out_json = tmp_path / "bench.json"
    assert nightly.main(["--preset", "tiny", "--share", "0.2", "--buckets", "4",
                         "--json", str(out_json), "--markdown", str(tmp_path / "B.md"),
                         "--work", str(tmp_path / "work"),
                         "--cache", str(tmp_path / "logs")]) == 0
    result = json.loads(out_json.read_text())["nightly"]["tiny"]
    assert result["state_tables_equal_full_replay"] == {"partition_states": True,
                                                        "replica_states": True}
    assert 0 < result["night_rows"] < result["first_rows"]
    # The night resumed from the checkpoint: it read only its own rows.
    summary = pq.read_table(tmp_path / "work" / "tiny" / "tables" / "run_summary").to_pylist()
    read = {str(r["run_id"]): r["rows_read"] for r in summary}
    assert read == {"day1": result["first_rows"], "day2": result["night_rows"]}
    assert set(result["load_avg_1m"]) == {"start", "end"}
    markdown = (tmp_path / "B.md").read_text()
    assert "## Nightly run" in markdown and "load average (1 min) start / end" in markdown
    memory = result["night"]["memory_mb"]  # the three peaks under the three names
    assert "peak RSS night: driver python / JVM / workers (MB)" in markdown
    assert (f"| {memory['driver_python']:,.0f} / {memory['driver_jvm']:,.0f} / "
            f"{memory['python_workers']:,.0f} |") in markdown
    assert nightly.state_rows(tmp_path / "work" / "tiny" / "tables", "partition_states",
                              "day2")  # the comparison saw rows


def test_the_split_never_cuts_one_controller_event(tmp_path: Path) -> None:
    from jobs.bench.core import cached_log

    events, _ = cached_log("tiny", 1, tmp_path / "logs")
    _, night, first_rows, night_rows = nightly.split_log(events, tmp_path / "w", 0.3)
    first = pq.read_table(tmp_path / "w" / "events" / "part-00000.parquet").column("seq")
    rest = pq.read_table(night).column("seq")
    assert max(first.to_pylist()) < min(rest.to_pylist())
    assert (len(first), len(rest)) == (first_rows, night_rows)
