"""A KRaft `__cluster_metadata` log replayed: read (`metadata_source`), folded by
`statemachine.kraft` (`fold`), written in the ZooKeeper-mode run's tables (`pipeline`), plus
the `metadata_writes` table (`writes`) and the run's change digest (`changes`)."""
