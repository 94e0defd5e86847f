"""What each unclean leader election lost, from the brokers' own logs: the replay's
`unclean_leader_election` findings joined with the ingest's `offset_evidence`
(`jobs.ingest.logparse.offsets`) into the `data_loss` table (docs/tables.md).

    loss.py      the pure computation: one election, its partition's leadership history
                 and its offset lines -> a `DataLossRow` (exact, bounded or unknown)
    job.py       the thin part: find the evidence beside the replay's events (or
                 `--offset-evidence`), read the run's findings and write `data_loss`
    lines.py     the figure in words, for the audit's check and post-mortem and the report
"""
