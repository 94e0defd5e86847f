"""Failures a user can act on, turned into one line each (the job then exits with 2).

Both are checked before the replay starts, so that a mistake costs seconds, not a whole
replay: an `--out` that is a file or cannot be written, and output or checkpoint
directories inside the event directory (the event source reads it recursively, so the
job's own files would come back as input). An event file whose data pages are corrupt is
recognised after the fact (`jobs.common.exitcodes.read_failure`).
"""

from __future__ import annotations

from jobs.common.uris import scheme_of
from jobs.store.filesystem import (
    arrow_filesystem,
    delete_path,
    is_file,
    unsupported_path_problem,
    write_text,
)
from jobs.store.layout import OutLayout


def nested_problem(events: str, out: str, checkpoint: str | None) -> str | None:
    """`--out` or `--checkpoint` inside `--events` (local paths; other file systems are
    compared as written)."""
    def norm(path: str) -> str:
        if scheme_of(path) in ("", "file"):
            resolved = arrow_filesystem(path)  # a local path, as Hadoop reads it
            assert resolved is not None
            return resolved[1].rstrip("/") + "/"
        return path.rstrip("/") + "/"

    root = norm(events)
    for flag, path in (("--out", out), ("--checkpoint", checkpoint)):
        if path and norm(path).startswith(root):
            return (f"{flag} {path} is inside --events {events}: the job reads that "
                    "directory recursively, so its own files would be read back as events; "
                    "choose a directory outside it")
    return None


def out_problem(out: str, run_id: str) -> str | None:
    """Why the tables cannot be written under `out`, or None: pyarrow must open its file
    system, and it must be (or become) a directory in which a file can be created."""
    unsupported = unsupported_path_problem("--out", out)
    if unsupported is not None:
        return unsupported
    if is_file(out):
        return f"--out {out} is a file, not a directory; give a directory for the tables"
    probe = OutLayout(out).probe(run_id)
    try:
        write_text(probe, "")
        delete_path(probe)
    except OSError as exc:  # pyarrow's message names the cause
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"--out {out} cannot be written ({first[:200]}); check the path and its permissions"
    return None

