"""The benches' process-tree sampler: peaks and CPU seconds per role from /proc."""

from __future__ import annotations

import os
import subprocess
import sys

from jobs.bench.process_tree import (
    PAGE_KB,
    TICKS,
    ProcStat,
    ResourceUsage,
    TreeFigures,
    TreeSampler,
    parse_stat,
    role_of,
    tree_of,
)


def stat_line(pid: int, name: str, ppid: int, utime: int, stime: int, started: int,
              rss_pages: int) -> str:
    # proc(5): pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
    # cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime vsize rss
    return (f"{pid} ({name}) S {ppid} 1 1 0 -1 0 0 0 0 0 {utime} {stime} 7 7 20 0 1 0 "
            f"{started} 1000 {rss_pages} 0 0")


def test_a_stat_line_gives_own_cpu_rss_and_start_even_with_odd_names() -> None:
    p = parse_stat(stat_line(42, "python3 (x) y", 7, 3 * TICKS, TICKS, 999, 2560), "python3")
    assert (p.pid, p.ppid, p.started, p.command) == (42, 7, 999, "python3")
    assert p.cpu_s == 4.0  # children's times (cutime, cstime) are not its own
    assert p.rss_mb == 2560 * PAGE_KB / 1024.0


def proc(pid: int, ppid: int, cpu: float, rss: float, command: str,
         started: int = 1) -> ProcStat:
    return ProcStat(pid, ppid, rss, cpu, command, started)


def test_roles_follow_the_tree_under_the_root_only() -> None:
    procs = {p.pid: p for p in (
        proc(10, 1, 1.0, 100, "python -m jobs.replay"),
        proc(11, 10, 5.0, 900, "/usr/lib/jvm/bin/java -cp x"),
        proc(12, 11, 2.0, 50, "python -m pyspark.daemon"),
        proc(13, 12, 3.0, 60, "python -m pyspark.daemon"),
        proc(14, 11, 0.1, 2, "/bin/sh -c x"),
        proc(20, 1, 9.0, 999, "python unrelated"),
    )}
    tree = tree_of(10, procs)
    assert sorted(p.pid for p in tree) == [10, 11, 12, 13, 14]
    assert [role_of(p, 10) for p in sorted(tree, key=lambda p: p.pid)] == [
        "driver_python", "driver_jvm", "python_workers", "python_workers", None]


def test_cpu_counts_each_process_once_at_its_last_value_and_peaks_sum_per_instant() -> None:
    figures = TreeFigures()
    figures.add([proc(10, 1, 1.0, 100, "python"), proc(12, 10, 2.0, 50, "python w")], 10)
    figures.add([proc(10, 1, 1.5, 80, "python"), proc(12, 10, 4.0, 70, "python w"),
                 proc(13, 10, 1.0, 70, "python w")], 10)
    # pid 12 ends; a new process takes its pid later: counted apart (its start differs)
    figures.add([proc(10, 1, 2.0, 90, "python"), proc(12, 10, 0.5, 10, "python w", 5)], 10)
    cpu = figures.cpu_s()
    assert cpu == {"driver_python": 2.0, "driver_jvm": 0.0, "python_workers": 5.5,
                   "total": 7.5}
    assert figures.peak_mb["python_workers"] == 140 and figures.peak_mb["driver_python"] == 100
    assert figures.peak_mb["total"] == 220 and figures.max_workers == 2


def test_a_live_child_is_sampled_and_its_cpu_is_reaped() -> None:
    usage = ResourceUsage()
    child = subprocess.Popen([sys.executable, "-c",
                              "import time\nt=time.process_time()\n"
                              "while time.process_time()-t<0.3: pass\ntime.sleep(0.3)"])
    sampler = TreeSampler(child.pid, interval=0.05)
    sampler.start()
    child.wait()
    sampler.stop()
    cpu = sampler.figures.cpu_s()
    assert cpu["driver_python"] >= 0.2
    assert usage.seconds() >= cpu["driver_python"] - 0.05
    assert sampler.figures.peak_mb["driver_python"] > 1
    assert os.getpid() not in {p for p, _ in sampler.figures.cpu_by_process}
