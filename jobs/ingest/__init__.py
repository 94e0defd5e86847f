"""`python -m jobs.ingest`: real controller.log / state-change.log text -> the event log.

    logparse/  the pure parser (no pyspark, no pandas): lines -> records -> facts -> events
    job.py     the Spark job around it: list the files, parse them in parallel, order and
               assemble the events, write `events/`, `observed_state_changes/`,
               `ingest_summary/` and `unparsed/`
"""
