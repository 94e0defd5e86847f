"""What a run has committed so far, kept in the checkpoint, so that a rerun of a run id that
was killed finishes that run instead of starting it over.

Spark records a micro-batch as done (`<checkpoint>/query/commits/N`) once `foreachBatch`
returns; the run marker (`<checkpoint>/runs/<run_id>.json`) comes later, after
`run_summary` and the history. A run killed in between has written every table of its
batches, but Spark will never hand those batches to the sink again: a rerun that started the
run's tables afresh would lose them, and its summary would count nothing. So the sink writes
`<checkpoint>/runs/<run_id>/batch-<N>.json`, the batch's counts, after the batch's tables and
before returning to Spark. A rerun of the run id reads these records:

* a batch recorded with a lower id than the batch at hand means the run's partitions already
  hold rows: this batch appends to them (and replaces the state rows of the buckets it
  replays), it does not replace them;
* the run's counts, rows written and watermarks are those of every record, so a rerun that
  finds nothing left to replay still writes the summary the killed run would have written;
* a batch Spark re-executes (killed before its commit) rewrites its own record.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from jobs.store.filesystem import list_names, path_exists, read_text, write_text
from jobs.store.layout import CheckpointLayout
from schemas.state import OFFLINE_LISTED
from schemas.tables import STATE_TABLES


@dataclass
class ClusterCounts:
    """One cluster's counts: of one batch, or summed over a run's batches."""

    rows_read: int = 0
    rows_applied: int = 0
    rows_duplicate: int = 0
    rows_quarantined: int = 0
    rows_late: int = 0
    findings_by_kind: Counter[str] = field(default_factory=Counter)
    rows_written: Counter[str] = field(default_factory=Counter)
    # bucket -> (partitions by state, first offline partitions), from the bucket's latest
    # batch: every batch a bucket is in reports the full state of its partitions.
    buckets: dict[int, tuple[dict[str, int], list[tuple[str, int]]]] = field(
        default_factory=dict)
    # The highest seq any group of the cluster has applied (events and timeline steps):
    # what the next run's rows are late against.
    applied_through: int = -1
    # The latest event time (microseconds) the cluster's rows carried, -1 for none: where
    # the run's period ends (jobs/engine/offline_rollup.py).
    last_ts: int = -1
    # A what-if variant's groups taken whole from the reference's fold, and the events it
    # took from there instead of folding them (`jobs.whatif.sharing`).
    groups_shared: int = 0
    events_shared: int = 0

    SUMS = ("rows_read", "rows_applied", "rows_duplicate", "rows_quarantined", "rows_late")

    @property
    def partitions_by_state(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for states, _ in self.buckets.values():
            total.update(states)
        return total

    def offline_partitions(self, limit: int = OFFLINE_LISTED) -> list[tuple[str, int]]:
        listed = sorted(p for _, off in self.buckets.values() for p in off)
        return listed[:limit]

    def merge(self, later: ClusterCounts) -> None:
        """Add a later batch's counts to these. A state table's rows written are the later
        batch's: it counts the run's whole state partition after it."""
        for name in self.SUMS:
            setattr(self, name, getattr(self, name) + getattr(later, name))
        self.findings_by_kind.update(later.findings_by_kind)
        for table, rows in later.rows_written.items():
            if table in STATE_TABLES:
                self.rows_written[table] = rows
            else:
                self.rows_written[table] += rows
        self.buckets.update(later.buckets)
        self.applied_through = max(self.applied_through, later.applied_through)
        self.last_ts = max(self.last_ts, later.last_ts)
        self.groups_shared += later.groups_shared
        self.events_shared += later.events_shared

    def to_json(self) -> dict[str, object]:
        return {
            **{name: getattr(self, name) for name in self.SUMS},
            "findings_by_kind": dict(sorted(self.findings_by_kind.items())),
            "rows_written": dict(sorted(self.rows_written.items())),
            "buckets": {str(b): [s, off] for b, (s, off) in sorted(self.buckets.items())},
            "applied_through": self.applied_through,
            "last_ts": self.last_ts,
            "groups_shared": self.groups_shared,
            "events_shared": self.events_shared,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClusterCounts:
        return cls(
            **{name: int(data[name]) for name in cls.SUMS},
            findings_by_kind=Counter(data["findings_by_kind"]),
            rows_written=Counter(data["rows_written"]),
            buckets={int(b): (dict(s), [(t, int(p)) for t, p in off])
                     for b, (s, off) in data["buckets"].items()},
            applied_through=int(data["applied_through"]),
            last_ts=int(data.get("last_ts", -1)),
            groups_shared=int(data.get("groups_shared", 0)),
            events_shared=int(data.get("events_shared", 0)),
        )


BatchCounts = dict[str, ClusterCounts]  # cluster -> counts


@dataclass
class RunLedger:
    """The batch records of one run id in one checkpoint."""

    spark: SparkSession
    checkpoint: str
    run_id: str
    records: dict[int, BatchCounts] = field(default_factory=dict)

    @property
    def directory(self) -> str:
        return CheckpointLayout(self.checkpoint).ledger(self.run_id)

    def load(self) -> RunLedger:
        """Read the records an earlier attempt of this run left."""
        if not path_exists(self.directory):
            return self
        for name in list_names(self.directory):
            if name.startswith("batch-") and name.endswith(".json"):
                data = json.loads(read_text(f"{self.directory}/{name}"))
                self.records[int(data["batch_id"])] = {
                    c: ClusterCounts.from_json(v) for c, v in data["clusters"].items()}
        return self

    def record(self, batch_id: int, counts: BatchCounts) -> None:
        """Write one batch's counts (after its tables, before Spark commits it)."""
        text = json.dumps({"batch_id": batch_id,
                           "clusters": {c: v.to_json() for c, v in sorted(counts.items())}},
                          sort_keys=True)
        write_text(f"{self.directory}/batch-{batch_id}.json", text + "\n")
        self.records[batch_id] = counts

    def earlier_than(self, batch_id: int) -> bool:
        """Whether the run already has a batch before `batch_id` (its rows are written)."""
        return any(b < batch_id for b in self.records)

    def totals(self) -> BatchCounts:
        """The run's counts: every record, in batch order."""
        total: BatchCounts = {}
        for batch_id in sorted(self.records):
            for cluster, counts in self.records[batch_id].items():
                total.setdefault(cluster, ClusterCounts()).merge(counts)
        return total
