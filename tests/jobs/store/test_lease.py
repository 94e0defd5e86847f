"""The checkpoint lease: one run at a time, recoverable after a crash."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from jobs.store.layout import LEASE as LEASE_FILE
from jobs.store.lease import CheckpointLease, LeaseHeld


def _holder(path: Path, **fields: Any) -> None:
    now = time.time()
    holder = {"host": socket.gethostname(), "pid": 1, "run_id": "other", "acquired_at": now,
              "renewed_at": now, "ttl_seconds": 600, **fields}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(holder))


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_a_live_lease_refuses_a_second_run_and_names_the_holder(tmp_path: Path) -> None:
    with CheckpointLease(None, str(tmp_path), "first"):  # type: ignore[arg-type]
        held = json.loads((tmp_path / LEASE_FILE).read_text())
        assert held["run_id"] == "first"
        with pytest.raises(LeaseHeld, match="run 'first'.*delete .*lease.json"):
            CheckpointLease(None, str(tmp_path), "second").acquire()  # type: ignore[arg-type]
    assert not (tmp_path / LEASE_FILE).exists()  # released


def test_a_lease_of_a_process_that_died_on_this_host_is_taken_over(tmp_path: Path) -> None:
    _holder(tmp_path / LEASE_FILE, pid=_dead_pid())
    with CheckpointLease(None, str(tmp_path), "mine"):  # type: ignore[arg-type]
        assert json.loads((tmp_path / LEASE_FILE).read_text())["run_id"] == "mine"


def test_a_lease_from_another_host_holds_until_it_expires(tmp_path: Path) -> None:
    _holder(tmp_path / LEASE_FILE, host="elsewhere.example", pid=4242)
    with pytest.raises(LeaseHeld, match="process 4242 on elsewhere.example"):
        CheckpointLease(None, str(tmp_path), "mine").acquire()  # type: ignore[arg-type]
    _holder(tmp_path / LEASE_FILE, host="elsewhere.example", pid=4242,
            renewed_at=time.time() - 601)
    with CheckpointLease(None, str(tmp_path), "mine"):  # type: ignore[arg-type]
        assert json.loads((tmp_path / LEASE_FILE).read_text())["host"] == socket.gethostname()


def test_a_torn_lease_file_counts_as_expired(tmp_path: Path) -> None:
    (tmp_path / LEASE_FILE).write_text("{not json")
    with CheckpointLease(None, str(tmp_path), "mine"):  # type: ignore[arg-type]
        assert json.loads((tmp_path / LEASE_FILE).read_text())["run_id"] == "mine"


def test_the_lease_is_renewed_while_held(tmp_path: Path) -> None:
    lease = CheckpointLease(None, str(tmp_path), "mine", ttl_seconds=1)  # type: ignore[arg-type]
    with lease:
        first = json.loads((tmp_path / LEASE_FILE).read_text())["renewed_at"]
        time.sleep(0.8)
        assert json.loads((tmp_path / LEASE_FILE).read_text())["renewed_at"] > first
