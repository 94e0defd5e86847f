"""`python -m jobs.sim`: simulate a cluster and write its controller event log."""

import sys

from jobs.sim.cli import main

sys.exit(main())
