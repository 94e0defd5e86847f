"""The exit codes every command shares, and the wrapper that guarantees them.

A scheduler acts on the exit code alone, so each code means one thing for every command
(`python -m jobs.X`, `jobs/submit.py X`):

    0   no check reaches --fail-on (or the command has no checks and finished)
    1   a check reaches --fail-on: the cluster needs a look, the tool worked
    2   bad input or usage: a flag, a config file, an event file, a tables directory
    3   internal error: an uncaught exception, a Spark or executor failure; one line names
        the cause and the file holding the full trace
    75  the checkpoint is in use by another run: retry later (EX_TEMPFAIL of sysexits.h)

`run_command` wraps a command's `main`: whatever escapes it becomes code 3 with one line on
stderr (never a Spark plan or a Java stack), and SIGTERM / SIGINT unwind the command so its
`finally` blocks remove what it made outside its outputs (128 + the signal's number).
"""

from __future__ import annotations

import contextlib
import re
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

OK = 0
CHECK_FAILED = 1
BAD_INPUT = 2
INTERNAL_ERROR = 3
CHECKPOINT_BUSY = 75  # EX_TEMPFAIL

SIGINT_EXIT = 128 + signal.SIGINT  # 130
SIGTERM_EXIT = 128 + signal.SIGTERM  # 143

# Each code's line in a command's --help, in the order listed.
_CODE_LINES: dict[int, str] = {
    OK: "  0   finished; no check reaches --fail-on, where the command has checks",
    CHECK_FAILED: "  1   a check reaches --fail-on",
    BAD_INPUT: "  2   bad input or usage (one line on stderr says what)",
    INTERNAL_ERROR: "  3   internal error: uncaught exception or Spark/executor failure (one "
                    "line names the\n      cause and the file with the full trace)",
    CHECKPOINT_BUSY: "  75  checkpoint in use by another run: retry later",
    SIGINT_EXIT: "  130 stopped by SIGINT (Ctrl-C): what it made outside its outputs is removed",
    SIGTERM_EXIT: "  143 stopped by SIGTERM: the same; rerun the same command",
}
# What every command can exit with; a command adds 1 (it has --fail-on) or 75 (a checkpoint).
COMMON_CODES: tuple[int, ...] = (OK, BAD_INPUT, INTERNAL_ERROR, SIGINT_EXIT, SIGTERM_EXIT)


def exit_codes_help(*extra: int) -> str:
    """The epilog of a command's --help: the codes it can exit with (every command's, and
    `extra`: CHECK_FAILED for a command with --fail-on, CHECKPOINT_BUSY for one with a
    checkpoint), each meaning the same for every command."""
    codes = sorted({*COMMON_CODES, *extra})
    return "exit codes (each means the same for every command):\n" + "\n".join(
        _CODE_LINES[c] for c in codes)


# Every code, as the reference lists them (docs and the tests of the codes).
EXIT_CODES_HELP = exit_codes_help(CHECK_FAILED, CHECKPOINT_BUSY)

# What an executor's or the JVM's failure looks like inside a py4j / Spark message.
_PY_ERROR = re.compile(r"^\s*(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.+)$", re.MULTILINE)
# Spark's and Parquet's words for a data file it could not decode.
_UNREADABLE = re.compile(
    r"FAILED_READ_FILE|ParquetDecodingException|could not read page|is not a Parquet file"
    r"|Can not read value|CorruptedDataException|Error reading file|Encountered error while "
    r"reading file")
_FILE = re.compile(r"(?:reading file|in file|file)\s+((?:file|hdfs|s3a?|abfss?|gs):\S+?|/\S+?)"
                   r"(?=[.,;:]?(?:\s|$))")
_CAUSE = re.compile(r"Caused by: ([\w.$]+(?:Exception|Error)[^\n]*)")
_JAVA_ERROR = re.compile(r"(java\.lang\.\w+(?:Error|Exception))(?::\s*([^\n]*))?")


class BadInput(ValueError):  # noqa: N818 - what the user gave, not a failure of the tool
    """Bad input or usage, said in one line: the command exits with BAD_INPUT (2). Raised
    wherever the problem is found; the command skeleton (`jobs.common.command`) reports it."""


