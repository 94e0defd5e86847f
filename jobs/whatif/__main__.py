"""`python -m jobs.whatif`: replay an event log under a scenario's variants, rank them."""

import sys

from jobs.common.exitcodes import run_command
from jobs.whatif.job import main

sys.exit(run_command("whatif", main))
