"""Helpers shared by the tests, imported one way: `from tests.helpers... import ...`.

    core.py       contexts, partitions and small event logs for the pure core
    event_log.py  Parquet event logs in the input contract, for the Spark jobs
    kraft_history.py  KRaft metadata-log histories (records by batch) for the KRaft fold
    tables.py     output tables (run_summary) written with pyarrow, for the pure tests
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
INGEST_FIXTURES = FIXTURES / "ingest"
REAL_LOGS = INGEST_FIXTURES / "real-logs"
