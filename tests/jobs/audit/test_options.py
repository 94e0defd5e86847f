"""The audit's pure parts: settings, verdict, the docs' severity table."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from jobs.audit.checks import CHECKS
from jobs.audit.options import options_from_config, parse_duration, parse_timestamp
from jobs.audit.run import CheckCount, format_verdict, verdict_of

DOC = Path(__file__).resolve().parents[3] / "docs" / "audit.md"


def test_durations_and_instants() -> None:
    assert [parse_duration(t) for t in ("90", "90s", "30m", "1h", "2d", "1.5h")] == [
        90.0, 90.0, 1800.0, 3600.0, 172800.0, 5400.0]
    with pytest.raises(ValueError):
        parse_duration("an hour")
    instant = datetime(2026, 11, 20, 1, 0, tzinfo=UTC)
    assert parse_timestamp("2026-11-20T01:00:00Z") == instant
    assert parse_timestamp("2026-11-20 01:00:00") == instant
    assert parse_timestamp("2026-11-20T02:00:00+01:00") == instant


def test_config_file_then_flags(tmp_path: Path) -> None:
    config = tmp_path / "replay.toml"
    config.write_text('[kafka]\nmin_insync_replicas = 2\n'
                      'leader_imbalance_per_broker_percentage = 25\n'
                      '[topics."orders"]\nmin_insync_replicas = 3\n'
                      '[audit]\nmax_reassignment_age = "2h"\nmax_failovers = 5\n')
    options = options_from_config(str(config), max_failovers=1, max_restarts=None)
    assert (options.min_isr_of("orders"), options.min_isr_of("other")) == (3, 2)
    assert options.leader_imbalance_percentage == 25.0
    assert options.max_reassignment_age == 7200.0 and options.max_deletion_age == 3600.0
    assert (options.max_failovers, options.max_restarts) == (1, 3)


def test_verdict() -> None:
    counts = [CheckCount("critical", "unavailable_partition", 2),
              CheckCount("critical", "under_min_isr_partition", 3),
              CheckCount("warning", "at_min_isr_partition", 4)]
    assert verdict_of(counts, "critical") == ("FAIL", 1)
    assert verdict_of(counts[2:], "critical") == ("PASS", 0)
    assert verdict_of(counts[2:], "warning") == ("FAIL", 1)
    assert verdict_of(counts, "never") == ("PASS", 0)
    assert format_verdict("FAIL", counts) == (
        "audit verdict: FAIL (critical: unavailable_partition 2, under_min_isr_partition 3; "
        "warning: at_min_isr_partition 4)")
    assert format_verdict("PASS", []) == "audit verdict: PASS (nothing found)"
    # A PASS with a warning prints the report badge's word; the exit code stays 0.
    assert format_verdict("PASS", counts[2:]) == \
        "audit verdict: WARN (warning: at_min_isr_partition 4)"
    assert format_verdict("FAIL", counts[2:]).startswith("audit verdict: FAIL (")


def test_docs_list_every_check_with_its_severity() -> None:
    rows = re.findall(r"^\| `(\w+)` \| (critical|warning) \|", DOC.read_text(), re.MULTILINE)
    assert dict(rows) == CHECKS
