"""The audit's settings: thresholds, the observed snapshot, what fails the run.

The Kafka settings come from the replay's config file (`conf/replay.toml`, read by
`jobs.common.config.load_config`): `[kafka] min_insync_replicas` and
`leader_imbalance_per_broker_percentage`, and per-topic `[topics."NAME"]
min_insync_replicas`, so the audit judges a partition against the same min.insync.replicas
as the replay's `under_min_isr` windows. The audit's own thresholds may sit in an `[audit]`
table of the same file; command-line flags win over both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jobs.common.config import DEFAULTS, load_config
from jobs.common.config import parse_duration as parse_duration  # re-exported for jobs.audit
from schemas.audit import CRITICAL, SEVERITIES, WARNING

NEVER = "never"
FAIL_ON_CHOICES: tuple[str, ...] = (*SEVERITIES, NEVER)

# Kafka's default `leader.imbalance.per.broker.percentage` (`Defaults` in KafkaConfig.scala, 3.7.1).
DEFAULT_LEADER_IMBALANCE_PERCENTAGE = 10
AUDIT_DEFAULTS: dict[str, Any] = {
    **DEFAULTS,
    "leader_imbalance_per_broker_percentage": DEFAULT_LEADER_IMBALANCE_PERCENTAGE,
    "max_reassignment_age": "1h",
    "max_deletion_age": "1h",
    "max_failovers": 2,
    "max_restarts": 3,
    # Rejected AlterPartition (IsrChanged) events a run may have before the audit calls it
    # a sign of missing events: Kafka rejects a stale leader's request now and then.
    "max_rejected_isr_changes": 10,
    # A run that read nothing new (jobs/audit/freshness.py): the check's severity, and how
    # long since the last run that read rows before it fires (0: every such run).
    "no_new_events_severity": WARNING,
    "no_new_events_age": "0",
    # Partition-seconds offline during a run above which `offline_during_run` warns.
    "max_offline_partition_seconds": 0,
}
CONFIG_SECTIONS = ("replay", "kafka", "audit")


def parse_timestamp(text: str) -> datetime:
    """An ISO 8601 instant (`2026-11-20T01:00:00Z`, `2026-11-20 01:00:00`); without a
    zone it is UTC, the zone of every table."""
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@dataclass(frozen=True)
class AuditOptions:
    """Everything one audit needs besides the tables and the run id."""

    observed: tuple[str, ...] = ()  # kafka-topics --describe / ZooKeeper dump files
    observed_at: datetime | None = None  # the snapshot's instant; None: the end of the run
    fail_on: str = CRITICAL  # critical, warning or never
    out: str | None = None  # where audit_checks goes; None: the tables directory
    cluster: str | None = None  # audit one cluster only; None: every cluster of the run
    min_insync_replicas: int = 1
    topic_min_insync_replicas: tuple[tuple[str, int], ...] = ()
    leader_imbalance_percentage: float = DEFAULT_LEADER_IMBALANCE_PERCENTAGE
    max_reassignment_age: float = 3600.0  # seconds
    max_deletion_age: float = 3600.0  # seconds
    max_failovers: int = 2
    max_restarts: int = 3
    max_rejected_isr_changes: int = 10
    no_new_events_severity: str = WARNING
    no_new_events_age: float = 0.0  # seconds
    max_offline_partition_seconds: float = 0.0
    top: int = 10  # windows and rollup lines in the post-mortem
    write: bool = True  # write audit_checks
    echo: bool = True  # print the post-mortem and the verdict

    def min_isr_of(self, topic: str) -> int:
        return dict(self.topic_min_insync_replicas).get(topic, self.min_insync_replicas)


def severity_of(value: Any, key: str) -> str:
    """A severity of the config file, checked (a typo would silence the check)."""
    if value not in SEVERITIES:
        raise ValueError(f"[audit] {key} = {value!r}: one of {', '.join(SEVERITIES)}")
    return str(value)


def options_from_config(config: str | None = None, **overrides: Any) -> AuditOptions:
    """Options from the config file (default `conf/replay.toml`), then `overrides` (the
    command line's flags that were given; None values are ignored)."""
    cfg, _ = load_config(config, defaults=AUDIT_DEFAULTS, sections=CONFIG_SECTIONS)
    topics = tuple(sorted(
        (topic, int(settings["min_insync_replicas"]))
        for topic, settings in cfg["topics"].items() if "min_insync_replicas" in settings))
    values: dict[str, Any] = {
        "min_insync_replicas": int(cfg["min_insync_replicas"]),
        "topic_min_insync_replicas": topics,
        "leader_imbalance_percentage": float(cfg["leader_imbalance_per_broker_percentage"]),
        "max_reassignment_age": parse_duration(cfg["max_reassignment_age"]),
        "max_deletion_age": parse_duration(cfg["max_deletion_age"]),
        "max_failovers": int(cfg["max_failovers"]),
        "max_restarts": int(cfg["max_restarts"]),
        "max_rejected_isr_changes": int(cfg["max_rejected_isr_changes"]),
        "no_new_events_severity": severity_of(cfg["no_new_events_severity"],
                                              "no_new_events_severity"),
        "no_new_events_age": parse_duration(cfg["no_new_events_age"]),
        "max_offline_partition_seconds": float(cfg["max_offline_partition_seconds"]),
    }
    values.update({k: v for k, v in overrides.items() if v is not None})
    return AuditOptions(**values)


def default_out(tables_dir: str, options: AuditOptions) -> str:
    return options.out or tables_dir
