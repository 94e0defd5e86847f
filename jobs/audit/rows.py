"""Check rows: every check returns a DataFrame of the same shape, the columns of
`audit_checks` without `run_id` (the job adds it), so the checks can be unioned."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from schemas.audit import AUDIT_CHECKS

CHECK_COLUMNS: tuple[str, ...] = tuple(f.name for f in AUDIT_CHECKS.fields if f.name != "run_id")
_TYPES = {f.name: f.dataType for f in AUDIT_CHECKS.fields}


def _null() -> Column:
    return F.lit(None)


def check_frame(
    df: DataFrame, check: str, severity: str, detail: Column, *,
    topic: Column | None = None, partition: Column | None = None,
    broker_id: Column | None = None, since_ts: Column | None = None,
) -> DataFrame:
    """`df`'s rows as check rows: `cluster` from `df`, the rest as given (null when not)."""
    values = {
        "cluster": F.col("cluster"),
        "check": F.lit(check),
        "severity": F.lit(severity),
        "topic": topic if topic is not None else _null(),
        "partition": partition if partition is not None else _null(),
        "broker_id": broker_id if broker_id is not None else _null(),
        "detail": detail,
        "since_ts": since_ts if since_ts is not None else _null(),
    }
    return df.select(*[values[c].cast(_TYPES[c]).alias(c) for c in CHECK_COLUMNS])


def empty_checks(spark: SparkSession) -> DataFrame:
    schema = ", ".join(f"`{c}` {_TYPES[c].simpleString()}" for c in CHECK_COLUMNS)
    return spark.createDataFrame([], schema)


def brokers_text(column: Column) -> Column:
    """`[1,2,3]` for an array of broker ids (`[]` when empty or null)."""
    return F.concat(F.lit("["), F.coalesce(F.array_join(column, ","), F.lit("")), F.lit("]"))


def leader_text(column: Column) -> Column:
    """A leader as kafka-topics prints it: the broker id, or `none`."""
    return F.when(column.isNull() | (column < 0), F.lit("none")).otherwise(
        column.cast("string"))


def count_of(column: Column) -> Column:
    """The size of an array column, 0 when it is null (`size(null)` is -1 or null,
    depending on ANSI mode)."""
    return F.when(column.isNull(), F.lit(0)).otherwise(F.size(column))
