"""`python -m jobs.report`: one self-contained HTML page over a replay's tables."""

import sys

from jobs.report.job import main

sys.exit(main())
