"""The audit's verdict where a scheduler and monitoring look: `--verdict-json FILE` and
`--prometheus FILE` of `jobs.audit` and `jobs.replay --audit` (docs/audit.md, Monitoring).

    verdict JSON   the verdict, the exit code, the rows of every check, each cluster's key
                   figures from the run's `run_summary` row, when it finished
    textfile       the same as gauges for node_exporter's textfile collector, written with
                   prometheus_client, every series labelled `cluster` (and
                   `kafka_replay_run_info` with the run id);
                   `kafka_replay_last_success_timestamp_seconds` is the end of the last run
                   whose audit completed (PASS or FAIL) over new rows, carried over from the
                   previous file by a run that ends in ERROR or read nothing

Both files are replaced atomically (a temporary file in the same directory, then a rename),
so a reader never sees half of one. The writers take an `AuditResult` and the figures and
need no Spark; `read_figures` is the one function that reads a table.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jobs.audit.checks import CHECKS
from jobs.audit.run import ERROR, FAIL, PASS, AuditResult
from jobs.common.exitcodes import BAD_INPUT, CHECKPOINT_BUSY
from jobs.store.tables import read_table_or_empty
from schemas.audit import CRITICAL

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # imported where used: only --prometheus needs prometheus_client
    from prometheus_client import CollectorRegistry

PREFIX = "kafka_replay_"
LAST_SUCCESS = f"{PREFIX}last_success_timestamp_seconds"
VERDICT_VALUES = {PASS: 0, FAIL: 1, ERROR: 2}
OFFLINE = "OfflinePartition"  # partitions_by_state key of offline partitions at the end
# Per-cluster gauges: (name after the prefix, ClusterFigures field, help).
CLUSTER_GAUGES: tuple[tuple[str, str, str], ...] = (
    ("offline_partitions", "offline_partitions",
     "Partitions in OfflinePartition at the end of the run"),
    ("offline_partition_seconds", "offline_partition_seconds",
     "Partition-seconds offline in the run's period"),
    ("late_rows", "rows_late", "Rows at or below what earlier runs applied (not applied)"),
    ("rows_read", "rows_read", "Rows the run read"),
    ("rows_applied", "rows_applied", "Rows the run applied"),
    ("rows_quarantined", "rows_quarantined", "Rows the run quarantined (reason in quarantine)"),
    ("rows_late", "rows_late", "Rows the run read late: at or below what earlier runs "
     "applied, not applied (as late_rows)"),
    ("seq_gaps", "missing_seqs",
     "Seqs that never arrived, within the run and since the last committed run"),
)


@dataclass(frozen=True)
class ClusterFigures:
    """One cluster's key figures of a run, from its `run_summary` row. The seq columns
    read as 0 / null / empty from tables written before `run_summary` had them."""

    rows_read: int = 0
    rows_applied: int = 0
    rows_duplicate: int = 0
    rows_quarantined: int = 0
    rows_late: int = 0
    offline_partitions: int = 0  # partitions in OfflinePartition at the end of the run
    offline_partition_seconds: float = 0.0
    seq_min: int | None = None
    seq_max: int | None = None
    seq_gaps: tuple[tuple[int, int], ...] = ()  # inclusive ranges of missing seqs
    missing_seqs: int = 0
    late_seq_min: int | None = None
    late_seq_max: int | None = None

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["seq_gaps"] = [{"seq_from": a, "seq_to": b} for a, b in self.seq_gaps]
        return out


def _long(value: Any) -> int | None:
    return None if value is None else int(value)


def figures_of(row: Mapping[str, Any]) -> ClusterFigures:
    """The figures of one `run_summary` row (as a dict; nested rows as dicts too)."""
    gaps = row.get("seq_gaps") or ()
    return ClusterFigures(
        rows_read=int(row.get("rows_read") or 0),
        rows_applied=int(row.get("rows_applied") or 0),
        rows_duplicate=int(row.get("rows_duplicate") or 0),
        rows_quarantined=int(row.get("rows_quarantined") or 0),
        rows_late=int(row.get("rows_late") or 0),
        offline_partitions=int((row.get("partitions_by_state") or {}).get(OFFLINE, 0)),
        offline_partition_seconds=float(row.get("offline_partition_seconds") or 0.0),
        seq_min=_long(row.get("seq_min")),
        seq_max=_long(row.get("seq_max")),
        seq_gaps=tuple((int(g["seq_from"]), int(g["seq_to"])) for g in gaps),
        missing_seqs=int(row.get("missing_seqs") or 0),
        late_seq_min=_long(row.get("late_seq_min")),
        late_seq_max=_long(row.get("late_seq_max")),
    )


def read_figures(spark: SparkSession, tables_dir: str, run_id: str,
                 cluster: str | None = None) -> dict[str, ClusterFigures]:
    """Each cluster's figures from the run's `run_summary` rows (none when the run wrote
    no summary); only `cluster`'s when given, as the audit of one cluster."""
    rows = read_table_or_empty(spark, tables_dir, "run_summary") \
        .where(F.col("run_id") == run_id)
    if cluster is not None:
        rows = rows.where(F.col("cluster") == cluster)
    found = rows.orderBy(F.col("finished_at").asc_nulls_first()).collect()
    return {r["cluster"]: figures_of(r.asDict(recursive=True)) for r in found}


