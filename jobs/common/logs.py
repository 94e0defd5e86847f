"""The jobs' own lines, through the standard library's `logging`.

Every module logs to `logging.getLogger(__name__)`, under the `jobs` logger. `configure`
(called by the command skeleton, `jobs.common.command`) decides what reaches the terminal:

* INFO, a job's progress (`[replay] timeline: 3 file(s) scanned ...`), on stdout, unless
  `--quiet`; DEBUG as well with `--verbose`;
* WARNING and ERROR on stderr, always: `[replay] ERROR: --out x is a file ...`.

The lines carry the command's name, not the module's: an operator reads `[whatif]` for
everything a what-if run says, whichever part of the engine said it. The handlers look up
`sys.stdout` / `sys.stderr` when they write, so a caller that swaps them (a test capturing
output, a notebook) gets the lines. A command's results (the run summary, the post-mortem,
the audit's verdict) are printed, not logged: `--quiet` keeps them.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

ROOT = "jobs"
QUIET, NORMAL, VERBOSE = logging.WARNING, logging.INFO, logging.DEBUG


class _Stream(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler writing to the current `sys.stdout` or `sys.stderr`."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name

    @property
    def stream(self) -> TextIO:
        return sys.stdout if self._name == "stdout" else sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:  # StreamHandler.__init__ assigns it
        pass


class _Below(logging.Filter):
    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < self.level


_current: tuple[str, int] = (ROOT, NORMAL)


def current() -> tuple[str, int]:
    """The command name and level of the lines now: a command that runs another (the
    sample runs the replay) restores them when the other returns."""
    return _current


def configure(command: str, level: int = NORMAL) -> None:
    """Lines of every `jobs.*` logger as `[command] message`: below WARNING on stdout,
    WARNING and above on stderr with their level. Called again, it replaces the last
    configuration (a test, or `jobs.replay --audit`, runs several commands in a process)."""
    global _current
    _current = (command, level)
    root = logging.getLogger(ROOT)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    out = _Stream("stdout")
    out.addFilter(_Below(logging.WARNING))
    out.setFormatter(logging.Formatter(f"[{command}] %(message)s"))
    err = _Stream("stderr")
    err.setLevel(logging.WARNING)
    err.setFormatter(logging.Formatter(f"[{command}] %(levelname)s: %(message)s"))
    root.addHandler(out)
    root.addHandler(err)
    root.setLevel(level)
    root.propagate = False


def level_of(quiet: bool, verbose: bool) -> int:
    """`--quiet` / `--verbose` as a logging level."""
    return QUIET if quiet else VERBOSE if verbose else NORMAL


def ensure_configured() -> None:
    """A default configuration (`[jobs]`, INFO) when no command configured one: the engine
    called from a notebook or a test still says what it does."""
    if not logging.getLogger(ROOT).handlers:
        configure(ROOT)


ensure_configured()
