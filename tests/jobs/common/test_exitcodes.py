"""The exit codes every command shares (`jobs.common.exitcodes.run_command`), without Spark."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from jobs.common.exitcodes import (
    BAD_INPUT,
    EXIT_CODES_HELP,
    INTERNAL_ERROR,
    jvm_crash_report,
    root_cause,
    run_command,
)

EXECUTOR_FAILURE = """An error occurred while calling o123.awaitTermination.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0
== Physical Plan ==
*(1) Project [cluster#1, bucket#2]
org.apache.spark.api.python.PythonException: Traceback (most recent call last):
  File "/opt/spark/python/pyspark/worker.py", line 1, in main
ModuleNotFoundError: No module named 'pyarrow'
"""
JVM_FAILURE = """An error occurred while calling o77.collectToPython.
: java.lang.StackOverflowError
\tat org.apache.spark.sql.catalyst.expressions.Or.eval(predicates.scala:900)
"""


def test_the_cause_of_an_executor_failure_is_its_python_error() -> None:
    assert root_cause(RuntimeError(EXECUTOR_FAILURE)) == \
        "ModuleNotFoundError: No module named 'pyarrow'"


def test_the_cause_of_a_jvm_error_is_named() -> None:
    assert root_cause(RuntimeError(JVM_FAILURE)) == "java.lang.StackOverflowError"


def _lost_jvm() -> BaseException:
    """What py4j raises when the JVM died under a call: its socket refused the next one."""
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as refused:
            raise RuntimeError("An error occurred while trying to connect to the Java "
                               "server (127.0.0.1:25333)") from refused
    except RuntimeError as exc:
        return exc


def test_a_dead_jvm_is_named_not_the_refused_socket() -> None:
    cause = root_cause(_lost_jvm())
    assert cause.startswith("the Spark JVM died under the job")
    assert "ConnectionRefusedError" not in cause


def test_a_jvm_crash_report_names_the_fatal_error(tmp_path: Path) -> None:
    report = tmp_path / "hs_err_pid4242.log"
    report.write_text("#\n# There is insufficient memory for the Java Runtime Environment "
                      "to continue.\n# Native memory allocation (mmap) failed\n")
    found = jvm_crash_report(report.stat().st_mtime - 1, tmp_path)
    assert found is not None
    assert found.startswith("There is insufficient memory for the Java Runtime Environment")
    assert str(report) in found
    # A report older than the run is an earlier crash's, not this one's.
    assert jvm_crash_report(report.stat().st_mtime + 60, tmp_path) is None


def test_an_uncaught_exception_is_one_line_and_exit_3(tmp_path: Path, capsys: Any) -> None:
    def crash(argv: list[str]) -> int:
        raise RuntimeError(EXECUTOR_FAILURE)

    out = tmp_path / "out"
    assert run_command("replay", crash, ["--out", str(out)]) == INTERNAL_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("[replay] INTERNAL ERROR: ModuleNotFoundError")
    assert "Physical Plan" not in err[0]
    [trace] = (out / "_errors").iterdir()
    assert "Physical Plan" in trace.read_text() and str(trace) in err[0]


def test_a_command_own_codes_and_argparse_exits_pass_through(capsys: Any) -> None:
    assert run_command("audit", lambda argv: BAD_INPUT, []) == BAD_INPUT

    def usage(argv: list[str]) -> int:
        raise SystemExit(2)

    with pytest.raises(SystemExit):
        run_command("audit", usage, [])


def test_sigterm_unwinds_the_command_and_runs_its_cleanup(tmp_path: Path, capsys: Any) -> None:
    scratch = tmp_path / "_scratch"

    def long_run(argv: list[str]) -> int:
        scratch.mkdir()
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            return 0  # not reached: the handler raises first
        finally:
            scratch.rmdir()

    assert run_command("whatif", long_run, []) == 128 + signal.SIGTERM
    assert not scratch.exists()
    assert "stopped by SIGTERM" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL or sys.platform == "win32"


def test_the_help_epilog_lists_every_code() -> None:
    for code in ("0", "1", "2", "3", "75"):
        assert f"\n  {code} " in EXIT_CODES_HELP
