"""`python -m jobs.audit`: the nightly audit and the post-mortem of a replay run.

`run_audit(spark, tables_dir, run_id, options)` is the API other jobs call in their own
session (the replay's `--audit`); `main(argv, spark=None)` the command line (docs/audit.md).
"""

from __future__ import annotations

from jobs.audit.options import AuditOptions, options_from_config
from jobs.audit.run import AuditResult, run_audit

__all__ = ["AuditOptions", "AuditResult", "options_from_config", "run_audit"]
