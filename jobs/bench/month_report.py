"""BENCHMARKS.md's section of `make bench-month` (`jobs.bench.month`): per preset, the last
night against the second, and a few nights in between."""

from __future__ import annotations

from typing import Any

Run = dict[str, Any]


def _mb(n: int | None) -> str:
    return "–" if n is None else f"{n / 1e6:,.1f}"


def _ratio(r: float | None) -> str:
    return "–" if r is None else f"{r:.2f}"


def shown_nights(count: int) -> list[int]:
    """Nights 1, 2, every fifth, and the last (1-based)."""
    return sorted({1, 2, *range(5, count + 1, 5), count} & set(range(1, count + 1)))


def month_table(month: dict[str, Run]) -> list[str]:
    if not month:
        return []
    lines = ["## A month of nights (`make bench-month`)", "",
             "The preset's log cut into nights by seq, replayed night after night on one "
             "checkpoint, each night its own process tree (wall, CPU and bytes from the "
             "kernel's accounts of the whole tree; files: bytes of the files the night "
             "created or rewrote under `--checkpoint` and `--out`).", ""]
    for preset in sorted(month):
        r = month[preset]
        ratios = r.get("last_over_second") or {}
        equal = r.get("state_tables_equal_full_replay")
        lines += [
            f"**{preset}** ({r['nights']} nights, measured {r.get('measured_at', '–')} UTC; "
            f"load average start / end {r['load_avg_1m']['start']} / "
            f"{r['load_avg_1m']['end']}): last night / second night: wall "
            f"{_ratio(ratios.get('seconds'))}, CPU {_ratio(ratios.get('cpu_s'))}, bytes read "
            f"{_ratio(ratios.get('rchar'))}, written {_ratio(ratios.get('wchar'))}, files "
            f"written {_ratio(ratios.get('files_written'))}; state after the last night = a "
            f"full replay's: {'–' if equal is None else all(equal.values())}.", "",
            "| night | rows | wall (s) | CPU (s) | read (MB) | written (MB) "
            "| files written (MB) | state runs | load (1 min) |",
            "|---|---|---|---|---|---|---|---|---|"]
        nights = r["per_night"]
        for n in shown_nights(len(nights)):
            x = nights[n - 1]
            lines.append(f"| {n} | {x['rows']:,} | {x['seconds']} | {x.get('cpu_s', '–')} | "
                         f"{_mb(x.get('rchar'))} | {_mb(x.get('wchar'))} | "
                         f"{_mb(x.get('files_written'))} | {x.get('state_runs', '–')} | "
                         f"{x['load_avg_1m']['end']} |")
        lines.append("")
    return lines
