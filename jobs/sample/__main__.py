"""`python -m jobs.sample` (make run): simulate the sample log, replay it, summarise it."""

import sys

from jobs.sample.job import main

sys.exit(main())
