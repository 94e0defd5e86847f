"""The benchmarks: `make bench` (`job.py`: Spark against the pure core), `make bench-core`
(`core.py`: the pure core alone), `make bench-kraft` (`kraft.py`: the KRaft replay job
against the single-process KRaft fold, with `kraft_split.py`'s by-topic figures) and
`synthetic_log.py` (a large text log for the ingest)."""
