"""The SQL text helpers behind the validation expressions (`jobs.engine.sql_text`): a
literal survives Spark's parser whatever it holds."""

from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from jobs.engine.sql_text import all_of, in_list, quote, when

AWKWARD = ["plain", "it's", "back\\slash", "nul\x00key", "tab\there", "caf\u00e9", "'", ""]


def test_a_quoted_literal_reads_back_as_itself(spark: Any) -> None:
    got = spark.range(1).select(*[F.expr(quote(s)).alias(f"c{i}")
                                  for i, s in enumerate(AWKWARD)]).first()
    assert list(got) == AWKWARD


def test_when_in_list_and_all_of_read_as_the_column_api(spark: Any) -> None:
    frame = spark.createDataFrame([("it's", 1), ("x", -1), (None, 2)], "t string, n long")
    sql = when(all_of(in_list("`t`", ["it's", "x"]), "`n` > 0"), "kept: 'quoted'")
    got = [r[0] for r in frame.select(F.expr(sql)).collect()]
    assert got == ["kept: 'quoted'", None, None]
