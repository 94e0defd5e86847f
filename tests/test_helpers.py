"""The test helpers write what the jobs read."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from tests.helpers.event_log import ARROW_EVENT_SCHEMA, created, failover, write_log


def test_written_log_has_the_event_schema(tmp_path: Path) -> None:
    path = write_log(tmp_path, [failover(1, 1, [1, 2]), created(2, "t", 0, [1, 2])])
    table = pq.read_table(path)
    assert table.schema.names == ARROW_EVENT_SCHEMA.names
    assert table.column("replicas").to_pylist() == [None, [1, 2]]
