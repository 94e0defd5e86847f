"""`python -m jobs.sim`: simulate a cluster and write its controller event log."""

import sys

from jobs.common.exitcodes import run_command
from jobs.sim.cli import main

sys.exit(run_command("sim", main))
