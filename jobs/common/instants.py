"""Instants as epoch microseconds, the unit of every `*_us` column and of the timeline.

One reading for the whole tool: an aware datetime is what it says; a naive one is local
time, as PySpark hands a `TimestampType` value to Python and as `datetime.timestamp` reads
it. Integer arithmetic throughout, so a time round-trips to the microsecond. (A scenario
file's times are user input and read differently: `jobs.whatif.scenario.micros` takes a
time without zone as UTC.)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def micros(t: datetime) -> int:
    """`t` as microseconds since the epoch (naive: local time)."""
    aware = t if t.tzinfo is not None else t.astimezone()
    return (aware - EPOCH) // MICROSECOND


def instant(us: int) -> datetime:
    """Microseconds since the epoch as an aware UTC datetime."""
    return EPOCH + us * MICROSECOND
