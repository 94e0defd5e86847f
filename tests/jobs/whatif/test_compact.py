"""A what-if table's partition rewritten into few files holds the same rows, in the same
columns (pyarrow only: no Spark)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from jobs.store.layout import partition_path
from jobs.store.tables import WRITE_OPTIONS
from jobs.whatif import compact
from jobs.whatif.compact import compact_partition
from jobs.whatif.variant_files import variant_file_schema

TABLE = "partition_windows"  # timestamps (int96 in the files) and nulls


def _rows(group: int, n: int) -> list[dict[str, object]]:
    start = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
    return [{"cluster": "c", "variant": f"v{group % 3}", "topic": f"t{group}", "partition": i,
             "kind": "offline", "start_seq": group * 1000 + i,
             "start_ts": start.replace(microsecond=i),
             "end_seq": None if i % 2 else group * 1000 + i + 1,
             "end_ts": None if i % 2 else start.replace(second=1, microsecond=7 * i),
             "seconds": i / 3, "cause_event": "BrokerChange", "cause_broker": i,
             "end_event": None, "end_broker": None, "incident_id": group}
            for i in range(n)]


def _write_groups(out: Path, groups: int, rows: int) -> Path:
    partition = Path(partition_path(str(out), TABLE, "r"))
    partition.mkdir(parents=True)
    for g in range(groups):  # one file per replay group, as the workers write them
        table = pa.Table.from_pylist(_rows(g, rows), schema=variant_file_schema(TABLE))
        pq.write_table(table, partition / f"part-b0-x-{g}-00000.parquet", **WRITE_OPTIONS)
    return partition


def _read(partition: Path) -> pa.Table:
    return ds.dataset(partition, schema=variant_file_schema(TABLE),
                      format=ds.ParquetFileFormat(coerce_int96_timestamp_unit="us")) \
        .to_table().sort_by([("start_seq", "ascending")])


def test_the_rows_and_columns_stay_in_fewer_files(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compact, "FILE_ROWS", 25)  # 40 groups of 3 rows -> 5 files
    monkeypatch.setattr(compact, "GROUP_ROWS", 10)
    partition = _write_groups(tmp_path / "out", 40, 3)
    before = _read(partition)
    assert compact_partition(str(tmp_path / "out"), TABLE, "r") == 120
    files = sorted(p.name for p in partition.iterdir())
    assert files == [f"part-compact-{i}.parquet" for i in range(5)]
    after = _read(partition)
    assert after.schema == before.schema and after.equals(before)
    # The files hold the timestamps as the workers' do (int96, which Spark reads).
    stored = pq.ParquetFile(partition / files[0]).schema.column(6)
    assert (stored.name, stored.physical_type) == ("start_ts", "INT96")
    assert not any(p.name.startswith(compact.COMPACTING) for p in partition.parent.iterdir())


def test_a_partition_of_one_file_is_left_alone(tmp_path: Path) -> None:
    partition = _write_groups(tmp_path / "out", 1, 4)
    assert compact_partition(str(tmp_path / "out"), TABLE, "r") == -1
    assert [p.name for p in partition.iterdir()] == ["part-b0-x-0-00000.parquet"]
