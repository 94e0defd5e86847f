"""`run_summary` rows (one per run and cluster) and the human summary printed at the end."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from jobs.common.instants import micros
from jobs.engine.codec import rows_to_record_batch
from jobs.engine.log_checks import SeqFacts
from jobs.engine.offline_rollup import Rollup
from jobs.store.ledger import BatchCounts, ClusterCounts
from schemas.event_types import DEFAULT_CLUSTER


def summary_batches(
    counts: BatchCounts,
    rollups: dict[str, Rollup],
    batches: int,
    run_id: str,
    buckets: int,
    started_at: datetime,
    finished_at: datetime,
    seconds: dict[str, float],
    facts: Mapping[str, SeqFacts] | None = None,
    superseded: Sequence[str] = (),
    state_runs: Sequence[str] = (),
) -> list[pa.RecordBatch]:
    """One row per cluster; a run that read nothing still has one (of the default cluster,
    all zeros), so that a scheduler can tell "no events" from "did not run". `state_runs`:
    the runs whose state rows make up the state after this one (none given: the run
    wrote the whole state itself)."""
    stage = sorted((k, round(v, 3)) for k, v in seconds.items())
    facts = facts or {}
    out = []
    for cluster in sorted(set(counts) | set(facts)) or [DEFAULT_CLUSTER]:
        c = counts.get(cluster, ClusterCounts())
        r = rollups.get(cluster, Rollup())
        f = facts.get(cluster, SeqFacts())
        row = (
            micros(started_at), micros(finished_at), buckets, batches,
            c.rows_read, c.rows_applied, c.rows_duplicate, c.rows_quarantined, c.rows_late,
            sorted(c.findings_by_kind.items()), sorted(c.partitions_by_state.items()),
            sorted(c.rows_written.items()), r.seconds, sorted(r.by_topic.items()),
            sorted(r.by_cause_broker.items()), stage, r.period_start_us, r.period_end_us,
            *continuity(f), list(superseded), list(state_runs) or [run_id],
        )
        out.append(rows_to_record_batch("run_summary", cluster, run_id, [row]))
    return out


def continuity(f: SeqFacts) -> tuple[Any, ...]:
    """The `run_summary` columns of a cluster's `SeqFacts`, in schema order."""
    late = f.late or (None, None)
    return (f.seq_min, f.seq_max, f.previous_seq_max,
            [{"seq_from": a, "seq_to": b} for a, b in f.gaps], f.missing, late[0], late[1],
            list(f.conflicting), list(f.ts_backwards), f.ts_backwards_count)


def ranges(gaps: Iterable[tuple[int, int]], limit: int = 5) -> str:
    """`1001-2000, 2301` (the first `limit`, then how many more)."""
    listed = [f"{a}" if a == b else f"{a}-{b}" for a, b in gaps]
    more = f" and {len(listed) - limit} more" if len(listed) > limit else ""
    return ", ".join(listed[:limit]) + more


def continuity_lines(f: SeqFacts) -> list[str]:
    """What is wrong with the log's continuity, loudly (nothing when all is well)."""
    lines = []
    if f.gaps:
        lines.append(f"  WARNING missing events: {f.missing} seq(s) never arrived "
                     f"({ranges(f.gaps)}); the replay ran past them")
    if f.late is not None:
        lines.append(f"  WARNING late events: seqs {f.late[0]}-{f.late[1]} arrived after the "
                     "checkpoint applied them and were not replayed; absorb them with "
                     "--rebuild")
    if f.conflicting:
        lines.append(f"  WARNING conflicting events: two different events at seq(s) "
                     f"{', '.join(map(str, f.conflicting[:10]))}; both quarantined")
    if f.ts_backwards_count:
        lines.append(f"  WARNING time runs backwards at {f.ts_backwards_count} seq(s) "
                     f"(first: {', '.join(map(str, f.ts_backwards[:5]))})")
    return lines


def print_summary(out_dir: str, run_id: str, counts: BatchCounts,
                  rollups: dict[str, Rollup],
                  facts: Mapping[str, SeqFacts] | None = None, release: str = "") -> None:
    """The release replayed, partitions by state, offline partitions, findings by kind,
    the log's continuity, where the tables are."""
    print(f"\n== replay run {run_id} ==")
    if release:
        print(f"release replayed: {release}")
    if not counts:
        print("no events: rows read 0")
    for cluster in sorted(counts):
        c = counts[cluster]
        print(f"cluster {cluster}: rows read {c.rows_read} = applied {c.rows_applied}"
              f" + duplicate {c.rows_duplicate} + quarantined {c.rows_quarantined}"
              f" + late {c.rows_late}")
        by_state = c.partitions_by_state
        print("  partitions by state: "
              + (", ".join(f"{k} {v}" for k, v in sorted(by_state.items())) or "none"))
        offline = c.offline_partitions()
        total_offline = by_state.get("OfflinePartition", 0)
        listed = ", ".join(f"{t}-{p}" for t, p in offline)
        more = " ..." if total_offline > len(offline) else ""
        print(f"  offline partitions at the end: {total_offline}"
              + (f" ({listed}{more})" if offline else ""))
        print_rollup(rollups.get(cluster, Rollup()))
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(c.findings_by_kind.items()))
        print(f"  findings by kind: {kinds or 'none'}")
        f = (facts or {}).get(cluster, SeqFacts())
        print(f"  seqs read: {f.seq_min}-{f.seq_max}" if f.seq_min is not None
              else "  seqs read: none")
        for line in continuity_lines(f):
            print(line)
    print(f"tables written under {out_dir}/<table>/run_id={run_id}\n", flush=True)


def print_rollup(r: Rollup, top: int = 5) -> None:
    """Offline partition-seconds of the run's period, by cause broker and by topic."""
    def worst(by: dict[str, float], label: str) -> str:
        ranked = sorted(by.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return ", ".join(f"{label}{k} {v:,.1f} s" for k, v in ranked if v > 0) or "none"

    print(f"  offline partition-seconds in this run: {r.seconds:,.1f}"
          + (f" (by cause: {worst(r.by_cause_broker, 'broker ')}; "
             f"worst topics: {worst(r.by_topic, '')})" if r.seconds else ""))
