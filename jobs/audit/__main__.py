"""`python -m jobs.audit`: audit a replay run (docs/audit.md)."""

import sys

from jobs.audit.job import main

sys.exit(main())