# -- what is published -------------------------------------------------------------------------

def failed(run_id: str, fail_on: str, exit_code: int, message: str) -> AuditResult:
    """The result of a run that stopped before its audit could judge anything."""
    return AuditResult(run_id, ERROR, exit_code, fail_on, error=message)


def replay_stopped(run_id: str, fail_on: str | None, exit_code: int) -> AuditResult:
    """`jobs.replay --audit` whose replay stopped (bad input, a busy checkpoint): no audit."""
    why = {BAD_INPUT: "bad input, its line on stderr says what",
           CHECKPOINT_BUSY: "the checkpoint is in use by another run"}.get(exit_code, "")
    return failed(run_id, fail_on or CRITICAL, exit_code,
                  f"the replay stopped with exit {exit_code} before its audit"
                  + (f" ({why})" if why else ""))


def check_rows(result: AuditResult) -> list[dict[str, Any]]:
    """Every known check with its rows (0 when silent), then any other check that fired;
    none for an ERROR run: nothing was checked."""
    if result.verdict == ERROR:
        return []
    fired = {c.check: c.severity for c in result.counts}  # a configured severity wins
    known = [{"check": c, "severity": fired.get(c, s), "rows": result.rows_of(c)}
             for c, s in CHECKS.items()]
    other = [{"check": c.check, "severity": c.severity, "rows": c.rows}
             for c in result.counts if c.check not in CHECKS]
    return known + other


def utc_iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def verdict_document(result: AuditResult, clusters: Mapping[str, ClusterFigures],
                     finished_at: datetime) -> dict[str, Any]:
    return {
        "run_id": result.run_id,
        "verdict": result.verdict,
        "exit_code": result.exit_code,
        "fail_on": result.fail_on,
        "checks": check_rows(result),
        "clusters": {name: f.as_json() for name, f in sorted(clusters.items())},
        "finished_at": utc_iso(finished_at),
        "error": result.error,
    }


