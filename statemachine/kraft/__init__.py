"""The KRaft mode of the core: a `__cluster_metadata` log folded as Kafka's metadata image
folds it, into the tables of the ZooKeeper fold (docs/core.md, "KRaft mode"). Pure."""
