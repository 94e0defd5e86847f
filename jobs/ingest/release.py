"""The Kafka release line a controller log comes from, as `jobs.ingest` records it with its
output, and the release a replay or a comparison takes from it.

The ingest dates each file by its line formats (`logparse/version.py`) and writes the ranges
beside the events it made, in `events/_kafka_release.json` (a leading `_`: Spark's and the
replay's Parquet listings skip it):

    {"kafka_version": "2.4-2.5", "files": {"broker-1/controller.log": "2.4-2.5", ...}}

`kafka_version` is the range every file fits (null when no file carries a marker, or when
the files point at different releases: a rolling upgrade, or logs of two clusters).

`choose_release` is the one rule for `jobs.replay` and `jobs.compare`: `--kafka-version`
when given, else the detected range, else the fallback (the config file's `[kafka]
kafka_version`, or 3.7). A range that spans several profiles takes its newest line: the
formats prove only that the log is at least that old. Files that point at two releases are
said so, and the fallback is taken. Pure, but for `read_record` (a local or pyarrow-readable
file system).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import NamedTuple

from jobs.ingest.logparse.version import VersionRange, parse_range
from statemachine.profiles import parse_version, profile_for, supported_lines

RELEASE_FILE = "_kafka_release.json"


class Detected(NamedTuple):
    """What the ingest found: the range of the whole log and of each file (null: none)."""

    total: str | None
    files: Mapping[str, str | None]


class ReleaseChoice(NamedTuple):
    version: str  # the release line replayed, e.g. "2.5" (`ReplayConfig.kafka_version`)
    reason: str  # where it came from, one line


def record_text(total: str | None, files: Mapping[str, str | None]) -> str:
    return json.dumps({"kafka_version": total, "files": dict(sorted(files.items()))},
                      sort_keys=True) + "\n"


def parse_record(text: str) -> Detected | None:
    """The record's content; None when it is not one (a hand-edited or foreign file)."""
    try:
        doc = json.loads(text)
        total, files = doc.get("kafka_version"), doc.get("files", {})
    except (ValueError, AttributeError):
        return None
    if not (total is None or isinstance(total, str)) or not isinstance(files, dict):
        return None
    return Detected(total, {str(k): v if isinstance(v, str) else None
                            for k, v in files.items()})


def read_record(events_dir: str) -> Detected | None:
    """The ingest's record under `events_dir`, None when there is none (an event log the
    ingest did not write) or pyarrow cannot open the file system."""
    from pyarrow import fs as pafs

    from jobs.store.filesystem import arrow_filesystem

    resolved = arrow_filesystem(events_dir.rstrip("/"))
    if resolved is None:
        return None
    filesystem, root = resolved
    path = f"{root.rstrip('/')}/{RELEASE_FILE}"
    try:
        if filesystem.get_file_info(path).type != pafs.FileType.File:
            return None
        with filesystem.open_input_stream(path) as stream:
            return parse_record(stream.read().decode("utf-8", errors="replace"))
    except OSError:
        return None


def _profiles_spanned(found: VersionRange) -> list[str]:
    low, high = parse_version(found.low), parse_version(found.high)
    return list(dict.fromkeys(profile_for(v).name for v in supported_lines()
                              if low <= parse_version(v) <= high))


def _releases_of(files: Mapping[str, str | None]) -> dict[str, list[str]]:
    """Files by the range they were dated to (files without a marker left out)."""
    by_range: dict[str, list[str]] = {}
    for name, found in sorted(files.items()):
        if found:
            by_range.setdefault(found, []).append(name)
    return by_range


def choose_release(flag: str | None, detected: Detected | None, fallback: str,
                   fallback_reason: str) -> ReleaseChoice:
    """The release line to replay (ValueError when `flag` or `fallback` is malformed or
    unsupported; an unreadable detected range is ignored and said)."""
    if flag is not None:
        profile_for(flag)
        return ReleaseChoice(flag.strip(), f"--kafka-version {flag.strip()}")
    profile_for(fallback)
    if detected is None:
        return ReleaseChoice(fallback, f"{fallback_reason} (no release detected)")
    if detected.total:
        try:
            found = parse_range(detected.total)
        except ValueError:
            return ReleaseChoice(fallback, f"{fallback_reason} (unreadable detected release "
                                           f"{detected.total!r})")
        names = _profiles_spanned(found)
        spans = "" if len(names) == 1 else f", spanning profiles {', '.join(names)}"
        return ReleaseChoice(found.high, f"detected by jobs.ingest from the log's formats: "
                                         f"{detected.total}{spans}")
    by_range = _releases_of(detected.files)
    if len(by_range) > 1:
        listed = "; ".join(f"{r}: {', '.join(names[:3])}" + (" ..." if len(names) > 3 else "")
                           for r, names in sorted(by_range.items()))
        return ReleaseChoice(fallback, f"{fallback_reason}: the log's files point at "
                                       f"{len(by_range)} releases ({listed}); pass "
                                       "--kafka-version to choose")
    return ReleaseChoice(fallback, f"{fallback_reason} (no release detected)")
