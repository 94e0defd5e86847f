"""A lease on a checkpoint: one run at a time.

Two runs on one checkpoint would both plan Spark's next micro-batch, both append wake rows
and both write the same run's tables. So a run holds `<checkpoint>/lease.json` for as long
as it works: the file names the holder (host, process, run id) and when the lease was last
renewed. A second run is refused while the lease is live. A run that crashed stops renewing
its lease; the next run takes it over once it has expired, or at once when the holder was a
process of the same host that no longer exists.

The file is created exclusively on a local file system (`O_EXCL`), so two runs starting
together cannot both win. Elsewhere it is created when absent (`jobs.store.filesystem`:
object stores have no exclusive create), then read back: the run whose holder the file names
has it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from jobs.common.uris import scheme_of
from jobs.store.filesystem import (
    arrow_filesystem,
    create_new_text,
    delete_path,
    path_exists,
    read_text,
    write_text,
)
from jobs.store.layout import CheckpointLayout

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_TTL_SECONDS = 600


@dataclass(frozen=True)
class Holder:
    host: str
    pid: int
    run_id: str
    acquired_at: float
    renewed_at: float
    ttl_seconds: int

    def describe(self) -> str:
        return (f"run {self.run_id!r} (process {self.pid} on {self.host}, "
                f"since {_utc(self.acquired_at)}, renewed {_utc(self.renewed_at)})")

    def stale(self, now: float) -> bool:
        if now - self.renewed_at > self.ttl_seconds:
            return True
        return self.host == socket.gethostname() and not _alive(self.pid)


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


class LeaseHeld(RuntimeError):
    """Another live run holds the checkpoint."""


class CheckpointLease:
    """`with CheckpointLease(spark, checkpoint, run_id):` holds the checkpoint for a run."""

    def __init__(self, spark: SparkSession, checkpoint: str, run_id: str,
                 ttl_seconds: int = DEFAULT_TTL_SECONDS) -> None:
        self.store = _Store(spark, CheckpointLayout(checkpoint).lease)
        self.run_id = run_id
        self.ttl = ttl_seconds
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self._mine: Holder | None = None

    def __enter__(self) -> CheckpointLease:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        now = time.time()
        mine = Holder(socket.gethostname(), os.getpid(), self.run_id, now, now, self.ttl)
        if not self.store.create(_text(mine)):
            held = self.store.read()
            if held is not None and not held.stale(now):
                raise LeaseHeld(
                    f"checkpoint is in use by {held.describe()}; wait for that run to end "
                    f"(a crashed run's lease expires {self.ttl} s after its last renewal) "
                    f"or, if no run is active, delete {self.store.path}")
            # Expired or left by a dead process: take it over, exclusively again.
            self.store.delete()
            if not self.store.create(_text(mine)):
                raise LeaseHeld(f"another run took over {self.store.path} at the same time")
        if self.store.read() != mine:  # a store without exclusive create: the last writer
            raise LeaseHeld(f"another run took {self.store.path} at the same time")
        self._mine = mine
        self._renewer = threading.Thread(target=self._renew, name="checkpoint-lease",
                                         daemon=True)
        self._renewer.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl / 4) and self._mine is not None:
            self._mine = Holder(**{**asdict(self._mine), "renewed_at": time.time()})
            self.store.overwrite(_text(self._mine))

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
        held = self.store.read()
        if self._mine is not None and held is not None and held.pid == self._mine.pid \
                and held.host == self._mine.host:
            self.store.delete()
        self._mine = None


def _text(holder: Holder) -> str:
    return json.dumps(asdict(holder), sort_keys=True) + "\n"


class _Store:
    """The lease file: on the local file system directly (renewed by an atomic rename),
    elsewhere through `jobs.store.filesystem`."""

    def __init__(self, spark: SparkSession, path: str) -> None:
        self.path = path
        self.spark = spark
        resolved = arrow_filesystem(path) if scheme_of(path) in ("", "file") else None
        self.local = resolved[1] if resolved is not None else None

    def create(self, text: str) -> bool:
        """Write `text` to a new file; False when the file already exists."""
        if self.local is not None:
            os.makedirs(os.path.dirname(self.local), exist_ok=True)
            try:
                fd = os.open(self.local, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            return True
        return create_new_text(self.path, text)

    def overwrite(self, text: str) -> None:
        if self.local is not None:
            tmp = f"{self.local}.renew"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.local)
            return
        write_text(self.path, text)

    def read(self) -> Holder | None:
        try:
            if self.local is not None:
                with open(self.local, encoding="utf-8") as f:
                    raw = f.read()
            else:
                if not path_exists(self.path):
                    return None
                raw = read_text(self.path)
            return Holder(**json.loads(raw))
        except FileNotFoundError:
            return None
        except (ValueError, TypeError):  # a torn or foreign file: treat as expired
            return Holder("?", -1, "?", 0.0, 0.0, 0)

    def delete(self) -> None:
        if self.local is not None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.local)
            return
        delete_path(self.path)
