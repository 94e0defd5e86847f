"""Every file under `--out` and `--checkpoint`, for ZooKeeper-mode and KRaft runs alike.

    layout.py              where everything lives: the one module that builds their paths
    filesystem.py          a path the user gives, opened with pyarrow; run ids; scratch dirs
    tables.py              the output tables: Parquet partitions by run_id, small files
    staging.py             tables written by the workers that fold them, committed by the driver
    supersede.py           a split run's later state rows replacing the earlier ones
    ledger.py              what a run has committed so far (a killed run finishes, not restarts)
    generations.py         `--rebuild`: a new generation of the checkpoint, swapped in at commit
    lease.py               one run at a time on a checkpoint
    checkpoint_out.py      the `--out` a checkpoint's runs write to, recorded and held to
    kraft_checkpoint.py    a KRaft replay's saved folds
    run_reads.py           small reads of a run's committed tables on the driver
    latest_run.py          the run a command means when `--run-id` is not given
    latest_state.py        the whole state after a run (Spark); latest_state_arrow.py (pyarrow)
"""
