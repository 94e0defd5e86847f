"""Which release profile a comparison holds the replay to: `--kafka-version` when given,
else the release lines the ingest detected from the log's formats (`ingest_summary`'s total
`kafka_version`), else the default 3.7. A detected range that spans several profiles takes
the newest of them: the formats prove only that the log is at least that old. Pure."""

from __future__ import annotations

from typing import NamedTuple

from jobs.ingest.logparse.version import parse_range
from statemachine.profiles import DEFAULT_KAFKA_VERSION, parse_version, profile_for, supported_lines


class ProfileChoice(NamedTuple):
    profile: str  # the modelled profile's name, e.g. "2.0"
    reason: str  # where it came from, for the summary


def choose_profile(flag: str | None, detected: str | None) -> ProfileChoice:
    """ValueError when `flag` is malformed or unsupported; a malformed `detected` is
    ignored (reported in the reason)."""
    if flag is not None:
        return ProfileChoice(profile_for(flag).name, f"--kafka-version {flag}")
    if detected:
        try:
            found = parse_range(detected)
        except ValueError:
            return ProfileChoice(profile_for(DEFAULT_KAFKA_VERSION).name,
                                 f"default (unreadable detected version {detected!r})")
        low, high = parse_version(found.low), parse_version(found.high)
        names = list(dict.fromkeys(profile_for(v).name for v in supported_lines()
                                   if low <= parse_version(v) <= high))
        spans = "" if len(names) == 1 else f", spanning profiles {', '.join(names)}"
        return ProfileChoice(names[-1], f"detected from the log formats: {detected}{spans}")
    return ProfileChoice(profile_for(DEFAULT_KAFKA_VERSION).name,
                         "default (no release detected, no --kafka-version)")
