"""The what-if's rows as the workers write them: in the what-if tables' own columns
(`cluster`, `variant`, then the replay table's), so that publishing them is a rename, and,
per replay group, the `whatif_sharing` rows that say which of the base's rows each variant
takes (`jobs.whatif.differences`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import pyarrow as pa

from jobs.engine.codec import body_schema, rows_batch
from jobs.engine.group_fn import Encoded, GroupOutput, TaggedRow
from jobs.store.staging import StagingArea
from schemas.arrow import arrow_schema
from schemas.whatif import STORAGE_TABLES, WHATIF_TABLES

SHARING = "whatif_sharing"


@cache
def variant_file_schema(table: str) -> pa.Schema:
    """A what-if table's columns as its files hold them (all but `run_id`)."""
    schema = arrow_schema({**WHATIF_TABLES, **STORAGE_TABLES}[table])
    return pa.schema([f for f in schema if f.name != "run_id"])


def variant_file_batch(table: str, cluster: str, variant: str,
                       rows: Sequence[Sequence[Any]],
                       body: pa.RecordBatch | None = None) -> pa.RecordBatch:
    """A group's row tuples of a replay table as the what-if's files hold them."""
    if body is None:
        body = rows_batch(body_schema(table), rows)
    keys = [pa.repeat(value, len(rows)).cast(pa.string()) for value in (cluster, variant)]
    return pa.RecordBatch.from_arrays([*keys, *body.columns],
                                      schema=variant_file_schema(table))


@dataclass
class VariantOutput(GroupOutput):
    """`GroupOutput` of one variant (`cluster` its composite key, which the counts go by)
    writing its files in the what-if's columns."""

    real_cluster: str = ""
    variant: str = ""

    def add(self, table: str, rows: list[Any], encoded: Encoded | None = None) -> None:
        if self.staging is None:
            super().add(table, rows, encoded)
            return
        if not rows:
            return
        body = encoded.body() if encoded is not None else None
        self.staging.write(table, self.cluster, self.bucket, self.chunks[table],
                           variant_file_batch(table, self.real_cluster, self.variant, rows,
                                              body))
        self.chunks[table] += 1
        self.tagged.append(TaggedRow(self.cluster, self.bucket, table, len(rows), None))
        if table == "findings":
            self.kinds.update(f.kind for f in rows)


def write_sharing(staging: StagingArea, cluster: str, bucket: int,
                  rows: list[dict[str, Any]]) -> None:
    """One group's `whatif_sharing` rows (without `run_id`), staged as one file beside the
    tables' (`jobs.whatif.run` publishes them after the query)."""
    if rows:
        batch = pa.RecordBatch.from_pylist(rows, schema=variant_file_schema(SHARING))
        staging.write(SHARING, cluster, bucket, 0, batch)
