"""`jobs.report`: one self-contained HTML page over a replay's tables (docs/report.md).

    from jobs.report import write_report
    write_report("out/tables", "out/report.html")            # the newest run
"""

from __future__ import annotations

from jobs.report.job import main, write_report
from jobs.report.tables import ReportInputError

__all__ = ["ReportInputError", "main", "write_report"]
