"""Peak memory and CPU seconds of a process tree by role, read from `/proc` (the benches).

A Spark replay run locally is three kinds of process: the job's own Python (the driver),
the JVM it starts (in local mode the executors live in it too), and the Python workers
(PySpark's daemon and the workers it forks). Every `interval` seconds the sampler walks
the tree under the root and reads each process's `/proc/<pid>/stat`: its resident set
(the peak of each role's sum is kept) and its own user + system CPU time (the last value
seen per process is kept, so a process's CPU counts once however long it lived).

CPU a process spends after the last sample it was seen in is lost (at most `interval`
seconds of each process: the JVM and the workers live for the whole run, and idle at its
end). `ResourceUsage` gives the other view: the CPU of every descendant the tree reaped,
from `getrusage(RUSAGE_CHILDREN)` around the run; a process orphaned before it ended (the
JVM outliving a killed driver) is missing there, so the benches record both and take the
larger.
"""

from __future__ import annotations

import os
import resource
import threading
from dataclasses import dataclass, field
from pathlib import Path

ROLES = ("driver_python", "driver_jvm", "python_workers")
PROC = Path("/proc")
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PAGE_KB = (os.sysconf("SC_PAGE_SIZE") // 1024) if hasattr(os, "sysconf") else 4


@dataclass(frozen=True)
class ProcStat:
    """What the sampler reads of one process."""

    pid: int
    ppid: int
    rss_mb: float
    cpu_s: float  # its own user + system time, children excluded
    command: str
    started: int = 0  # clock ticks after boot: with the pid, names one process

    @property
    def key(self) -> tuple[int, int]:
        return self.pid, self.started


def parse_stat(text: str, command: str = "") -> ProcStat:
    """One `/proc/<pid>/stat` line (the command name may hold spaces and parentheses:
    the fields after it start at the last `)`)."""
    pid = int(text.split(" ", 1)[0])
    rest = text[text.rindex(")") + 2:].split()
    # Fields 3.. of proc(5): state ppid ... utime(14) stime(15) ... starttime(22) rss(24).
    ppid, utime, stime = int(rest[1]), int(rest[11]), int(rest[12])
    started, rss_pages = int(rest[19]), int(rest[21])
    return ProcStat(pid, ppid, rss_pages * PAGE_KB / 1024.0, (utime + stime) / TICKS, command,
                    started)


def read_proc(pid: int) -> ProcStat | None:
    """The process's stat and command line, or None when it is gone."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
        cmdline = (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ")
    except (OSError, ValueError):
        return None
    return parse_stat(stat, cmdline.decode(errors="replace").strip())


def all_procs() -> dict[int, ProcStat]:
    out = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            stat = read_proc(int(entry.name))
            if stat is not None:
                out[stat.pid] = stat
    return out


def tree_of(root: int, procs: dict[int, ProcStat]) -> list[ProcStat]:
    """The root and its descendants among `procs`."""
    children: dict[int, list[int]] = {}
    for p in procs.values():
        children.setdefault(p.ppid, []).append(p.pid)
    out, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        if pid in procs:
            out.append(procs[pid])
        frontier.extend(children.get(pid, ()))
    return out


def role_of(p: ProcStat, root: int) -> str | None:
    if p.pid == root:
        return "driver_python"
    program = p.command.split(" ", 1)[0]
    if program.endswith("java"):
        return "driver_jvm"
    if "python" in p.command or "pyspark" in p.command:
        return "python_workers"
    return None  # a shell or a helper the launcher ran


@dataclass
class TreeFigures:
    """Peaks (MB, each role's sum at one instant) and CPU seconds per role."""

    peak_mb: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys((*ROLES, "total"), 0.0))
    cpu_by_process: dict[tuple[int, int], tuple[str, float]] = field(default_factory=dict)
    max_workers: int = 0

    def add(self, tree: list[ProcStat], root: int) -> None:
        now = dict.fromkeys(ROLES, 0.0)
        workers = 0
        for p in tree:
            role = role_of(p, root)
            if role is None:
                continue
            now[role] += p.rss_mb
            workers += role == "python_workers"
            self.cpu_by_process[p.key] = (role, p.cpu_s)  # cumulative: the last is all
        now["total"] = sum(now.values())
        for k, v in now.items():
            self.peak_mb[k] = max(self.peak_mb[k], v)
        self.max_workers = max(self.max_workers, workers)

    def cpu_s(self) -> dict[str, float]:
        out = dict.fromkeys(ROLES, 0.0)
        for role, seconds in self.cpu_by_process.values():
            out[role] += seconds
        out["total"] = sum(out.values())
        return {k: round(v, 2) for k, v in out.items()}


class TreeSampler(threading.Thread):
    """Samples the tree under `root` every `interval` seconds until `stop`."""

    def __init__(self, root: int, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.root, self.interval = root, interval
        self.figures = TreeFigures()
        self._halt = threading.Event()

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def sample(self) -> None:
        self.figures.add(tree_of(self.root, all_procs()), self.root)

    def run(self) -> None:
        while not self._halt.is_set():
            self.sample()
            self._halt.wait(self.interval)


class ResourceUsage:
    """CPU seconds (user + system) of the children this process reaps between `start`
    and `seconds`, and of their descendants that were reaped in turn."""

    def __init__(self) -> None:
        self.before = self._now()

    @staticmethod
    def _now() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def seconds(self) -> float:
        return round(self._now() - self.before, 2)
