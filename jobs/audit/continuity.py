"""Checks on the log itself: did the replay see every event of the night?

A verdict over a night the replay did not see is worthless, so these read the run's
`run_summary` (the replay's own account of the rows it read, `jobs/engine/log_checks.py`) and
fire before any check on the cluster's health can be trusted:

* `late_events`: rows at or below what the checkpoint had already applied: a night
  delivered after the next one. The state machines cannot rewind, so they were counted, not
  replayed; `jobs.replay --rebuild` replays the whole log with them into a new checkpoint.
* `missing_events`: seqs that never arrived, inside the run or between the last committed
  run and this one. The controller's queue positions are consecutive, so a hole is events
  the log lost; everything replayed after it may be wrong.
* `conflicting_events`: two different events at one seq, both quarantined.
* `rejected_isr_changes`: more `alter_partition_rejected` findings than
  `max_rejected_isr_changes`. Kafka's controller rejects an AlterPartition from a stale
  leader or epoch now and then; a flood of them means the replay's leaders and epochs
  are not the cluster's, the usual sign of missing events.
* `ts_backwards`: event times running backwards against seq by more than the replay's
  `ts_backwards_tolerance`: a clock step or a merge of logs in the wrong order; window
  durations around it are not to be trusted.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jobs.audit.extract import AuditInputs
from jobs.audit.options import AuditOptions
from jobs.audit.rows import check_frame
from schemas.audit import CRITICAL, WARNING

REJECTED_ISR = "alter_partition_rejected"
OFFSET_GAP = "offset_gap"  # a KRaft run's hole (`jobs.engine.kraft.continuity`)
REBUILD_HINT = ("replay the whole log into a new checkpoint with the same command plus "
                "--rebuild (jobs.replay --events E --out O --checkpoint C --rebuild)")


def _ranges(column: Column, limit: int = 5) -> Column:
    """`2301-3100, 4000` of an array of (seq_from, seq_to), the first `limit`."""
    text = F.transform(F.slice(column, 1, limit), lambda g: F.when(
        g["seq_from"] == g["seq_to"], g["seq_from"].cast("string")).otherwise(
        F.concat(g["seq_from"].cast("string"), F.lit("-"), g["seq_to"].cast("string"))))
    more = F.when(F.size(column) > limit, F.format_string(" and %d more range(s)",
                                                          F.size(column) - limit))
    return F.concat(F.array_join(text, ", "), F.coalesce(more, F.lit("")))


def late_events(inputs: AuditInputs) -> DataFrame:
    """CRITICAL: rows arrived after the checkpoint had replayed past their seqs (a night
    delivered late). They were not applied: the tables miss them."""
    rows = inputs.summary.where(F.col("rows_late") > 0)
    at = "metadata-log offsets" if inputs.kraft else "seqs"
    detail = F.format_string(
        f"%d row(s) at {at} %d-%d arrived after the checkpoint had applied past them and "
        f"were not replayed; {REBUILD_HINT}",
        F.col("rows_late"), F.col("late_seq_min"), F.col("late_seq_max"))
    return check_frame(rows, "late_events", CRITICAL, detail)


def missing_events(inputs: AuditInputs) -> DataFrame:
    """CRITICAL: seqs never arrived (a night or a file missing). The replay ran past the
    hole, so what it holds after it may be wrong. A KRaft run says of each hole of its
    metadata log what it is (an `offset_gap` finding: never delivered, or below a snapshot
    retention may have removed it after): its words replace the guess."""
    why = inputs.findings.where(F.col("kind") == OFFSET_GAP).groupBy("cluster").agg(
        F.array_join(F.slice(F.sort_array(F.collect_list(F.struct("seq", "detail"))), 1, 3)
                     .getField("detail"), "; ").alias("why"))
    rows = inputs.summary.where(F.col("missing_seqs") > 0).join(why, "cluster", "left")
    detail = F.format_string(
        "%d seq(s) never arrived: %s (this run read %d-%d; earlier runs ended at %s); the "
        "replay ran past them. Find and deliver the missing files, then " + REBUILD_HINT,
        F.col("missing_seqs"), _ranges(F.col("seq_gaps")), F.col("seq_min"),
        F.col("seq_max"), F.coalesce(F.col("previous_seq_max").cast("string"),
                                     F.lit("nowhere")))
    kraft = F.format_string(
        "%d metadata-log offset(s) not replayed (earlier runs folded through %s): %s; the "
        "replay ran past them", F.col("missing_seqs"),
        F.coalesce(F.col("previous_seq_max").cast("string"), F.lit("nothing")), F.col("why"))
    return check_frame(rows, "missing_events", CRITICAL,
                       F.when(F.col("why").isNotNull(), kraft).otherwise(detail))


def conflicting_events(inputs: AuditInputs) -> DataFrame:
    """CRITICAL: two different events at one seq: both were quarantined, so the replay
    misses the one that happened."""
    rows = inputs.summary.where(F.size(F.coalesce(F.col("conflicting_seqs"),
                                                  F.array().cast("array<long>"))) > 0)
    detail = F.format_string(
        "two different events at seq(s) %s: both quarantined (see quarantine); fix the "
        "exporter and " + REBUILD_HINT,
        F.array_join(F.slice(F.col("conflicting_seqs"), 1, 10).cast("array<string>"), ", "))
    return check_frame(rows, "conflicting_events", CRITICAL, detail)


def rejected_isr_changes(inputs: AuditInputs, options: AuditOptions) -> DataFrame:
    """CRITICAL: more rejected ISR changes than `max_rejected_isr_changes`: the replay's
    leaders or epochs differ from the cluster's, usually because events are missing."""
    rows = inputs.findings.where(F.col("kind") == REJECTED_ISR).groupBy("cluster").agg(
        F.count(F.lit(1)).alias("n"), F.min("seq").alias("first_seq"),
        F.min("ts").alias("first_ts")).where(F.col("n") > options.max_rejected_isr_changes)
    detail = F.format_string(
        f"%d IsrChanged event(s) rejected (> {options.max_rejected_isr_changes}), the first "
        "at seq %d: the replay's leaders or epochs are not the cluster's; look for "
        "missing_events, else compare with the controller log",
        F.col("n"), F.col("first_seq"))
    return check_frame(rows, "rejected_isr_changes", CRITICAL, detail,
                       since_ts=F.col("first_ts"))


def ts_backwards(inputs: AuditInputs) -> DataFrame:
    """WARNING: event times run backwards against seq: durations around them are wrong."""
    rows = inputs.summary.where(F.col("ts_backwards_count") > 0)
    detail = F.format_string(
        "event time runs backwards at %d seq(s) (first: %s): a clock step or logs merged "
        "out of order; window durations around them are not to be trusted",
        F.col("ts_backwards_count"),
        F.array_join(F.slice(F.col("ts_backwards_seqs"), 1, 5).cast("array<string>"), ", "))
    return check_frame(rows, "ts_backwards", WARNING, detail)


def continuity_checks(inputs: AuditInputs, options: AuditOptions) -> list[DataFrame]:
    return [late_events(inputs), missing_events(inputs), conflicting_events(inputs),
            rejected_isr_changes(inputs, options), ts_backwards(inputs)]
