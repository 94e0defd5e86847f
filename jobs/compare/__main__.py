"""`python -m jobs.compare`: hold a replay against what Kafka itself logged."""

import sys

from jobs.compare.job import main

sys.exit(main())
