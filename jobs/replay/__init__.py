"""`python -m jobs.replay`: replay a controller event log with Spark.

The stages, in the order a run goes through them (`job.py` strings them together):

    source.py     check every event file's footer (fail fast), open the log as a stream
    history.py    what earlier runs of the checkpoint already scanned (a night reads one day)
    timeline.py   the cluster timeline: broker and controller events, folded on the driver
    keying.py     validate each row (quarantine reason) and key it by (cluster, bucket)
    pack.py       pack each input batch's rows into one payload per group
    query.py      the streaming query: pack, group, replay with state, sink (availableNow)
    group.py      the function `applyInPandasWithState` runs per group: fold through the core
    runs.py       a group too large for memory, sorted on disk and folded in pieces
    codec.py      a group's output rows <-> compressed Arrow payloads
    sink.py       `foreachBatch`: decode the payloads and write every table
    supersede.py  a split run's later batch replacing the earlier batch's state rows
    summary.py    `run_summary` and the printed summary
"""
