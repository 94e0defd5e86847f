"""Spark schema of the audit's output table, `audit_checks` (docs/audit.md).

Like the replay's tables (`schemas/tables.py`), it starts with `cluster` and `run_id` and is
a Parquet directory partitioned by `run_id`: `<out>/audit_checks/run_id=<id>/`. One row per
thing a check found; a healthy run writes an empty partition (one file, no rows).
"""

from __future__ import annotations

from pyspark.sql import types as T

AUDIT_TABLE = "audit_checks"

CRITICAL = "critical"
WARNING = "warning"
# Severities from the most to the least severe; `--fail-on` takes one of them or `never`.
SEVERITIES: tuple[str, ...] = (CRITICAL, WARNING)

AUDIT_CHECKS = T.StructType([
    T.StructField("cluster", T.StringType(), True),
    T.StructField("run_id", T.StringType(), True),
    T.StructField("check", T.StringType(), True),
    T.StructField("severity", T.StringType(), True),
    T.StructField("topic", T.StringType(), True),
    T.StructField("partition", T.IntegerType(), True),
    T.StructField("broker_id", T.IntegerType(), True),
    T.StructField("detail", T.StringType(), True),
    T.StructField("since_ts", T.TimestampType(), True),
])


def audit_columns() -> tuple[str, ...]:
    """The columns of `audit_checks`, in order."""
    return tuple(f.name for f in AUDIT_CHECKS.fields)
