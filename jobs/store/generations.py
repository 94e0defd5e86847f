"""`--rebuild`: replay the whole log into a new checkpoint and swap it in once it commits.

The state machines cannot rewind, so rows that arrive after the checkpoint replayed past
their seqs (a night delivered late) can only be taken in by replaying everything again.
A rebuild does that without risking the checkpoint the schedule relies on:

* the new checkpoint is a generation inside the checkpoint directory,
  `<checkpoint>/generation-<run_id>/`, so the job still writes nowhere but `--checkpoint`
  and `--out`, under the one lease of the checkpoint directory;
* `<checkpoint>/active.json` names the generation in use (none: the directory itself, as
  every checkpoint before the first rebuild). It is replaced only after the rebuild's run
  has committed, so a rebuild killed half-way leaves the old generation in charge, and the
  same command resumes the rebuild (its run id names its generation);
* the rebuild's run lists in `run_summary.superseded_runs` the runs of the generation it
  replaces: its tables hold the whole log, theirs only their nights.
"""

from __future__ import annotations

import json

from pyspark.sql import SparkSession

from jobs.store.filesystem import (
    delete_path,
    list_names,
    path_exists,
    read_text,
    rename_path,
    write_text,
)
from jobs.store.layout import ACTIVE, LEASE, CheckpointLayout

KEEP = frozenset({ACTIVE, f"{ACTIVE}.tmp", LEASE})  # the root's own files


def active_checkpoint(spark: SparkSession, checkpoint: str) -> str:
    """The directory the checkpoint's runs use: the generation `active.json` names, else
    the checkpoint directory itself."""
    root = CheckpointLayout(checkpoint)
    for name in (ACTIVE, f"{ACTIVE}.tmp"):  # .tmp: a swap stopped between its two renames
        if path_exists(root.entry(name)):
            return root.entry(json.loads(read_text(root.entry(name)))["active"])
    return root.root


def generation(checkpoint: str, run_id: str) -> str:
    return CheckpointLayout(checkpoint).generation(run_id)


def committed_runs(spark: SparkSession, checkpoint: str) -> list[str]:
    """The run ids that committed in a generation (`runs/<id>.json`), sorted."""
    runs = CheckpointLayout(checkpoint).runs
    if not path_exists(runs):
        return []
    return [n.removesuffix(".json") for n in list_names(runs) if n.endswith(".json")]


def swap_in(spark: SparkSession, checkpoint: str, new: str) -> None:
    """Make generation `new` the active one, then remove every other generation (and the
    root's own state, when the root was the active one)."""
    root = CheckpointLayout(checkpoint)
    name = new.rstrip("/").rsplit("/", 1)[1]
    write_text(f"{root.active}.tmp", json.dumps({"active": name}) + "\n")
    delete_path(root.active)
    rename_path(f"{root.active}.tmp", root.active)
    for entry in list_names(root.root):
        if entry not in KEEP and entry != name:
            delete_path(root.entry(entry))