class Terminated(BaseException):
    """SIGTERM or SIGINT reached the command: unwind, run every `finally`, exit 128 + N."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


# py4j's view of a JVM that is gone: its socket refused or closed under a call.
_JVM_GONE = ("ConnectionRefusedError", "Py4JNetworkError", "Answer from Java side is empty",
             "Error while sending or receiving", "Connection reset by peer")
# What the JVM says as it dies (its own stdout / stderr, or the hs_err_pid<N>.log of a crash).
_JVM_FATAL = re.compile(r"(java\.lang\.OutOfMemoryError[^\n]*|Out of space in CodeCache[^\n]*"
                        r"|A fatal error has been detected by the Java Runtime Environment"
                        r"|There is insufficient memory for the Java Runtime Environment)")


def jvm_gone(exc: BaseException) -> bool:
    """Whether `exc` (or an exception it chains) is py4j losing the JVM, not a failure the
    JVM reported."""
    seen: BaseException | None = exc
    while seen is not None:
        if any(mark in f"{type(seen).__name__}: {seen}" for mark in _JVM_GONE):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def jvm_crash_report(since: float, where: Path | None = None) -> str | None:
    """The JVM's own fatal error, from the newest `hs_err_pid*.log` written in `where` (the
    working directory: where a crashing HotSpot JVM writes it) after `since`."""
    found = [p for p in (where or Path.cwd()).glob("hs_err_pid*.log")
             if p.stat().st_mtime >= since]
    if not found:
        return None
    newest = max(found, key=lambda p: p.stat().st_mtime)
    match = _JVM_FATAL.search(newest.read_text(errors="replace")[:20000])
    what = match.group(1).strip() if match else "a fatal error"
    return f"{what} (the JVM's report: {newest})"


def root_cause(exc: BaseException, started: float | None = None) -> str:
    """One line for the deepest cause a Spark failure carries: the executor's Python
    exception (`ModuleNotFoundError: No module named 'pyarrow'`) or the JVM's error
    (`java.lang.StackOverflowError`), else the exception's own first line. When py4j lost
    the JVM itself, that is what the line says (with the JVM's crash report when it left
    one): a `ConnectionRefusedError` names the symptom, not the cause."""
    if jvm_gone(exc):
        crash = jvm_crash_report(started) if started is not None else None
        return ("the Spark JVM died under the job: "
                + (crash or "its own last lines above name why (e.g. java.lang."
                   "OutOfMemoryError, Out of space in CodeCache)"))[:300]
    text = str(exc)
    java = _JAVA_ERROR.findall(text)
    fatal = [j for j in java if j[0].endswith("Error")]
    python = _PY_ERROR.findall(text)
    if fatal:
        name, message = fatal[0]
        return f"{name}{': ' + message.strip() if message.strip() else ''}"[:300]
    if python:
        name, message = python[-1]
        return f"{name}: {message.strip()}"[:300]
    first = text.strip().splitlines()[0] if text.strip() else ""
    return f"{type(exc).__name__}{': ' + first if first else ''}"[:300]


def trace_file(log_dir: str | None, command: str) -> Path | None:
    """Where the full trace of an internal error goes: `<log_dir>/_errors/` when the
    command's output directory is local, else nowhere (the one line says so)."""
    if not log_dir or "://" in log_dir and not log_dir.startswith("file:"):
        return None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return Path(log_dir.removeprefix("file:")) / "_errors" / f"{command}-{stamp}.txt"


def report_internal_error(command: str, exc: BaseException, log_dir: str | None,
                          started: float | None = None) -> int:
    """Print one line for `exc`, keep the full trace in a file; exit code 3."""
    full = "".join(traceback.format_exception(exc))
    where = "rerun with REPLAY_TRACEBACK=1 for the trace"
    path = trace_file(log_dir, command)
    if path is not None:
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(full)
            where = f"full trace in {path}"
    print(f"[{command}] INTERNAL ERROR: {root_cause(exc, started)} ({where}); this is a failure of "
          "the tool or its Spark, not a finding about the cluster", file=sys.stderr, flush=True)
    return INTERNAL_ERROR


@contextlib.contextmanager
def signals_unwind() -> Iterator[None]:
    """SIGTERM and SIGINT raise `Terminated` in the main thread for the duration."""
    def handler(signum: int, _frame: FrameType | None) -> None:
        raise Terminated(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def out_dir_of(argv: list[str]) -> str | None:
    """The `--out` of a command line (`--out X` or `--out=X`), where traces go."""
    for i, arg in enumerate(argv):
        if arg == "--out" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--out="):
            return arg.split("=", 1)[1]
    return None


def run_command(command: str, main: Callable[[list[str]], int],
                argv: list[str] | None = None) -> int:
    """`main(argv)` with the shared exit codes: an escaping exception is code 3, a signal
    128 + its number; `SystemExit` (argparse's 2, `--help`'s 0) passes through."""
    args = sys.argv[1:] if argv is None else argv
    started = time.time()
    try:
        with signals_unwind():
            return main(args)
    except Terminated as stop:
        return _stopped(command, stop)
    except SystemExit:
        raise
    except Exception as exc:
        unwound = _terminated_in(exc)
        if unwound is not None:  # a library's cleanup failed while the signal unwound it
            return _stopped(command, unwound)
        if _wants_traceback():
            traceback.print_exc()
        return report_internal_error(command, exc, out_dir_of(args), started)


def _stopped(command: str, stop: Terminated) -> int:
    print(f"[{command}] stopped by {stop}; temporary state removed, outputs of a "
          "committed run untouched; run the same command again to finish",
          file=sys.stderr, flush=True)
    return 128 + stop.signum


def _terminated_in(exc: BaseException) -> Terminated | None:
    """The `Terminated` an exception was raised while handling, if any (PySpark's py4j
    wrappers can fail in their own cleanup when the signal interrupts a call)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, Terminated):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _wants_traceback() -> bool:
    import os

    return os.environ.get("REPLAY_TRACEBACK", "") not in ("", "0")


def read_failure(exc: BaseException) -> str | None:
    """One line for a Spark failure to read an event file, or None for any other error."""
    text = str(exc)
    if not _UNREADABLE.search(text):
        return None
    found = _FILE.search(text)
    where = f"event file {found.group(1)}" if found else "an event file"
    causes = _CAUSE.findall(text)
    cause = causes[-1].strip() if causes else text.strip().splitlines()[0]
    return (f"{where} cannot be read: its data is corrupt ({cause[:200]}); replace it with an "
            "intact copy under the same name and run again (or replay with a new checkpoint)")
