"""The what-if's tables (`jobs.whatif`): the ranking of variants and the partitions whose
final state differs from the baseline's."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pyarrow.compute as pc
import pyarrow.dataset as ds

from jobs.report.tables import first_rows, grouped_count, open_table, read, scanner

IMPACT_COLUMNS = [
    "cluster", "variant", "rank", "partitions_offline_at_end", "max_partitions_offline_at_once",
    "offline_partition_seconds", "under_min_isr_partition_seconds", "unclean_elections",
    "topics_losing_only_isr", "offline_partition_seconds_vs_baseline",
    "unclean_elections_vs_baseline", "max_partitions_offline_at_once_vs_baseline",
    "partitions_offline_at_end_vs_baseline",
]
DIFF_COLUMNS = ["cluster", "variant", "topic", "partition", "field", "baseline", "value"]


class Variant(NamedTuple):
    cluster: str
    name: str
    rank: int | None
    offline_seconds: float
    baseline_offline_seconds: float
    unclean_elections: int
    baseline_unclean_elections: int
    row: dict[str, Any]


class WhatIf(NamedTuple):
    run_id: str
    variants: list[Variant]
    diff_rows: int
    diff_by_variant: dict[str, int]
    first_diffs: list[dict[str, Any]]


def _variant(row: dict[str, Any]) -> Variant:
    # The baseline's value is the variant's value less its difference to the baseline.
    seconds = float(row.get("offline_partition_seconds") or 0.0)
    unclean = int(row.get("unclean_elections") or 0)
    return Variant(
        str(row["cluster"]), str(row["variant"]), row.get("rank"), seconds,
        seconds - float(row.get("offline_partition_seconds_vs_baseline") or 0.0),
        unclean, unclean - int(row.get("unclean_elections_vs_baseline") or 0), row,
    )


def whatif(whatif_dir: Path, run_id: str, limit: int) -> WhatIf:
    impact = read(open_table(whatif_dir, "whatif_impact"), run_id, IMPACT_COLUMNS)
    rows = sorted(impact.to_pylist(), key=lambda r: (
        str(r["cluster"]), r.get("rank") is None, r.get("rank") or 0, str(r["variant"])))
    variants = [_variant(r) for r in rows]
    diff = open_table(whatif_dir, "whatif_partition_diff")
    counts = grouped_count(scanner(diff, run_id, ["variant"]), ["variant"]).to_pylist()
    by_variant = {str(r["variant"]): int(r["rows"]) for r in counts}
    return WhatIf(run_id, variants, sum(by_variant.values()), dict(sorted(by_variant.items())),
                  _first_diffs(diff, run_id, [v.name for v in variants], limit))


def _first_diffs(
    diff: ds.Dataset, run_id: str, ranked: list[str], limit: int
) -> list[dict[str, Any]]:
    """The first `limit` differing fields, variant by variant in rank order."""
    found: list[dict[str, Any]] = []
    for name in dict.fromkeys(ranked):
        if len(found) >= limit:
            break
        scan = scanner(diff, run_id, DIFF_COLUMNS, pc.field("variant") == name)
        rows = first_rows(scan, ["cluster", "topic", "partition", "field"], limit - len(found))
        found.extend(rows.to_pylist())
    return found
