"""The plan check's table (`jobs.whatif --from-state --plan`, `plan_check`): the verdict
and the ranked partitions each step hurts, with the advice."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from jobs.report.tables import ReportInputError, open_table, read
from schemas.plan_check import PLAN_CHECK, PLAN_CHECK_TABLE

COLUMNS = [f.name for f in PLAN_CHECK.fields]


class PlanCheckView(NamedTuple):
    run_id: str
    state_run_id: str | None
    mode: str | None
    offline: int  # partitions some step takes offline
    under_min_isr: int  # under-min-ISR rows
    steps: list[tuple[int, str, int, int]]  # (step, name, offline, under) in rank order
    rows: list[dict[str, Any]]  # the first `limit`, ranked


def plan_check_run(root: Path, run_id: str | None) -> str:
    """`run_id`, or the plan check run written last (the newest `run_id=` directory)."""
    table = root / PLAN_CHECK_TABLE
    runs = sorted((p for p in table.glob("run_id=*") if p.is_dir()),
                  key=lambda p: (p.stat().st_mtime, p.name)) if table.is_dir() else []
    names = [p.name.removeprefix("run_id=") for p in runs]
    if run_id is not None:
        if run_id not in names:
            raise ReportInputError(f"plan check run {run_id!r} is not in {table}")
        return run_id
    if not names:
        raise ReportInputError(f"missing table {PLAN_CHECK_TABLE!r}: no run under {table}")
    return names[-1]


def plan_check(root: Path, run_id: str, limit: int) -> PlanCheckView:
    rows = sorted(read(open_table(root, PLAN_CHECK_TABLE), run_id, COLUMNS).to_pylist(),
                  key=lambda r: r["rank"] or 0)
    steps: dict[int, list[Any]] = {}
    for r in rows:
        entry = steps.setdefault(r["step"], [r["step"], r["step_name"], 0, 0])
        entry[2 if r["finding"] == "offline" else 3] += 1
    first = rows[0] if rows else {}
    return PlanCheckView(
        run_id, first.get("state_run_id"), first.get("mode"),
        len({(r["topic"], r["partition"]) for r in rows if r["finding"] == "offline"}),
        sum(r["finding"] != "offline" for r in rows),
        [(int(s), str(n), int(o), int(u)) for s, n, o, u in steps.values()], rows[:limit])
