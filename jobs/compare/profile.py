"""Which release profile a comparison holds the replay to: `--kafka-version` when given,
else the release lines the ingest detected from the log's formats (`ingest_summary`'s total
`kafka_version`), else the default 3.7; the rule `jobs.replay` follows too
(`jobs.ingest.release.choose_release`). A detected range that spans several profiles takes
the newest of them: the formats prove only that the log is at least that old. Pure."""

from __future__ import annotations

from typing import NamedTuple

from jobs.ingest.release import Detected, choose_release
from statemachine.profiles import DEFAULT_KAFKA_VERSION, profile_for


class ProfileChoice(NamedTuple):
    profile: str  # the modelled profile's name, e.g. "2.0"
    reason: str  # where it came from, for the summary


def choose_profile(flag: str | None, detected: str | None) -> ProfileChoice:
    """ValueError when `flag` is malformed or unsupported; a malformed `detected` is
    ignored (reported in the reason)."""
    choice = choose_release(flag, Detected(detected, {}) if detected else None,
                            DEFAULT_KAFKA_VERSION, "default")
    reason = choice.reason
    if detected is None and flag is None:
        reason = "default (no release detected, no --kafka-version)"
    return ProfileChoice(profile_for(choice.version).name, reason)
