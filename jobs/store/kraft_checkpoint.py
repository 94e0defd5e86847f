"""Incremental KRaft replays: `--checkpoint DIR` keeps each cluster's fold between runs, so a
nightly run folds only the records the last one did not (docs/replay-job.md, "KRaft logs").

What the checkpoint holds (`<checkpoint>/kraft/`):

* `state.pickle`: per cluster the frozen `KraftFold` (the image with its partitions' open
  windows, the broker and quorum timeline), the highest offset it folded (`through`), the
  latest record time (where the next run's period starts), and the `offline` /
  `under_min_isr` windows and unclean-election findings of the earlier runs (an incident
  is rolled up over every night until it ends, as in a ZooKeeper run); with the profile it
  was built under. Written to a temporary name and renamed, after the run's tables;
  and the offset ranges the runs never saw (holes of the log: a record in one delivered
  later is late);
* `folds/<run_id>/<task>.pickle`: a state folded by topic bucket (`jobs.replay
  --kraft-fold executors`) holds in `state.pickle` the fold of each cluster's
  cluster-scope records, and each (cluster, bucket)'s fold in a file its executor task
  wrote, under the run that wrote it; the state names them, and records the bucket count,
  which the checkpoint's later runs keep. The files of other runs are deleted once the
  state is in place;
* `runs/<run_id>.json`: one per committed run, for the reader. The state names the runs
  it holds, and is renamed into place in one step after the run's tables are written: a
  run killed before that is run again from the state before it; a run id the state holds
  is a no-op.

A run holds `<checkpoint>/lease.json` (`jobs.store.lease`): a second one exits 75. A run
under another profile than the checkpoint's is refused with exit 2 (the state was built
under the other's rules). `--rebuild` folds the whole log into a new state, which replaces
the old one once the run has written its tables.

The state is a pickle of the core's objects: read it with the build that wrote it (the
sources, or the same compiled core).
"""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass, field
from typing import Any

from pyarrow import fs as pafs

from jobs.store.filesystem import arrow_filesystem
from jobs.store.layout import CheckpointLayout
from statemachine.kraft.fold import KraftFold
from statemachine.rows import FindingRow, PartitionWindowRow

STATE_DIR = "kraft"
STATE_FILE = "state.pickle"
FOLDS = "folds"  # a bucketed state's folds, by the run that wrote them
FORMAT = 1


@dataclass
class ClusterState:
    fold: KraftFold
    through: int  # the highest record offset folded
    last_ts: int  # the latest record time folded (microseconds), -1: none
    windows: list[PartitionWindowRow] = field(default_factory=list)  # of earlier runs
    elections: list[FindingRow] = field(default_factory=list)  # unclean, of earlier runs
    # Offset ranges never folded (holes of the log, `jobs.engine.kraft.continuity`): a
    # record delivered in one later is late. A state saved before them has none.
    missing: list[tuple[int, int]] = field(default_factory=list)
    # A checkpoint folded by topic bucket (`KraftState.buckets`): `fold` is the cluster
    # scope's, and each bucket's fold is its own file (`Checkpoint.save_fold`), named here.
    bucket_folds: dict[int, str] | None = None


@dataclass
class KraftState:
    profile: str
    clusters: dict[str, ClusterState] = field(default_factory=dict)
    runs: list[str] = field(default_factory=list)  # the run ids folded into it, in order
    format: int = FORMAT
    # 0: a fold per cluster (the driver's); N: per (cluster, topic bucket), N buckets, which
    # every later run of the checkpoint keeps. A state saved before buckets reads as 0.
    buckets: int = 0


def _native_attrs(cls: type) -> tuple[str, ...] | None:
    """The attributes of a class compiled by mypyc (with those of interpreted subclasses'
    slots); None for a class of plain Python."""
    names: list[str] = []
    native = False
    for k in cls.__mro__:
        found = vars(k).get("__mypyc_attrs__")
        if found is not None:
            native = True
            names += list(found)
        slots = vars(k).get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return tuple(dict.fromkeys(names)) if native else None


