"""`python -m jobs.compare`: hold a replay against what Kafka itself logged."""

import sys

from jobs.common.exitcodes import run_command
from jobs.compare.job import main

sys.exit(run_command("compare", main))
