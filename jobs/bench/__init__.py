"""The benchmarks: `make bench` (`job.py`: Spark against the pure core), `make bench-core`
(`core.py`: the pure core alone) and `synthetic_log.py` (a large text log for the ingest)."""
