"""Where everything lives under `--out` and `--checkpoint`: the one module that builds their
paths. Every other module asks it, so the layout can be read (and changed) here alone.

    <out>/                                 OutLayout
        <table>/run_id=<id>/part-*.parquet      a run's rows of a table (`partition`)
        <table>/_staging/<run id>/batch-<n>/    files the workers wrote, before the commit
        <table>/_superseding/run_id=<id>/       a split run's state rows being replaced
        _scratch/<prefix><random>/              a command's temporary state (full replays)
        _errors/<command>-<time>.txt            the trace of an internal error
        _probe-<run id>                         the check that --out can be written

    <checkpoint>/                          CheckpointLayout (the root)
        lease.json                              the run holding the checkpoint
        active.json                             the generation in use, after a --rebuild
        generation-<run id>/                    a rebuilt generation (the same layout inside)
    <checkpoint or its active generation>/ CheckpointLayout (a generation)
        replay-settings.json                    the bucket count and release it was built with
        history.json                            what earlier runs learnt from the log
        runs/<run id>.json                      the marker of a committed run
        runs/<run id>/batch-<n>.json            the ledger of a run's micro-batches
        runs/<run id>/period.json               the period the run's roll-up covers
        rollup/<run id>/<part>.parquet          what the roll-ups after that run carry on
        query/                                  Spark's offsets, commits and state store
        wake/<run id>-<digest>/                 a run's wake rows (one per group with state)
        seed/                                   --initial-state rows (seed/_seed_source marks it)
        kraft/                                  a KRaft replay's saved folds
        injected/, tables/                      a what-if's injected rows and staged tables

A leading `_` hides a directory from Spark's and pyarrow's table readers.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.dataset as ds

SCRATCH = "_scratch"
ERRORS = "_errors"
STAGING = "_staging"
SUPERSEDING = "_superseding"
LEASE = "lease.json"
ACTIVE = "active.json"
GENERATION = "generation-"
# Written in a checkpoint's seed directory when it is made, so that the directory exists
# (a file source needs it) without a row in it; hidden from the source by its leading '_'.
SEED_MARKER = "_seed_source"
# The `run_id=<id>` directories as pyarrow reads them: `run_id` always a string (inferred, a
# run id of digits such as a date, `run_id=20261128`, would come back as an integer).
RUN_PARTITIONING = ds.partitioning(pa.schema([("run_id", pa.string())]), flavor="hive")


def join(base: str, *names: str) -> str:
    """`base/name/...`, one slash between parts whatever `base` ends with."""
    return "/".join([base.rstrip("/"), *names])


def table_path(out: str, table: str) -> str:
    """`<out>/<table>`."""
    return OutLayout(out).table(table)


def partition_path(out: str, table: str, run_id: str) -> str:
    """`<out>/<table>/run_id=<run id>`: a run's rows of a table."""
    return OutLayout(out).partition(table, run_id)


@dataclass(frozen=True)
class OutLayout:
    """The directories of `--out`."""

    out: str

    def table(self, table: str) -> str:
        return join(self.out, table)

    def partition(self, table: str, run_id: str) -> str:
        return join(self.out, table, f"run_id={run_id}")

    def staging(self, table: str) -> str:
        return join(self.out, table, STAGING)

    def staged_run(self, table: str, run_id: str) -> str:
        return join(self.staging(table), run_id)

    def superseding(self, table: str) -> str:
        return join(self.out, table, SUPERSEDING)

    def scratch(self, prefix: str) -> str:
        """A fresh directory for a command's temporary state (a full replay's checkpoint, a
        what-if's): under `--out`, so a run writes nowhere else, and on the same file system
        as the tables, so a cluster's executors reach it too."""
        return join(self.out, SCRATCH, f"{prefix}{uuid.uuid4().hex[:12]}")

    def errors(self) -> str:
        return join(self.out, ERRORS)

    def probe(self, run_id: str) -> str:
        return join(self.out, f"_probe-{run_id}")


@dataclass(frozen=True)
class CheckpointLayout:
    """The files of a checkpoint directory, or of one of its generations."""

    root: str

    # -- the root's own files ------------------------------------------------------------
    @property
    def lease(self) -> str:
        return join(self.root, LEASE)

    @property
    def active(self) -> str:
        return join(self.root, ACTIVE)

    def generation(self, run_id: str) -> str:
        return join(self.root, f"{GENERATION}{run_id}")

    def entry(self, name: str) -> str:
        return join(self.root, name)

    # -- a generation's files ------------------------------------------------------------
    @property
    def settings(self) -> str:
        return join(self.root, "replay-settings.json")

    @property
    def history(self) -> str:
        return join(self.root, "history.json")

    @property
    def kraft_out(self) -> str:
        """The `--out` a KRaft checkpoint's runs write to (`jobs.store.checkpoint_out`);
        a ZooKeeper-mode generation records it in `settings`."""
        return join(self.root, "out.json")

    @property
    def runs(self) -> str:
        return join(self.root, "runs")

    def run_marker(self, run_id: str) -> str:
        return join(self.runs, f"{run_id}.json")

    def ledger(self, run_id: str) -> str:
        return join(self.runs, run_id)

    @property
    def rollup(self) -> str:
        return join(self.root, "rollup")

    def carry(self, run_id: str) -> str:
        """What the incidents and changes of the runs after `run_id` need of the runs up
        to it (`jobs.engine.rollup_carry`)."""
        return join(self.rollup, run_id)

    @property
    def query(self) -> str:
        return join(self.root, "query")

    @property
    def query_offsets(self) -> str:
        return join(self.query, "offsets")

    @property
    def wake(self) -> str:
        return join(self.root, "wake")

    def wake_rows(self, run_id: str, digest: str) -> str:
        return join(self.wake, f"{run_id}-{digest}")

    def wake_staging(self, run_id: str) -> str:
        return join(self.wake, f"{STAGING}-{run_id}")  # hidden from the stream

    @property
    def seed(self) -> str:
        return join(self.root, "seed")

    @property
    def seed_marker(self) -> str:
        return join(self.seed, SEED_MARKER)

    def seed_rows(self, run_id: str, digest: str) -> str:
        return join(self.seed, f"{run_id}-{digest}")

    def seed_staging(self, run_id: str) -> str:
        return join(self.seed, f"{STAGING}-{run_id}")  # hidden from the stream

    @property
    def kraft(self) -> str:
        return join(self.root, "kraft")

    @property
    def injected(self) -> str:
        return join(self.root, "injected")

    @property
    def tables(self) -> str:
        return join(self.root, "tables")
