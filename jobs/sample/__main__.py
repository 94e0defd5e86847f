"""`python -m jobs.sample` (make run): simulate the sample log, replay it, summarise it."""

import sys

from jobs.common.exitcodes import run_command
from jobs.sample.job import main

sys.exit(run_command("sample", main))
