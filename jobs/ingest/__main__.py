"""`python -m jobs.ingest`: turn controller.log / state-change.log text into the event log,
and KRaft metadata logs into a table of their records."""

import sys

from jobs.common.exitcodes import run_command
from jobs.ingest.job import main

sys.exit(run_command("ingest", main))
