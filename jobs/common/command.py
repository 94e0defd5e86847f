"""The one skeleton of every command's `main(argv, spark=None) -> int`.

    def main(argv=None, spark=None):
        return run_job("replay", argv, body, spark)

`run_job` configures the log lines (`jobs.common.logs`: `--quiet` keeps warnings and
errors, `--verbose` adds the debug lines) and the driver's pyarrow allocator
(`jobs.common.arrow_memory`), runs the command's body, and turns what the user
can act on into one line and exit code 2: a `BadInput` raised anywhere below, or Spark's
failure to read an event file whose data is corrupt. Anything else escapes to
`jobs.common.exitcodes.run_command` (`python -m jobs.X`, `jobs/submit.py X`), which makes it
exit code 3 with one line and the trace in a file. The body parses its own arguments with
`jobs.common.cli.command_parser`, which gives every command `--quiet` and `--verbose`.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from jobs.common import logs
from jobs.common.arrow_memory import release_decoded_pages
from jobs.common.exitcodes import BAD_INPUT, BadInput, read_failure

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)
# A command's body: its arguments (parsed by itself) and the session a caller lends it.
Body = Callable[[list[str], "SparkSession | None"], int]


def run_job(command: str, argv: list[str] | None, body: Body,
            spark: SparkSession | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    caller = logs.current()
    quiet, verbose = "--quiet" in args, "--verbose" in args
    # A command run by another without either flag talks as its caller does.
    logs.configure(command, logs.level_of(quiet, verbose) if quiet or verbose else caller[1])
    release_decoded_pages()
    try:
        return body(args, spark)
    except BadInput as exc:
        return refuse(str(exc))
    except Exception as exc:
        explained = read_failure(exc)
        if explained is None:
            raise
        return refuse(explained)
    finally:
        logs.configure(*caller)  # a command run by another: the other's lines again


def refuse(message: str) -> int:
    """Say what is wrong with the input in one line on stderr; exit code 2."""
    log.error(message)
    return BAD_INPUT
