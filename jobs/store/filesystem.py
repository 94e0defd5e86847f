"""Names that become paths, and one way of opening a path the user gives.

A run id becomes a directory (`<table>/run_id=<id>/`, `<checkpoint>/runs/<id>.json`), so it
is checked before anything starts: a `/` would nest directories and `..` would climb out of
`--out` (and a cleanup of that run's partition would then delete someone else's files).

Paths the user gives are Hadoop paths, exactly as Spark reads them: a plain path is taken
literally (a space or a `%` is part of the name, never decoded), `file:` names the local file
system, and any other scheme (`hdfs://`, `s3a://`, ...) is Hadoop's. pyarrow is opened on the
same file system with the same literal path, so the schema check and Spark always see the
same files.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
import uuid
from urllib.parse import quote, urlsplit

from pyarrow import fs as pafs

from jobs.common.uris import scheme_of

# A leading `.` or `_` would make Spark and pyarrow skip the run's partition as hidden.
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
RUN_ID_RULE = ("a run id is 1 to 128 characters of letters, digits, '.', '_' and '-', "
               "starting with a letter or digit")


def run_id_problem(run_id: str) -> str | None:
    """Why `run_id` cannot name a directory, or None when it can."""
    if RUN_ID_PATTERN.fullmatch(run_id):
        return None
    return f"--run-id {run_id!r} is not allowed: {RUN_ID_RULE}"




def arrow_filesystem(path: str) -> tuple[pafs.FileSystem, str] | None:
    """(pyarrow file system, path inside it) for a Hadoop path, or None when pyarrow has no
    client for its scheme (the caller then asks Spark)."""
    scheme = scheme_of(path)
    if scheme in ("", "file"):
        local = path
        if scheme == "file":
            local = urlsplit(path).path if path.startswith("file://") else path[len("file:"):]
        return pafs.LocalFileSystem(), os.path.abspath(local)
    # pyarrow parses a URI (percent-decoding it); Hadoop takes the string literally. Quoting
    # the path part makes pyarrow decode it back to exactly the literal name.
    parts = urlsplit(path)
    uri = f"{parts.scheme}://{parts.netloc}{quote(parts.path)}"
    try:
        filesystem, inner = pafs.FileSystem.from_uri(uri)
    except (ValueError, OSError, NotImplementedError):  # ArrowInvalid is a ValueError
        return None
    return filesystem, inner


SCRATCH_DIR = "_scratch"  # hidden from every table reader (a leading `_`)


def scratch_path(out: str, prefix: str) -> str:
    """A fresh directory name for a command's temporary state (a full replay's checkpoint,
    a what-if's): under `--out`, so a run writes nowhere else, and on the same file system
    as the tables, so a cluster's executors reach it too."""
    return f"{out.rstrip('/')}/{SCRATCH_DIR}/{prefix}{uuid.uuid4().hex[:12]}"


def remove_local_scratch(path: str, settle: bool = False) -> bool:
    """Remove a scratch directory on the local file system (and `_scratch/` once empty);
    False when `path` is not local (the caller deletes it through Hadoop). `settle`: a
    query was stopped mid-run, look again after a moment."""
    opened = arrow_filesystem(path) if scheme_of(path) in ("", "file") else None
    if opened is None:
        return False
    local = opened[1]
    # A task cancelled by a signal may still write a state file or two after its query
    # stopped (cancellation is asynchronous): look again after a moment.
    for pause in (0.0, 0.5, 1.5) if settle else (0.0,):
        time.sleep(pause)
        shutil.rmtree(local, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(local))  # only when no other run's scratch is there
        if pause and not os.path.exists(local):
            break
    return True
