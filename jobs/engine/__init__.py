"""The replay as every command runs it (`jobs.replay`, `jobs.whatif`, `jobs.bench`,
`jobs.sample`): no command line here, no Kafka rule either (those are `statemachine/`'s).

A ZooKeeper-mode run, in the order it goes (`replay_run` strings the `stages` together):

    settings.py         one run's settings, the controller config, the stage clock
    event_log.py        check every event file's footer (fail fast), open the log as a stream
    log_history.py      what earlier runs of the checkpoint already scanned (a night reads one day)
    timeline_scan.py    the timeline scan's read of the log with pyarrow on the driver (clusters,
                        timeline rows; batch by batch)
    timeline.py         the cluster timeline: broker and controller events, folded on the driver
    log_checks.py       what the new rows say about the log: seq range, gaps, late, conflicts
    log_checks_query.py the same checks as Spark aggregations: one summary per block of seqs
    plausibility.py     rows that honour the contract's types but cannot be true
    keying.py           validate each row (quarantine reason) and key it by (cluster, bucket)
    pack.py             pack each input batch's rows into one payload per group
    query.py            the streaming query: pack, group, replay with state, sink (availableNow)
    group_fn.py         the function `applyInPandasWithState` runs per group: fold through the core
    group_rows.py       a group's rows, deduplicated and ordered, spilled to disk when large
    codec.py            a group's output rows <-> Arrow batches and payloads
    batch_sink.py       `foreachBatch`: commit the staged files, record the batch in the ledger
    run_summary.py      `run_summary` and the printed summary
    offline_rollup.py   the post-mortem figures of the summary: offline partition-seconds
    incidents_table.py  `incidents`: the windows of the incidents a run touched, rolled up
    incidents_query.py  the same roll-up of a large run on the executors, one group per incident
    rollups.py          `incidents` and `changes` from the run's rows and the earlier runs' carry
    rollup_carry.py     what those roll-ups carry from run to run in the checkpoint
    state_refresh.py    which groups a run rewrites whole: the state is in its last few runs
    change_digest.py    what changed in a run (pure), `changes_table.py` writes it
    changes_query.py    a large run's creations and leader moves counted by Spark queries
    requested.py        the administrative events of the run, for the digest
    initial_state.py    `--initial-state`: partitions that existed before the log
    sizing.py           Spark settings sized for a small log
    failures.py         `--out` and `--events` problems found before the replay starts
    stages.py, replay_run.py   the run's stages, and the run on its checkpoint
    kraft/              a KRaft metadata log folded (on the driver, or by topic bucket in
                        Spark tasks) into the same tables
"""
