"""Spark schema of `plan_check`, the table of `jobs.whatif --from-state --plan`
(docs/whatif.md): one row per partition a planned step takes offline or under min ISR,
ranked, with the advice that avoids it. Written with pyarrow (`schemas.arrow`)."""

from __future__ import annotations

from pyspark.sql import types as T

_INTS = T.ArrayType(T.IntegerType(), True)


def _f(name: str, dtype: T.DataType) -> T.StructField:
    return T.StructField(name, dtype, True)


PLAN_CHECK = T.StructType([
    _f("cluster", T.StringType()),
    _f("run_id", T.StringType()),  # the plan check's own run (default: the plan file's stem)
    _f("state_run_id", T.StringType()),  # the replay run whose state the plan starts from
    _f("mode", T.StringType()),  # zookeeper | kraft: whose core ran the plan
    _f("rank", T.IntegerType()),  # 1: the worst (offline first, then the step's count)
    _f("step", T.IntegerType()),  # the plan's step number, from 1
    _f("step_name", T.StringType()),
    _f("action", T.StringType()),  # fail | shutdown | restart | reassign | config
    _f("step_brokers", _INTS),
    _f("topic", T.StringType()),
    _f("partition", T.IntegerType()),
    _f("finding", T.StringType()),  # offline | under_min_isr
    _f("replicas", _INTS),
    _f("leader_before", T.IntegerType()),  # -1: none
    _f("leader_after", T.IntegerType()),
    _f("isr_before", _INTS),
    _f("isr_after", _INTS),
    _f("min_insync_replicas", T.IntegerType()),  # in effect at the step
    _f("advice_kind", T.StringType()),  # reorder | reassign_first | null: none found
    _f("advice", T.StringType()),
])

PLAN_CHECK_TABLE = "plan_check"
