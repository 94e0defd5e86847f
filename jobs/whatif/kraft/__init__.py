"""`python -m jobs.whatif` on a KRaft `__cluster_metadata` log: the scenario resolved
against the records, the variants folded by `statemachine.kraft.variant` on the executors,
published and ranked by the ZooKeeper what-if's own stages (docs/whatif.md, "KRaft
logs")."""
