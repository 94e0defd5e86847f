"""The commands, one package each; every job is a thin `main(argv) -> int` over its stages.

    replay/   event log -> state tables, requests, findings (Spark Structured Streaming)
    ingest/   controller.log / state-change.log text -> event log (pure parser + Spark job)
    compare/  a replay against what Kafka itself logged
    audit/    health checks over a replay run, the post-mortem, a verdict for the scheduler
    whatif/   a scenario's variants of a log, replayed side by side in one job, ranked
    report/   one self-contained HTML page over a run, its audit and a what-if
    sim/      a simulated cluster's event log
    sample/   `make run`: simulate the sample log and replay it
    bench/    the benchmarks
    engine/   the replay as every command runs it: keying, timeline, the stateful query,
              the group function, the codec, the sink, the run's stages (KRaft: kraft/)
    store/    every path of --out and --checkpoint: files, tables, staging, commits, the
              lease, the ledger, checkpoint generations, latest-state reads
    common/   what every layer shares: settings, the Spark session, logging, exit codes

`submit.py` is the file `spark-submit` runs. No Kafka rule is decided in `jobs/`: every
controller decision is the core's (`statemachine/`).
"""

from jobs.common import logs as _logs  # noqa: E402,F401 - the default log lines
