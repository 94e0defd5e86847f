"""The broker's own offsets, read from `server.log` (and `state-change.log`): the lines a
broker writes when an ISR shrinks or grows, when it becomes a partition's leader or
follower, when it loads or truncates a log, when its leader-epoch cache moves, and the
"unclean" lines of a KRaft controller and broker. Pure Python, no JVM to test it.

    formats.py   the catalogue: every line format, per Kafka release line, with the call
                 site it comes from (file and line at a release tag) and an example
    idents.py    the logIdent prefixes these lines carry, and the broker a line names as
                 its writer (`[Partition t-0 broker=1]`, `[ReplicaFetcher replicaId=1, ...]`)
    parse.py     a line (envelope removed) -> an `OffsetFact`, None (not an offset line) or
                 unknown (a line of these loggers that looks like one but fits no format)
    owners.py    the broker that wrote each file, from the lines that name it

`jobs.ingest` writes what they find as the `offset_evidence` table (docs/tables.md);
`jobs.dataloss` turns it into what an unclean election lost.
"""
