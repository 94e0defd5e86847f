"""The one mapping from the Spark types of `schemas/` to Arrow types.

Everything that writes or reads a contract with pyarrow (the simulator's files, the replay's
payloads, the ingest's rows, the tests' logs) derives its Arrow schema from the Spark
`StructType` here, so a column's type is stated once. Timestamps are microseconds in UTC,
the unit Spark reads and writes.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import types as T

_SCALARS: tuple[tuple[type[T.DataType], pa.DataType], ...] = (
    (T.StringType, pa.string()),
    (T.LongType, pa.int64()),
    (T.IntegerType, pa.int32()),
    (T.BooleanType, pa.bool_()),
    (T.DoubleType, pa.float64()),
    (T.TimestampType, pa.timestamp("us", tz="UTC")),
    (T.BinaryType, pa.binary()),
)


def arrow_type(dtype: T.DataType) -> pa.DataType:
    """The Arrow type Spark reads and writes for `dtype` (also what `mapInArrow` expects)."""
    for spark_type, arrow in _SCALARS:
        if isinstance(dtype, spark_type):
            return arrow
    if isinstance(dtype, T.ArrayType):
        return pa.list_(arrow_type(dtype.elementType))
    if isinstance(dtype, T.MapType):
        return pa.map_(arrow_type(dtype.keyType), arrow_type(dtype.valueType))
    if isinstance(dtype, T.StructType):
        return pa.struct([pa.field(f.name, arrow_type(f.dataType), f.nullable)
                          for f in dtype.fields])
    raise TypeError(f"no Arrow type for {dtype!r}")


def arrow_schema(schema: T.StructType) -> pa.Schema:
    """The Arrow schema of a Spark `StructType`, field by field, nullability kept."""
    return pa.schema(
        [pa.field(f.name, arrow_type(f.dataType), f.nullable) for f in schema.fields]
    )
