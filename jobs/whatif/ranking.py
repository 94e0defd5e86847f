"""The printed ranking of a what-if run: per cluster, one line per variant by rank, then
what its edits did and how many of the log's events no longer apply to it (docs/whatif.md,
"The printed ranking")."""

from __future__ import annotations

from schemas.whatif import BASELINE


def _flags(r: dict[str, object]) -> str:
    if r["no_edit"]:
        return " [no edit: the baseline's log and config]"
    if r["same_as_baseline"]:
        return " [same rows as the baseline]"
    return ""


def _edit_lines(r: dict[str, object]) -> list[str]:
    """What the variant's edits did, and the log events its history makes impossible."""
    if r["variant"] == BASELINE:
        return []
    lines = [f"edits: {r['events_dropped']} events dropped, {r['events_injected']} injected, "
             f"{r['events_edited']} edited, {r['partitions_edited']} partitions with "
             "edited events"]
    if r.get("buckets_replayed") is not None:
        lines.append(f"replayed: {r['buckets_replayed']:,} buckets, {r['events_shared']:,} "
                     "events taken from the shared fold")
    if r["events_no_longer_applying"]:
        lines.append(f"{r['events_no_longer_applying']} events of the log no longer apply")
    return lines


def _only_isr(r: dict[str, object]) -> str:
    """The clause on topics losing their only in-sync replica; none on a KRaft log, whose
    controller publishes no UpdateMetadata to read it from."""
    n = r.get("topics_losing_only_isr")
    return "" if n is None else f"{n} topics lose their only in-sync replica, "


def print_ranking(rows: list[dict[str, object]]) -> None:
    clusters = sorted({str(r["cluster"]) for r in rows})
    for cluster in clusters:
        print(f"\n== what-if ranking, cluster {cluster} ==")
        for r in sorted((r for r in rows if r["cluster"] == cluster),
                        key=lambda r: int(str(r["rank"]))):
            vs = float(str(r["offline_partition_seconds_vs_baseline"] or 0.0))
            print(f"{r['rank']}. {r['variant']}: "
                  f"{float(str(r['offline_partition_seconds'])):,.0f} offline "
                  f"partition-seconds ({vs:+,.0f} vs baseline), up to "
                  f"{r['max_partitions_offline_at_once']} partitions offline at once, "
                  f"{r['partitions_offline_at_end']} still offline at the end, "
                  f"{_only_isr(r)}"
                  f"{r['unclean_elections']} unclean elections{_flags(r)}")
            for line in _edit_lines(r):
                print(f"   {line}")
    print(flush=True)
