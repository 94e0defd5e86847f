"""The contract: event-log columns, event type names and output table schemas.

`schemas.event_types` and `schemas.columns` are pure Python (the core imports them);
`schemas.events` and `schemas.tables` hold the Spark `StructType`s and import only
`pyspark.sql.types`, which needs no SparkSession.
"""
