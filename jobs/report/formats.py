"""How each kind of figure is printed on the page: one helper per kind, so every figure of
a kind carries the same decimals wherever it appears (tables, notes, causes, cards).

Seconds and partition-seconds: one decimal. Counts: integers with thousands separators.
Differences to a baseline carry their sign. A missing value prints as an empty cell.
"""

from __future__ import annotations

from typing import Any


def seconds(value: Any) -> str:
    """"1,234.5" (seconds or partition-seconds)."""
    return "" if value is None else f"{float(value):,.1f}"


def signed_seconds(value: Any) -> str:
    """"+12.0", "-3.5", "0.0": a difference in seconds."""
    if value is None:
        return ""
    number = float(value)
    return f"{number:+,.1f}" if round(number, 1) else "0.0"


def count(value: Any) -> str:
    """"1,234" (partitions, windows, events, requests)."""
    return "" if value is None else f"{int(value):,}"


def signed_count(value: Any) -> str:
    """"+3", "-1", "0": a difference in a count."""
    if value is None:
        return ""
    number = int(value)
    return f"{number:+,}" if number else "0"


def exact(value: Any) -> str:
    """Seconds to the millisecond, for data-* attributes (read by tools, not people)."""
    return f"{float(value):.3f}"
