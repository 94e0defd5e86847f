"""`run_audit`: the audit of one replay run in a session the caller owns (the replay job's
`--audit`, `make run`, `python -m jobs.audit`).

    from jobs.audit import AuditOptions, run_audit
    result = run_audit(spark, "out/tables", "20261122", AuditOptions(fail_on="critical"))
    sys.exit(result.exit_code)

Stages: extract (the run's tables, the observed snapshot) -> transform (every check, a
lazy union) -> load (`audit_checks`), then the post-mortem and the verdict, printed last.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import NamedTuple

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from jobs.audit.changes import change_lines
from jobs.audit.checks import CHECKS, all_checks
from jobs.audit.extract import AuditInputError, AuditInputs, read_inputs
from jobs.audit.incidents import incident_lines
from jobs.audit.load import write_checks
from jobs.audit.observed import ObservedSnapshot, load_observed
from jobs.audit.options import NEVER, AuditOptions, default_out
from jobs.audit.postmortem import (
    ClusterPostMortem,
    format_post_mortem,
    post_mortem,
    run_periods,
)
from jobs.engine.data_loss_lines import post_mortem_line
from schemas.audit import SEVERITIES, WARNING

log = logging.getLogger(__name__)

PASS, FAIL, ERROR = "PASS", "FAIL", "ERROR"
WARN = "WARN"  # printed for a PASS that found warnings (`verdict_word`)
EXAMPLES = 3  # rows shown per check in the report


class CheckCount(NamedTuple):
    severity: str
    check: str
    rows: int


@dataclass(frozen=True)
class AuditResult:
    """What an audit found and how the job should exit (0 pass, 1 fail, 2 bad input)."""

    run_id: str
    verdict: str  # PASS, FAIL or ERROR
    exit_code: int
    fail_on: str
    counts: list[CheckCount] = field(default_factory=list)
    post_mortem: list[ClusterPostMortem] = field(default_factory=list)
    unreadable_lines: int = 0  # lines of the --observed files that could not be read
    table: str | None = None  # where audit_checks was written
    report: str = ""  # the post-mortem, the checks and the verdict, as printed
    error: str | None = None

    def rows_of(self, check: str) -> int:
        return sum(c.rows for c in self.counts if c.check == check)


def _say(options: AuditOptions, text: str) -> None:
    if options.echo:
        print(text, flush=True)


def report_unreadable(snapshot: ObservedSnapshot | None, options: AuditOptions) -> int:
    """Every line of the snapshot that could not be read, printed; their number."""
    if snapshot is None:
        return 0
    for line in snapshot.unreadable:
        _say(options, f"[audit] observed: unreadable line {line.source}: {line.reason}: "
                      f"{line.text.strip()!r}")
    _say(options, f"[audit] observed: {len(snapshot.partitions)} partition(s) "
                  f"({snapshot.format}), {len(snapshot.unreadable)} unreadable line(s)")
    return len(snapshot.unreadable)


def count_checks(rows: DataFrame) -> list[CheckCount]:
    found = {(r["severity"], r["check"]): r["count"]
             for r in rows.groupBy("severity", "check").count().collect()}
    order = {name: i for i, name in enumerate(CHECKS)}
    return sorted((CheckCount(s, c, n) for (s, c), n in found.items()),
                  key=lambda c: (SEVERITIES.index(c.severity), order.get(c.check, 99)))


def format_examples(rows: DataFrame, counts: list[CheckCount]) -> str:
    """Up to EXAMPLES rows of each check that fired."""
    if not counts:
        return "checks: nothing found"
    rank = Window.partitionBy("check").orderBy("cluster", "topic", "partition", "broker_id")
    examples: dict[str, list[str]] = {}
    for r in rows.withColumn("n", F.row_number().over(rank)).where(F.col("n") <= EXAMPLES) \
            .orderBy("check", "n").collect():
        where = f"{r['topic']}-{r['partition']}" if r["topic"] is not None else (
            f"broker {r['broker_id']}" if r["broker_id"] is not None else f"cluster {r['cluster']}")
        examples.setdefault(r["check"], []).append(f"      {where}: {r['detail']}")
    lines = ["checks:"]
    for c in counts:
        lines.append(f"  {c.severity:<8} {c.check} {c.rows}")
        lines += examples.get(c.check, [])
        if c.rows > EXAMPLES:
            lines.append(f"      ... {c.rows - EXAMPLES} more in audit_checks")
    return "\n".join(lines)


def verdict_of(counts: list[CheckCount], fail_on: str) -> tuple[str, int]:
    """FAIL (exit 1) when a check of severity `fail_on` or worse found something."""
    if fail_on == NEVER:
        return PASS, 0
    failing = SEVERITIES[:SEVERITIES.index(fail_on) + 1]
    return (FAIL, 1) if any(c.severity in failing for c in counts) else (PASS, 0)


def verdict_word(verdict: str, counts: list[CheckCount]) -> str:
    """The word printed: the verdict, but WARN for a PASS with a warning found, the word
    of the report's badge (which judges as `--fail-on critical`: FAIL, WARN or PASS). The
    exit code, the verdict JSON and the gauge keep PASS: WARN does not fail the run."""
    if verdict == PASS and any(c.severity == WARNING and c.rows for c in counts):
        return WARN
    return verdict


def format_verdict(verdict: str, counts: list[CheckCount]) -> str:
    """`audit verdict: FAIL (critical: unavailable_partition 2; warning: ...)`."""
    parts = []
    for severity in SEVERITIES:
        listed = ", ".join(f"{c.check} {c.rows}" for c in counts if c.severity == severity)
        if listed:
            parts.append(f"{severity}: {listed}")
    return (f"audit verdict: {verdict_word(verdict, counts)} "
            f"({'; '.join(parts) or 'nothing found'})")


def loss_lines(inputs: AuditInputs) -> dict[str, list[str]]:
    """Per cluster, a line per unclean election of the run: what it lost (`data_loss`)."""
    out: dict[str, list[str]] = {}
    for r in sorted(inputs.data_loss.collect(), key=lambda r: (r["cluster"], r["seq"],
                                                               r["topic"], r["partition"])):
        out.setdefault(r["cluster"], []).append(post_mortem_line(r.asDict(recursive=True)))
    return out


def _audit(spark: SparkSession, tables_dir: str, run_id: str,
           options: AuditOptions) -> AuditResult:
    snapshot = load_observed(options.observed)
    unreadable = report_unreadable(snapshot, options)
    inputs = read_inputs(spark, tables_dir, run_id, options.cluster)
    rows = all_checks(spark, tables_dir, inputs, options, snapshot).persist()
    try:
        counts = count_checks(rows)
        table = None
        if options.write:
            table = write_checks(spark, rows, default_out(tables_dir, options), run_id,
                                 sum(c.rows for c in counts))
        examples = format_examples(rows, counts)
    finally:
        rows.unpersist()
    periods = run_periods(spark, tables_dir, run_id, inputs.bounds)
    reports = post_mortem(spark, inputs, periods, options.top)
    incidents = incident_lines(spark, tables_dir, run_id, options.cluster, options.top)
    changes = change_lines(spark, tables_dir, run_id, options.cluster)
    losses = loss_lines(inputs)
    verdict, exit_code = verdict_of(counts, options.fail_on)
    report = "\n".join([format_post_mortem(run_id, reports, incidents, changes, losses),
                        examples, format_verdict(verdict, counts)])
    _say(options, "\n" + report)
    return AuditResult(run_id, verdict, exit_code, options.fail_on, counts, reports,
                       unreadable, table, report)


def run_audit(spark: SparkSession, tables_dir: str, run_id: str,
              options: AuditOptions | None = None) -> AuditResult:
    """Audit run `run_id` of the replay tables under `tables_dir`: write `audit_checks`,
    print the post-mortem and the verdict (unless `options.echo` is false), return the
    result. Input that cannot be read (no such directory or run, an unreadable snapshot)
    is reported on stderr in one line and gives verdict ERROR, exit code 2."""
    options = options or AuditOptions()
    try:
        return _audit(spark, tables_dir, run_id, options)
    except AuditInputError as exc:
        log.error(str(exc))
        return AuditResult(run_id, ERROR, 2, options.fail_on, error=str(exc))
