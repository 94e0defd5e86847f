"""Rows that honour the contract's types but cannot be true, quarantined with a reason.

* A time outside a sane range: before `ts_min` (default 2011-01-01, before the first
  Apache Kafka release) or more than `ts_max_ahead` after the run started (default a day).
  One row dated 9999-12-31 would otherwise keep a window open for eight thousand years.
* Two different events at one `(cluster, seq)` (`jobs.engine.log_checks`): the replay cannot
  tell which one the controller handled, so neither is applied.

Time running backwards against seq is not quarantined (the seq decides the order, and
either row may be the wrong one): it is counted in `run_summary` and raised by the audit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from jobs.common.config import parse_duration
from jobs.common.instants import micros
from jobs.engine.log_checks import SeqFacts
from jobs.engine.sql_text import col, in_list, quote, when

CONFLICT = "conflicting events at one seq"


@dataclass(frozen=True)
class Plausibility:
    """The rules of one run (times as microseconds since the epoch, UTC)."""

    ts_min_us: int | None = None
    ts_max_us: int | None = None
    ts_backwards_tolerance_us: int = 300_000_000
    conflicts: tuple[tuple[str, int], ...] = ()  # (cluster, seq) quarantined as conflicting

    def with_conflicts(self, facts: Mapping[str, SeqFacts]) -> Plausibility:
        found = tuple((c, s) for c, f in sorted(facts.items()) for s in f.conflicting)
        return replace(self, conflicts=found)


def rules_from_config(cfg: Mapping[str, Any], started_at: datetime) -> Plausibility:
    """The rules of `[replay] ts_min`, `ts_max_ahead`, `ts_backwards_tolerance`."""
    floor = datetime.fromisoformat(str(cfg["ts_min"]).replace("Z", "+00:00"))
    floor = floor.replace(tzinfo=UTC) if floor.tzinfo is None else floor
    ahead = timedelta(seconds=parse_duration(cfg["ts_max_ahead"]))
    tolerance = parse_duration(cfg["ts_backwards_tolerance"])
    return Plausibility(micros(floor), micros(started_at + ahead),
                        int(tolerance * 1_000_000))


def _iso(us: int) -> str:
    return datetime.fromtimestamp(us / 1_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def plausibility_problems(rules: Plausibility) -> list[str]:
    """The reasons of `rules` as Spark SQL `CASE WHEN` texts (over a row whose `cluster`
    is filled), joined after the contract's by `jobs.engine.keying.reason_column`."""
    ts = f"unix_micros({col('ts')})"
    checks = []
    if rules.ts_min_us is not None:
        checks.append(when(f"{ts} < {rules.ts_min_us}",
                           f"implausible ts: before {_iso(rules.ts_min_us)}"))
    if rules.ts_max_us is not None:
        checks.append(when(f"{ts} > {rules.ts_max_us}", f"implausible ts: after "
                           f"{_iso(rules.ts_max_us)} (ts_max_ahead past the run's start)"))
    if rules.conflicts:
        keys = sorted({f"{c}\x00{s}" for c, s in rules.conflicts})
        key = f"concat_ws({quote(chr(0))}, {col('cluster')}, CAST({col('seq')} AS STRING))"
        checks.append(when(in_list(key, keys), CONFLICT))
    return checks
