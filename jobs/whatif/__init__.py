"""`python -m jobs.whatif`: replay a controller event log under edited histories, side by
side in one Spark job, and rank what each variant costs.

The stages, in the order a run goes through them (`job.py` strings them together):

    scenario.py   the scenario file: [[variant]] tables and a [sweep], shape checked
    facts.py      the log's clusters, brokers, topics, seqs and times (pyarrow, few columns)
    sweeps.py     [sweep]: one variant per broker, rack or pair of brokers, per time
    plan.py       each variant resolved against the log: drops, injections, seqs, config
    consistency.py  a variant's failures kept: the log's contradicting events edited
    matching.py   the rows each drop matches, the edit counts (an empty drop is refused)
    edits.py      the variants inside the query: composite cluster keys, drops, renumbering
    run.py        the one streaming query (the replay's stages) into staging tables
    output.py     the replay tables published with a `variant` column
    impact.py     whatif_impact (Spark aggregations), partition_diff.py its diff table,
    stored_sums.py  their sums from what each variant stores and its base's sums per group
    ranking.py    the printed ranking
    bench.py      a fail_each_broker sweep against one plain replay (make bench-whatif)
"""