def replace_atomically(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`: a
    reader sees the old file or the new one, never a part."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; the scheduler may read as another user
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_verdict_json(path: Path, result: AuditResult,
                       clusters: Mapping[str, ClusterFigures], finished_at: datetime,
                       cluster: str | None = None) -> None:
    document = verdict_document(result, clusters, finished_at)
    replace_atomically(path, json.dumps(document, indent=2) + "\n")


# -- the textfile ------------------------------------------------------------------------------

def previous_textfile(path: Path) -> tuple[float | None, str | None]:
    """`kafka_replay_last_success_timestamp_seconds` of an earlier textfile and its
    `cluster` label, each None when absent (no file, unreadable, or without the metric)."""
    from prometheus_client.parser import text_string_to_metric_families

    try:
        text = path.read_text(encoding="utf-8")
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == LAST_SUCCESS:
                    return float(sample.value), sample.labels.get("cluster")
    except (OSError, ValueError, IndexError, KeyError):  # what the parser raises on junk
        return None, None
    return None, None


def previous_last_success(path: Path) -> float | None:
    return previous_textfile(path)[0]


def read_anything(clusters: Mapping[str, ClusterFigures]) -> bool:
    """Did the run read any row? (No figures: nothing is known to have been read.)"""
    return any(f.rows_read > 0 for f in clusters.values())


def last_success(result: AuditResult, finished_at: datetime, previous: float | None,
                 read_rows: bool = True) -> float:
    """Success = the audit completed (PASS or FAIL: the tool worked, whatever it found)
    over a run that read rows. An ERROR run, or one that read nothing new (a stopped
    exporter looks like a quiet night), keeps the previous success; 0 when there never was
    one, so the staleness alert fires."""
    if result.verdict in (PASS, FAIL) and read_rows:
        return finished_at.timestamp()
    return previous or 0.0


def cluster_label(clusters: Mapping[str, ClusterFigures], cluster: str | None,
                  previous: str | None) -> str:
    """The `cluster` label of the run's series: the audited cluster (`--cluster`), else the
    clusters of its figures (joined by commas), else the previous file's (an ERROR run
    that read no table), else `unknown`. Two jobs' textfiles in one directory then hold
    different series, which node_exporter serves side by side."""
    return cluster or ",".join(sorted(clusters)) or previous or "unknown"


def _cluster_gauges(registry: CollectorRegistry,
                    clusters: Mapping[str, ClusterFigures]) -> None:
    from prometheus_client import Gauge

    for name, field_name, help_text in CLUSTER_GAUGES:
        gauge = Gauge(f"{PREFIX}{name}", help_text, ["cluster"], registry=registry)
        for cluster, f in sorted(clusters.items()):
            gauge.labels(cluster).set(float(getattr(f, field_name)))


def registry_of(result: AuditResult, clusters: Mapping[str, ClusterFigures],
                last_success_at: float, cluster: str = "unknown") -> CollectorRegistry:
    """The gauges of one run, every one labelled `cluster` (the run's series `cluster`,
    the per-cluster gauges each cluster's). An ERROR run has no check gauges (nothing was
    checked: an absent series, not a false 0)."""
    from prometheus_client import CollectorRegistry, Gauge

    registry = CollectorRegistry()
    Gauge(f"{PREFIX}run_info", "The last run audited: 1, its run id and cluster as labels",
          ["cluster", "run_id"], registry=registry).labels(cluster, result.run_id).set(1)
    Gauge(f"{PREFIX}verdict", "Audit verdict of the last run: 0 PASS, 1 FAIL, 2 ERROR",
          ["cluster"], registry=registry).labels(cluster).set(VERDICT_VALUES[result.verdict])
    Gauge(LAST_SUCCESS, "End of the last run whose audit completed (PASS or FAIL) over "
          "new rows, Unix time", ["cluster"], registry=registry).labels(cluster) \
        .set(last_success_at)
    if result.verdict != ERROR:
        rows = Gauge(f"{PREFIX}check_rows", "Rows the audit check found in the last run",
                     ["cluster", "check", "severity"], registry=registry)
        for c in check_rows(result):
            rows.labels(cluster, c["check"], c["severity"]).set(c["rows"])
    _cluster_gauges(registry, clusters)
    return registry


def write_prometheus(path: Path, result: AuditResult, clusters: Mapping[str, ClusterFigures],
                     finished_at: datetime, cluster: str | None = None) -> None:
    """The textfile, written by prometheus_client's `write_to_textfile` (a temporary
    `<path>.<pid>.<thread>` beside it, then a rename: the collector reads only `*.prom`)."""
    from prometheus_client import write_to_textfile

    previous, previous_cluster = previous_textfile(path)
    success = last_success(result, finished_at, previous, read_anything(clusters))
    label = cluster_label(clusters, cluster, previous_cluster)
    write_to_textfile(str(path), registry_of(result, clusters, success, label))


# -- the flags -------------------------------------------------------------------------------

def publish_problem(verdict_json: str | None, prometheus: str | None) -> str | None:
    """Why the files cannot be written, found before the run starts, or None."""
    if prometheus is not None and not prometheus.endswith(".prom"):
        return (f"--prometheus {prometheus}: the name must end in .prom (node_exporter's "
                "textfile collector reads only *.prom files)")
    for flag, path in (("--verdict-json", verdict_json), ("--prometheus", prometheus)):
        if path is None:
            continue
        parent = Path(path).parent
        if not parent.is_dir():
            return f"{flag} {path}: directory {parent} does not exist (a local path)"
        if not os.access(parent, os.W_OK):
            return f"{flag} {path}: directory {parent} cannot be written"
    return None


def publish(result: AuditResult, clusters: Mapping[str, ClusterFigures], *,
            verdict_json: str | None, prometheus: str | None,
            finished_at: datetime | None = None, cluster: str | None = None) -> int:
    """Write the files asked for; the result's exit code. A file that cannot be written is
    one line on stderr and leaves the exit code the verdict's (the old textfile's last
    success then goes stale, which the staleness alert reports)."""
    at = finished_at or datetime.now(UTC)
    for flag, path, write in (("--verdict-json", verdict_json, write_verdict_json),
                              ("--prometheus", prometheus, write_prometheus)):
        if path is None:
            continue
        try:
            write(Path(path), result, clusters, at, cluster)
        except OSError as exc:
            log.error(f"{flag} {path} not written: {exc}")
        else:
            log.info(f"{flag}: verdict {result.verdict} written to {path}")
    return result.exit_code


def publish_run(spark: SparkSession | None, tables_dir: str, result: AuditResult, *,
                verdict_json: str | None, prometheus: str | None,
                cluster: str | None = None) -> int:
    """`publish` with the run's figures read from its `run_summary`. For an ERROR run
    they are what can be read: none when the tables cannot be (or Spark never started)."""
    if verdict_json is None and prometheus is None:
        return result.exit_code
    clusters: dict[str, ClusterFigures] = {}
    if spark is not None and result.verdict != ERROR:
        clusters = read_figures(spark, tables_dir, result.run_id, cluster)
    elif spark is not None:
        with contextlib.suppress(Exception):  # best effort: the run already failed
            clusters = read_figures(spark, tables_dir, result.run_id, cluster)
    return publish(result, clusters, verdict_json=verdict_json, prometheus=prometheus,
                   cluster=cluster)
