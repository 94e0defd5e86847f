"""`python -m jobs.dataloss`: recompute a run's data_loss from the brokers' logs."""

import sys

from jobs.common.exitcodes import run_command
from jobs.dataloss.job import main

sys.exit(run_command("dataloss", main))
