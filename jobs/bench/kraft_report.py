"""BENCHMARKS.md's section of `make bench-kraft` (`jobs.bench.kraft`): per history size, the
KRaft replay job beside the single-process KRaft fold."""

from __future__ import annotations

from typing import Any

Run = dict[str, Any]


def _stages(d: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in d.items())


def _spark(r: Run, cell: str) -> str:
    s = r.get("spark") or {}
    if s.get("rc") != 0:
        return "–"
    if cell == "wall":
        return f"{s['spark_seconds']:g}"
    if cell == "cpu":
        return f"{s['cpu_s']['total']:g}"
    if cell == "stages":
        return _stages(s.get("spark_stages_s", {}))
    mem = s["memory_mb"]
    return f"{mem.get('driver_python', '–')} / {mem.get('driver_jvm', '–')}"


def _by_topic(split: Run | None) -> str:
    return "–" if not split else f"{split['process_s']:g} / {split['cpu_s']:g}"


def kraft_table(kraft: dict[str, Run]) -> list[str]:
    if not kraft:
        return []
    lines = ["## KRaft metadata logs (`make bench-kraft`)", "",
             "A simulated KRaft history (`jobs.sim.kraft_history`, `--size`), ingested once: "
             "the replay job end to end (`python -m jobs.replay`, local[*]) beside the "
             "single-process fold of the same records (pyarrow read, `fold_cluster`, "
             "continuity, every table's Arrow batches; the process's wall and CPU seconds, "
             "imports included). By topic on Spark (`--spark-split`): the same records grouped "
             "by (cluster, topic bucket) and folded on the executors "
             "(`jobs.bench.kraft_spark_split`), the whole process tree's wall and CPU seconds.",
             "",
             "| size | measured (UTC) | records | partitions | fold wall (s) | fold CPU (s) "
             "| fold stages (s) | job wall (s) | job CPU (s) | job stages (s) "
             "| job driver peaks python / JVM (MB) | by topic on Spark wall / CPU (s) "
             "| load (1 min) start / end |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for size in sorted(kraft, key=lambda s: kraft[s]["fold"]["records"]):
        r = kraft[size]
        f = r["fold"]
        lines.append(
            f"| {size} | {r['measured_at']} | {f['records']:,} | {f['partitions']:,} "
            f"| {f['process_s']:g} | {f['cpu_s']:g} | {_stages(f['stages_s'])} "
            f"| {_spark(r, 'wall')} | {_spark(r, 'cpu')} | {_spark(r, 'stages')} "
            f"| {_spark(r, 'peaks')} | {_by_topic(r.get('spark_split'))} "
            f"| {r['load_avg_1m']['start']} / {r['load_avg_1m']['end']} |")
    return [*lines, ""]
