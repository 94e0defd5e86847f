"""The one file-system layer of the jobs: every file of `--out` and `--checkpoint` that the
jobs themselves read or write (tables, staged files, markers, the history, the ledger) goes
through pyarrow's file systems, on the driver and in the Python workers alike. (Spark's own
readers and writers, and its streaming checkpoint, use Hadoop's, as Spark does.)

pyarrow is the layer both sides can use: the workers that fold the groups write the tables'
files themselves, with no JVM at hand, and the driver commits them with the same client.
It opens local disks, `hdfs://` (libhdfs: `ARROW_LIBHDFS_DIR`, and `CLASSPATH` from
`hadoop classpath --glob`), `s3://` (`s3a://` and `s3n://` are the same buckets), `gs://` and
`abfs://`; a path of any other scheme is refused before the run starts
(`unsupported_path_problem`).

Paths the user gives are taken as Spark takes them: a plain path literally (a space or a `%`
is part of the name, never decoded), `file:` names the local file system. pyarrow is opened
on the same file system with the same literal path, so the jobs and Spark always see the
same files.

A run id becomes a directory (`<table>/run_id=<id>/`, `<checkpoint>/runs/<id>.json`), so it
is checked before anything starts: a `/` would nest directories and `..` would climb out of
`--out` (and a cleanup of that run's partition would then delete someone else's files).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from urllib.parse import quote, urlsplit

from pyarrow import fs as pafs

from jobs.common.uris import scheme_of
from jobs.store.layout import OutLayout

# A leading `.` or `_` would make Spark and pyarrow skip the run's partition as hidden.
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
RUN_ID_RULE = ("a run id is 1 to 128 characters of letters, digits, '.', '_' and '-', "
               "starting with a letter or digit")


def run_id_problem(run_id: str) -> str | None:
    """Why `run_id` cannot name a directory, or None when it can."""
    if RUN_ID_PATTERN.fullmatch(run_id):
        return None
    return f"--run-id {run_id!r} is not allowed: {RUN_ID_RULE}"


# Hadoop's names for buckets pyarrow reaches as `s3://`.
S3_ALIASES = ("s3a", "s3n")


def arrow_filesystem(path: str) -> tuple[pafs.FileSystem, str] | None:
    """(pyarrow file system, path inside it) for a path as Spark takes it, or None when
    pyarrow has no client for its scheme."""
    scheme = scheme_of(path)
    if scheme in ("", "file"):
        local = path
        if scheme == "file":
            local = urlsplit(path).path if path.startswith("file://") else path[len("file:"):]
        return pafs.LocalFileSystem(), os.path.abspath(local)
    # pyarrow parses a URI (percent-decoding it); Hadoop takes the string literally. Quoting
    # the path part makes pyarrow decode it back to exactly the literal name.
    parts = urlsplit(path)
    arrow_scheme = "s3" if parts.scheme.lower() in S3_ALIASES else parts.scheme
    uri = f"{arrow_scheme}://{parts.netloc}{quote(parts.path)}"
    try:
        filesystem, inner = pafs.FileSystem.from_uri(uri)
    except (ValueError, OSError, NotImplementedError):  # ArrowInvalid is a ValueError
        return None
    return filesystem, inner


def unsupported_path_problem(flag: str, path: str | None) -> str | None:
    """Why the jobs cannot write or read `path` (given as `flag`), or None."""
    if not path or arrow_filesystem(path) is not None:
        return None
    return (f"{flag} {path}: no pyarrow file system opens {scheme_of(path)}:// paths here "
            "(local, hdfs:// with libhdfs, s3:// or s3a://, gs://, abfs://); give such a path")


def opened(path: str) -> tuple[pafs.FileSystem, str]:
    """`arrow_filesystem(path)`, which the command's checks made sure exists."""
    found = arrow_filesystem(path)
    if found is None:
        raise OSError(unsupported_path_problem("path", path))
    return found


def path_exists(path: str) -> bool:
    filesystem, inner = opened(path)
    return bool(filesystem.get_file_info(inner).type != pafs.FileType.NotFound)


def is_dir(path: str) -> bool:
    filesystem, inner = opened(path)
    return bool(filesystem.get_file_info(inner).type == pafs.FileType.Directory)


def is_file(path: str) -> bool:
    filesystem, inner = opened(path)
    return bool(filesystem.get_file_info(inner).type == pafs.FileType.File)


def read_text(path: str) -> str:
    filesystem, inner = opened(path)
    with filesystem.open_input_stream(inner) as stream:
        return bytes(stream.read()).decode("utf-8")


def write_text(path: str, text: str) -> None:
    """Write (or replace) a small text file, its directory made as needed."""
    filesystem, inner = opened(path)
    filesystem.create_dir(inner.rsplit("/", 1)[0], recursive=True)
    with filesystem.open_output_stream(inner) as stream:
        stream.write(text.encode("utf-8"))


def create_new_text(path: str, text: str) -> bool:
    """Write `text` to a file that must not exist yet; False when it does. Atomic on a local
    file system (`O_EXCL`); elsewhere checked, then written (object stores have no
    exclusive create: the lease's read-back settles a race, `jobs.store.lease`)."""
    filesystem, inner = opened(path)
    if isinstance(filesystem, pafs.LocalFileSystem):
        os.makedirs(os.path.dirname(inner), exist_ok=True)
        try:
            fd = os.open(inner, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        return True
    if path_exists(path):
        return False
    write_text(path, text)
    return True


def delete_path(path: str) -> None:
    """Delete a file, or a directory and everything below it; nothing when absent."""
    filesystem, inner = opened(path)
    kind = filesystem.get_file_info(inner).type
    if kind == pafs.FileType.Directory:
        filesystem.delete_dir(inner)
    elif kind != pafs.FileType.NotFound:
        filesystem.delete_file(inner)


def rename_path(source: str, target: str) -> None:
    """Move a file or directory within one file system (the target must not exist)."""
    filesystem, inner = opened(source)
    _, inner_target = opened(target)
    if filesystem.get_file_info(inner_target).type != pafs.FileType.NotFound:
        raise OSError(f"could not rename {source} to {target}: the target exists")
    filesystem.create_dir(inner_target.rsplit("/", 1)[0], recursive=True)
    filesystem.move(inner, inner_target)


def list_names(path: str) -> list[str]:
    """The names of the entries of a directory (files and directories), sorted."""
    filesystem, inner = opened(path)
    return sorted(info.base_name for info in
                  filesystem.get_file_info(pafs.FileSelector(inner, allow_not_found=True)))


def scratch_path(out: str, prefix: str) -> str:
    """A fresh directory name for a command's temporary state (a full replay's checkpoint,
    a what-if's): under `--out`, so a run writes nowhere else, and on the same file system
    as the tables, so a cluster's executors reach it too."""
    return OutLayout(out).scratch(prefix)


def remove_local_scratch(path: str, settle: bool = False) -> bool:
    """Remove a scratch directory on the local file system (and `_scratch/` once empty);
    False when `path` is not local (the caller deletes it as any other path). `settle`: a
    query was stopped mid-run, look again after a moment."""
    found = arrow_filesystem(path) if scheme_of(path) in ("", "file") else None
    if found is None:
        return False
    local = found[1]
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
