"""`jobs.bench.same_tables` on tables written by hand: a run id of digits (a date, as a
nightly schedule names its runs) is read as the string it is, not as an integer."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from jobs.bench.same_tables import compare, row_digests


def write_run(out: Path, run_id: str, leaders: list[int]) -> None:
    where = out / "partition_states" / f"run_id={run_id}"
    where.mkdir(parents=True)
    pq.write_table(pa.table({"cluster": ["c"] * len(leaders),
                             "partition": list(range(len(leaders))),
                             "leader": leaders}), where / "part-0.parquet")


def test_a_run_id_of_digits_is_compared_as_a_string(tmp_path: Path) -> None:
    for name, leaders in (("a", [1, 2]), ("b", [1, 2])):
        write_run(tmp_path / name, "20261128", leaders)
        write_run(tmp_path / name, "20261127", [3])
    assert len(row_digests(tmp_path / "a", "partition_states", "20261128")) == 2
    assert compare(tmp_path / "a", tmp_path / "b", "20261128") == [
        ("partition_states", 2, 2, True)]
    write_run(tmp_path / "c", "20261128", [1, 3])
    assert compare(tmp_path / "a", tmp_path / "c", "20261128")[0][3] is False
