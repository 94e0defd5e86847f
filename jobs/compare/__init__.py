"""`python -m jobs.compare`: a replay held against what Kafka itself logged."""
