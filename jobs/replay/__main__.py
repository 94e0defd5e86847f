"""`python -m jobs.replay`: replay an event log with Spark, write the state and request tables."""

import sys

from jobs.common.exitcodes import run_command
from jobs.replay.job import main

sys.exit(run_command("replay", main))
