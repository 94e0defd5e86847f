"""`python -m jobs.bench`: the Spark job against the pure core on a simulated log (make bench)."""

import sys

from jobs.bench.job import main
from jobs.common.exitcodes import run_command

sys.exit(run_command("bench", main))