def _rebuilt_native(cls: type, attrs: dict[str, Any]) -> Any:
    """An object of a compiled core class, from its attributes. A compiled class's
    `__new__` runs its `__init__`, so the object is made with the arguments `__init__`
    needs (a `Topic`'s name, a `Part`'s partition and topic), then given the rest."""
    if "parts" in attrs:
        obj = cls(attrs["name"])
    elif "partition" in attrs:
        obj = cls(attrs["partition"], attrs["topic"])
    else:
        obj = cls()
    for name, value in attrs.items():
        setattr(obj, name, value)
    return obj


class _StatePickler(pickle.Pickler):
    """Pickles the core's compiled classes through their attributes: their own pickling
    cannot make one back (`_rebuilt_native`). The sources' classes pickle as usual."""

    def reducer_override(self, obj: Any) -> Any:
        attrs = _native_attrs(type(obj))
        if attrs is None:
            return NotImplemented
        return _rebuilt_native, (type(obj), {a: getattr(obj, a) for a in attrs
                                             if hasattr(obj, a)})


class Checkpoint:
    """The KRaft state under `<checkpoint>/kraft/`, read and written with pyarrow."""

    def __init__(self, checkpoint: str) -> None:
        opened = arrow_filesystem(CheckpointLayout(checkpoint).kraft)
        if opened is None:
            raise ValueError(f"--checkpoint {checkpoint}: no file system client for it")
        self.fs, self.root = opened

    def _path(self, *names: str) -> str:
        return "/".join((self.root, *names))

    def _exists(self, path: str) -> bool:
        return bool(self.fs.get_file_info(path).type != pafs.FileType.NotFound)

    def load(self) -> KraftState | None:
        path = self._path(STATE_FILE)
        if not self._exists(path):
            return None
        with self.fs.open_input_stream(path) as f:
            state = pickle.loads(f.read())
        if not isinstance(state, KraftState) or state.format != FORMAT:
            raise ValueError(f"--checkpoint: {path} is not a KRaft state this build reads")
        return state

    def save_fold(self, fold: KraftFold, run_id: str, name: str) -> str:
        """One bucket's fold, written by its task under `folds/<run_id>/` (a run killed
        before its state is renamed into place leaves the earlier state's files whole);
        its path under the state's directory."""
        self.fs.create_dir(self._path(FOLDS, run_id), recursive=True)
        path = f"{FOLDS}/{run_id}/{name}.pickle"
        with self.fs.open_output_stream(self._path(path)) as f:
            _StatePickler(f, protocol=pickle.HIGHEST_PROTOCOL).dump(fold)
        return path

    def load_fold(self, path: str) -> KraftFold:
        with self.fs.open_input_stream(self._path(path)) as f:
            fold = pickle.loads(f.read())
        if not isinstance(fold, KraftFold):
            raise ValueError(f"--checkpoint: {path} is not a KRaft fold this build reads")
        return fold

    def _drop_other_folds(self, state: KraftState) -> None:
        """The bucket folds the state no longer names: of earlier runs, and of runs killed
        before their state (a cluster this run did not read keeps its earlier files)."""
        named = {path.split("/")[1] for c in state.clusters.values()
                 for path in (c.bucket_folds or {}).values()}
        listed = self.fs.get_file_info(pafs.FileSelector(self._path(FOLDS),
                                                         allow_not_found=True))
        for info in listed:
            if info.type == pafs.FileType.Directory and info.base_name not in named:
                self.fs.delete_dir(info.path)

    def save(self, state: KraftState, run_id: str) -> None:
        """The state with the run in it, renamed into place, then the run's marker."""
        state.runs.append(run_id)
        self.fs.create_dir(self._path("runs"), recursive=True)
        tmp = self._path(f".{STATE_FILE}.{run_id}")
        with self.fs.open_output_stream(tmp) as f:
            _StatePickler(f, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
        self.fs.move(tmp, self._path(STATE_FILE))
        self._drop_other_folds(state)
        with self.fs.open_output_stream(self._path("runs", f"{run_id}.json")) as f:
            f.write((json.dumps({"run_id": run_id, "profile": state.profile,
                                 "through": {c: s.through for c, s in
                                             sorted(state.clusters.items())}}) + "\n")
                    .encode())
