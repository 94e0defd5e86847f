"""The `--out` a checkpoint's runs write to, recorded in it and held to.

A checkpoint holds the state the nights before built; each night writes only the
partitions it changed, and the latest state (`jobs.store.latest_state`) is read back from
`--out` across the runs `run_summary.state_runs` names. A night on the same checkpoint with
another `--out` would leave that state spread over two directories: the one it writes
holds only the partitions it changed, and nothing says so. So a checkpoint records the
`--out` of its first run (`replay-settings.json` of the generation, `out.json` of a KRaft
checkpoint), and a run that gives another is refused before it writes anything (exit 2),
saying which `--out` to give. `--rebuild` replays the whole log, so its new generation may
record another one.
"""

from __future__ import annotations

import json
import os

from jobs.common.uris import scheme_of
from jobs.store.filesystem import path_exists, read_text, write_text

OUT_KEY = "out"


def normalized_out(out: str) -> str:
    """`out` as compared: a local path absolute, a URI without a trailing slash."""
    if scheme_of(out) == "":
        return os.path.abspath(os.path.expanduser(out))
    return out.rstrip("/")


def recorded_out(settings: str) -> str | None:
    """The `--out` a settings file records (None: no file, or one from before it did)."""
    if not path_exists(settings):
        return None
    value = json.loads(read_text(settings)).get(OUT_KEY)
    return None if value is None else str(value)


def out_mismatch(checkpoint: str, recorded: str | None, out: str) -> str | None:
    """Why `out` cannot be the checkpoint's `--out`, in one line, or None."""
    if recorded is None or recorded == normalized_out(out):
        return None
    return (f"--checkpoint {checkpoint} holds the state of runs written to --out {recorded}; "
            f"this run writes to --out {out}, where the latest state would hold only the "
            f"partitions it changes: give --out {recorded}, or replay the whole log into "
            "the new --out with a new --checkpoint (or --rebuild)")


def record_out(settings: str, out: str) -> None:
    """Add the `--out` to a settings file (made when missing; other keys kept)."""
    pinned = json.loads(read_text(settings)) if path_exists(settings) else {}
    if pinned.get(OUT_KEY) == normalized_out(out):
        return
    pinned[OUT_KEY] = normalized_out(out)
    write_text(settings, json.dumps(pinned) + "\n")
