"""`jobs.whatif --from-state OUT_DIR --plan PLAN.toml`: a maintenance plan checked against
the latest state of a replay's output, before anyone acts.

No history is replayed: the state tables of the latest run seed the pure core (a
ZooKeeper-mode controller context through PartitionSnapshot rows, or a KRaft metadata
image), the plan's steps drive its flows one after the other, and after each step the
partitions with no leader or fewer in-sync replicas than `min.insync.replicas` are listed
with the step that caused them and advice checked by running the changed plan again.

* `plan_file`: the plan TOML, read and checked (exit 2 with one line when bad);
* `state`: the state tables read whole with pyarrow;
* `zookeeper`, `kraft`: the plan driven through the core of each mode;
* `check`: what each step does to each partition, and the advice;
* `table`, `printed`: the `plan_check` table under --out and the printed check;
* `job`: the command.
"""
