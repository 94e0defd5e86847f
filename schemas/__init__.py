"""The contract: event-log columns, event type names and output table schemas.

`schemas.event_types` is pure Python (the core imports it); `schemas.events`,
`schemas.tables` and `schemas.state` (the replay operator's input, state and output) hold the
Spark `StructType`s and import only `pyspark.sql.types`, which needs no SparkSession;
`schemas.arrow` maps them to Arrow schemas.
"""
