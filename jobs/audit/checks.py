"""Every check of the audit, its severity, and the order they run in.

Each check is one function returning rows in the shape of `audit_checks` (without
`run_id`), documented with what it means for an operator:

    continuity.py  the log itself: late_events, missing_events, conflicting_events,
                   rejected_isr_changes, ts_backwards
    health.py      the end state: unavailable_partition, under_replicated_partition,
                   under_min_isr_partition, at_min_isr_partition, leader_imbalance
    activity.py    the run's events: unclean_election, stuck_reassignment, stuck_deletion,
                   controller_churn, broker_flapping, invalid_transition
    invariants.py  invariant_violation
    observed.py    observed_divergence, observed_unknown_partition (with --observed)
    freshness.py   no_new_events (severity configurable), offline_during_run

docs/audit.md has the same list as a table (checked by tests/jobs/audit/test_docs.py).
"""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import DataFrame, SparkSession

from jobs.audit.activity import activity_checks
from jobs.audit.continuity import continuity_checks
from jobs.audit.extract import AuditInputs
from jobs.audit.freshness import freshness_checks
from jobs.audit.health import end_state_checks
from jobs.audit.invariants import invariant_violation
from jobs.audit.observed import ObservedSnapshot, observed_checks, observed_cluster
from jobs.audit.options import AuditOptions
from jobs.audit.rows import empty_checks
from schemas.audit import CRITICAL, WARNING

# check -> severity, in the order of the report.
CHECKS: dict[str, str] = {
    "late_events": CRITICAL,
    "missing_events": CRITICAL,
    "conflicting_events": CRITICAL,
    "rejected_isr_changes": CRITICAL,
    "unavailable_partition": CRITICAL,
    "under_min_isr_partition": CRITICAL,
    "unclean_election": CRITICAL,
    "invariant_violation": CRITICAL,
    "observed_divergence": CRITICAL,
    "under_replicated_partition": WARNING,
    "at_min_isr_partition": WARNING,
    "stuck_reassignment": WARNING,
    "stuck_deletion": WARNING,
    "leader_imbalance": WARNING,
    "controller_churn": WARNING,
    "broker_flapping": WARNING,
    "invalid_transition": WARNING,
    "observed_unknown_partition": WARNING,
    "ts_backwards": WARNING,
    "no_new_events": WARNING,  # the default: `[audit] no_new_events_severity`
    "offline_during_run": WARNING,
}


def all_checks(spark: SparkSession, tables_dir: str, inputs: AuditInputs,
               options: AuditOptions, snapshot: ObservedSnapshot | None) -> DataFrame:
    """The rows of every check, unioned (lazy: nothing runs until they are written or
    counted)."""
    frames = [
        *continuity_checks(inputs, options),
        *end_state_checks(inputs, options),
        *activity_checks(spark, inputs, options),
        invariant_violation(inputs),
        *freshness_checks(spark, tables_dir, inputs, options),
    ]
    if snapshot is not None:
        cluster = observed_cluster(inputs, options.cluster)
        at: datetime | None = options.observed_at
        frames += observed_checks(spark, inputs, snapshot, cluster, at)
    rows = empty_checks(spark)
    for frame in frames:
        rows = rows.unionByName(frame)
    return rows
