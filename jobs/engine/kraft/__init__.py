"""A KRaft `__cluster_metadata` log replayed: read (`metadata_source`), folded by
`statemachine.kraft` (`fold`) on the driver (`pipeline`) or by (cluster, topic bucket) in
Spark tasks (`executors` on the driver, `bucket_fold` in each task, `topic_buckets` the
cut and its pyarrow filters), written in the ZooKeeper-mode run's tables (`run_tables`),
plus the `metadata_writes` table (`writes`) and the run's change digest (`changes`)."""
