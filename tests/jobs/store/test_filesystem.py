"""Run ids that become directories, and paths opened the way Hadoop reads them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyarrow import fs as pafs

from jobs.store.filesystem import arrow_filesystem, run_id_problem, scheme_of


@pytest.mark.parametrize("run_id", ["20261122", "sample", "20261122T010203Z", "a.b_c-d",
                                    "x" * 128])
def test_safe_run_ids_are_accepted(run_id: str) -> None:
    assert run_id_problem(run_id) is None


@pytest.mark.parametrize("run_id", ["", ".", "..", "../../../../../victim", "a/b", "/abs",
                                    "a\\b", ".hidden", "_hidden", "-dash", "sp ace", "x" * 129,
                                    "run\n1", "a%2Fb", "é", "2026-11-22T01:02:03Z"])
def test_run_ids_that_could_escape_or_hide_are_refused(run_id: str) -> None:
    problem = run_id_problem(run_id)
    assert problem is not None and "letters, digits" in problem


def test_schemes() -> None:
    assert scheme_of("/tmp/x") == ""
    assert scheme_of("relative/dir") == ""
    assert scheme_of("file:///tmp/x") == "file"
    assert scheme_of("hdfs://nn:8020/logs") == "hdfs"
    assert scheme_of("s3a://bucket/logs") == "s3a"
    assert scheme_of("C:/data") == ""


@pytest.mark.parametrize("name", ["sp ace", "pct%41dir", "pct%2541", "plain"])
def test_local_paths_are_literal_as_hadoop_reads_them(tmp_path: Path, name: str) -> None:
    d = tmp_path / name
    d.mkdir()
    pq.write_table(pa.table({"seq": [1]}), d / "part-0.parquet")
    for given in (str(d), f"file://{d}", f"file:{d}"):
        resolved = arrow_filesystem(given)
        assert resolved is not None
        filesystem, inner = resolved
        assert isinstance(filesystem, pafs.LocalFileSystem)
        assert inner == str(d)
        assert filesystem.get_file_info(inner).type == pafs.FileType.Directory


def test_a_scheme_pyarrow_has_no_client_for_is_left_to_spark() -> None:
    assert arrow_filesystem("nosuchfs://host/path") is None
