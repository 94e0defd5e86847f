"""What a command and every process it starts cost, from the kernel's own accounts.

    python -m jobs.bench.proc_io RESULT.json -- COMMAND [ARG ...]

Runs COMMAND as a child of this process, which has made itself the child subreaper of its
descendants (`prctl(PR_SET_CHILD_SUBREAPER)`): a process whose parent exits first (the
Python workers of a Spark job, the JVM's own children) is reparented here instead of to
init, and every descendant is reaped here or by its parent. The kernel adds a reaped
process's CPU time (`getrusage(RUSAGE_CHILDREN)`) and its I/O counters (`/proc/self/io`:
`rchar`/`wchar` are bytes passed to read and write calls, page cache or not; `read_bytes`/
`write_bytes` what reached the storage layer) to its reaper's, so once all are reaped this
process's own figures are those of the whole tree. RESULT.json gets them, with the wall
time and COMMAND's exit code; this process exits with that code.

Nothing else runs in this process while it waits (the caller's samplers run elsewhere),
so the figures hold nothing but the tree's work.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PR_SET_CHILD_SUBREAPER = 36
# After COMMAND exits, how long its orphans may take to exit before they are left alone.
STRAGGLERS_SECONDS = 60.0


def io_counters() -> dict[str, int]:
    """This process's `/proc/self/io` (its own and its reaped descendants' I/O)."""
    counters: dict[str, int] = {}
    for line in Path("/proc/self/io").read_text().splitlines():
        name, _, value = line.partition(":")
        counters[name.strip()] = int(value)
    return counters


def become_subreaper() -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def reap_all(deadline: float) -> int:
    """Reap every descendant left (orphans reparented here); the number still running
    at `deadline`."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid == 0:
            if time.monotonic() > deadline:
                return len(children())
            time.sleep(0.1)


def children() -> list[int]:
    """The processes whose parent is this one."""
    me, found = os.getpid(), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            found.append(int(stat.parent.name))
    return found


def measure(command: list[str]) -> dict[str, Any]:
    subreaper = become_subreaper()
    io_before = io_counters()
    t0 = time.perf_counter()
    rc = subprocess.call(command)
    seconds = time.perf_counter() - t0
    stragglers = reap_all(time.monotonic() + STRAGGLERS_SECONDS)
    io_after = io_counters()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "rc": rc,
        "seconds": round(seconds, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),  # the largest single process
        "io": {k: io_after[k] - io_before.get(k, 0) for k in io_after},
        "subreaper": subreaper,
        "stragglers": stragglers,
    }


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3 or args[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    result = measure(args[2:])
    Path(args[0]).write_text(json.dumps(result, indent=2) + "\n")
    return int(result["rc"]) if result["rc"] >= 0 else 128 - int(result["rc"])


if __name__ == "__main__":
    sys.exit(main())
