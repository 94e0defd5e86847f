"""`python -m jobs.replay` on a KRaft `__cluster_metadata` log: the `metadata_records` table
written by `jobs.ingest`, folded on the driver by `statemachine.kraft` into the tables of
the ZooKeeper replay (docs/replay-job.md, "KRaft logs")."""
