"""`python -m jobs.ingest`: turn controller.log / state-change.log text into the event log."""

import sys

from jobs.ingest.job import main

sys.exit(main())
