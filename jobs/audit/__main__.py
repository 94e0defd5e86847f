"""`python -m jobs.audit`: audit a replay run (docs/audit.md)."""

import sys

from jobs.audit.job import main
from jobs.common.exitcodes import run_command

sys.exit(run_command("audit", main))
