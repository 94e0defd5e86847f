"""KRaft metadata logs in: Kafka's `__cluster_metadata` log decoded into rows.

Three inputs give the same rows (`metadata_records`, schemas in `schemas.ingest`):

* log segments `__cluster_metadata-0/*.log`: record batches v2 (`batches.py`,
  `codecs.py`), whose records are metadata records framed as ApiMessageAndVersion
  (`framing.py`) and decoded from their schemas (`schema.py`, `records.py`);
* snapshots `*.checkpoint`: the same batches, opened and closed by the SnapshotHeader and
  SnapshotFooter control records (`control.py`);
* the text of `kafka-dump-log.sh --cluster-metadata-decoder` (`dumplog.py`).

`transactions.py` marks the records of metadata transactions (3.6+), `rows.py` turns the
decoded records into rows and counts, `inputs.py` tells the inputs apart by content and
decodes one, and `job.py` runs that over Spark for `jobs.ingest`. All but `job.py` are pure
Python (no pyspark, no pandas).
"""
