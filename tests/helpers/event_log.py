"""Small deterministic event logs for the replay-job tests, written with pyarrow.

`ev(seq, event_type, ...)` builds one row; `write_log(dir, rows)` writes a Parquet file with
the event-log schema (timestamps in microseconds, UTC, as Spark reads them).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from schemas import event_types as ET
from schemas.arrow import arrow_schema
from schemas.events import EVENT_SCHEMA

T0 = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)
# The event-log contract as pyarrow writes it (every column nullable, as in EVENT_SCHEMA).
ARROW_EVENT_SCHEMA = arrow_schema(EVENT_SCHEMA)


def ts_of(seq: int) -> datetime:
    return T0 + timedelta(seconds=seq)


def ev(seq: int | None, event_type: str | None, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {name: None for name in ARROW_EVENT_SCHEMA.names}
    row.update(seq=seq, event_type=event_type, ts=ts_of(seq or 0), source=f"test:{seq}")
    for key, value in fields.items():
        assert key in row, key
        row[key] = list(value) if isinstance(value, tuple) else value
    return row


def write_log(directory: Path | str, rows: list[dict[str, Any]], name: str = "part-0") -> Path:
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=ARROW_EVENT_SCHEMA)
    target = path / f"{name}.parquet"
    pq.write_table(table, target)
    return target


def failover(seq: int, controller: int, brokers: list[int], **kw: Any) -> dict[str, Any]:
    return ev(seq, ET.CONTROLLER_FAILOVER, broker_id=controller, brokers=brokers, **kw)


def created(seq: int, topic: str, partition: int, replicas: list[int],
            **kw: Any) -> dict[str, Any]:
    return ev(seq, ET.PARTITION_CREATED, topic=topic, partition=partition, replicas=replicas,
              **kw)

