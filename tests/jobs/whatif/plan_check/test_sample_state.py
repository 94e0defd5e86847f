"""The plan check on a real replay's output (the session's `sample_tables`: no new replay):
the state it starts from is the replay's, and a plan that shuts every live broker down
takes every online partition offline, at that step, and nothing else."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from jobs.store.latest_state_arrow import arrow_state
from jobs.whatif.job import main
from jobs.whatif.plan_check.check import OFFLINE
from jobs.whatif.plan_check.state import ZOOKEEPER, read_start_state


def test_every_broker_down_takes_every_online_partition_offline(sample_tables: Path,
                                                              tmp_path: Path) -> None:
    state = read_start_state(str(sample_tables), None, None)
    rows = arrow_state(sample_tables, "partition_states", "sample").to_pylist()
    kept = [r for r in rows if r["state"] != "NonExistentPartition"
            and not r["queued_for_deletion"]]
    assert state.mode == ZOOKEEPER and state.run_id == "sample"
    assert len(state.partitions) == len(kept) > 0
    online = {(r["topic"], r["partition"]) for r in kept
              if r["state"] == "OnlinePartition" and r["leader"] in state.live}
    plan = tmp_path / "all-down.toml"
    plan.write_text('[[step]]\naction = "config"\nmin_insync_replicas = 1\n'
                    f'[[step]]\naction = "shutdown"\nbrokers = {sorted(state.live)}\n')
    assert main(["--from-state", str(sample_tables), "--plan", str(plan),
                 "--out", str(tmp_path / "plan")]) == 1
    found = pq.read_table(tmp_path / "plan" / "plan_check" / "run_id=all-down").to_pylist()
    assert {r["finding"] for r in found} == {OFFLINE} and {r["step"] for r in found} == {2}
    assert {(r["topic"], r["partition"]) for r in found} == online
