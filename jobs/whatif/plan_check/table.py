"""The `plan_check` table under --out, written with pyarrow: `<out>/plan_check/run_id=ID/`
holds one file, replaced when the same plan check runs again (an empty file when the plan
hurts nothing: the run is still listed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from jobs.store.layout import partition_path
from jobs.whatif.plan_check.check import PlanCheck
from schemas.arrow import arrow_schema
from schemas.plan_check import PLAN_CHECK, PLAN_CHECK_TABLE


def rows_of(result: PlanCheck, run_id: str) -> pa.Table:
    s = result.state
    rows = [{
        "cluster": s.cluster, "run_id": run_id, "state_run_id": s.run_id, "mode": s.mode,
        "rank": rank, "step": f.step.number, "step_name": f.step.name,
        "action": f.step.action, "step_brokers": list(f.step.brokers), "topic": f.topic,
        "partition": f.partition, "finding": f.kind, "replicas": list(f.before.replicas),
        "leader_before": f.before.leader, "leader_after": f.after.leader,
        "isr_before": list(f.before.isr), "isr_after": list(f.after.isr),
        "min_insync_replicas": f.min_isr, "advice_kind": f.advice_kind, "advice": f.advice,
    } for rank, f in enumerate(result.findings, start=1)]
    return pa.Table.from_pylist(rows, schema=arrow_schema(PLAN_CHECK))


def write_table(result: PlanCheck, out: str, run_id: str) -> str:
    """Write the run's rows; returns the partition's directory."""
    where = Path(partition_path(out, PLAN_CHECK_TABLE, run_id))
    staging = where.with_name(f".{where.name}.writing")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    pq.write_table(rows_of(result, run_id).drop_columns(["run_id"]),
                   str(staging / "part-00000.parquet"))
    shutil.rmtree(where, ignore_errors=True)
    staging.rename(where)
    return str(where)
