"""`python -m jobs.report`: one self-contained HTML page over a replay's tables."""

import sys

from jobs.common.exitcodes import run_command
from jobs.report.job import main

sys.exit(run_command("report", main))
