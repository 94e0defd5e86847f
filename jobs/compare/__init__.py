"""`python -m jobs.compare`: a replay held against what Kafka itself logged.

    partitions.py  the pure comparison of one partition (`compare_partition`) and of all
                   of them in one process (`compare_all`)
    brokers.py     the registered brokers Kafka logged against the replay's broker timeline
    values.py      values of the rows read, normalised for comparing and rendered for output
    job.py         the Spark job around them: read the ingest's and the replay's tables,
                   compare per partition (cogroup), write `comparison/`, `transitions/`,
                   `brokers/` and `compare_summary/`
"""
