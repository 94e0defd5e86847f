"""The batches the sessions hand Python workers: bounded by rows, never sized after each row
(`jobs.common.session.DEFAULTS`)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def test_batches_to_python_workers_are_bounded_by_rows_not_sized_after_each_row(
        spark: Any) -> None:
    # Spark 4 asks an Arrow batch's byte size after every row unless the byte limit is
    # Int.MaxValue; the sessions turn that off, and the row limit still bounds each batch.
    assert spark.conf.get("spark.sql.execution.arrow.maxBytesPerBatch").rstrip("b") == \
        "2147483647"
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = spark.conf.get(key)
    spark.conf.set(key, "100")
    try:
        rows = spark.range(1000, numPartitions=2).selectExpr("id", "array(id, id) AS replicas")
        sizes = [r["n"] for r in rows.mapInArrow(
            lambda batches: (pa.RecordBatch.from_pydict({"n": [b.num_rows]}) for b in batches),
            "n long").collect()]
    finally:
        spark.conf.set(key, before)
    assert sum(sizes) == 1000 and max(sizes) == 100


def test_the_spark_properties_files_list_the_same_byte_limit() -> None:
    # A properties file wins over DEFAULTS: neither may bring the per-row sizing back.
    from jobs.common.session import DEFAULTS, ROOT, read_properties

    key = "spark.sql.execution.arrow.maxBytesPerBatch"
    for name in ("local.conf", "cluster.conf"):
        assert read_properties(ROOT / "conf" / "spark" / name)[key] == DEFAULTS[key]
