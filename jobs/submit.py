"""The one file `spark-submit` runs: `jobs/submit.py COMMAND [ARGS...]`.

    make package
    spark-submit --py-files dist/replay.zip jobs/submit.py replay --events ... --out ...

COMMAND is one of the packages of `jobs/` that has a job (see `COMMANDS`);
the arguments are that job's, exactly as `python -m jobs.COMMAND` takes them. spark-submit
runs this file as a script, so the project root is put on `sys.path` when the code is not
already importable (a plain checkout without `--py-files`), and at its end otherwise.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

COMMANDS = ("replay", "ingest", "compare", "audit", "whatif", "report", "dataloss")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: jobs/submit.py {{{','.join(COMMANDS)}}} [ARGS...]", file=sys.stderr)
        return 2
    root = Path(__file__).resolve().parent.parent
    try:
        importlib.import_module("jobs")
    except ImportError:
        sys.path.insert(0, str(root))
    else:
        # An installed checkout: the core compiled by `make install` imports the runtime
        # mypyc built at the root, which a script's sys.path lacks (after --py-files, which
        # still wins).
        if (root / "statemachine").is_dir() and str(root) not in sys.path:
            sys.path.append(str(root))
    from jobs.common.exitcodes import run_command

    job = importlib.import_module(f"jobs.{argv[0]}.job")
    return run_command(argv[0], job.main, argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
