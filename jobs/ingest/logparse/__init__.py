"""Pure-Python parser of Kafka controller.log / state-change.log text (the formats are
described in docs/ingest-compare.md).

No pyspark or pandas here: every step is a plain function over strings so that it is unit
tested without a JVM and runs unchanged inside Spark executors.

    envelope   one text line -> (timestamp, level, logger, message) or a continuation line
    values     renderings inside messages (topic-partitions, Scala collections, LeaderAndIsr)
    idents     the logIdent prefixes ("[Controller id=1 epoch=2] ", "[Controller 1]: ", ...)
    patterns   message templates that carry events or observed state, per Kafka version
    known      every other template of the controller and state-change loggers (catalogue)
    records    lines -> records (header line + continuation lines) -> facts
    assemble   facts in controller order -> events (the event-log contract,
               docs/tables.md) + observed state changes
    pipeline   the whole thing over local files, without Spark (tests, small logs)
"""
