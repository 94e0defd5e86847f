"""The benchmarks: `make bench` (`job.py`: Spark against the pure core), `make bench-core`
(`core.py`: the pure core alone), `make bench-kraft` (`kraft.py`: the KRaft replay job
against the single-process KRaft fold, with the by-topic figures of `kraft_split.py`, in
one process, and `kraft_spark_split.py`, on Spark) and
`synthetic_log.py` (a large text log for the ingest)."""
