"""Kafka's controller, re-executed as a pure fold: the ZooKeeper-mode controller of Kafka
3.7.1, or of an older release line through the release profiles (`profiles`), and in
`kraft/` the KRaft metadata image folded from the metadata log's records (with the quorum
controller's election rules, re-executed where a what-if edit changes the history).

Entry points: `statemachine.replay.replay` (ZooKeeper mode) and `statemachine.kraft`
(KRaft). No pyspark, pandas or pyarrow import anywhere in here (`make lint` enforces it).

The modules are pure Python source. `make install` also compiles them with mypyc where a C
compiler is present (`make compile-core`): the extension modules sit next to the sources and
Python prefers them. This file is never compiled; it decides which of the two is imported.
The sources are imported instead when `STATEMACHINE_INTERPRETED=1` is set (`make
test-interpreted` runs the core's tests that way) or when any compiled module is older than
its source (an edit since the last compile), so a stale build is never run.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES, SOURCE_SUFFIXES, FileFinder, SourceFileLoader

INTERPRETED_ENV = "STATEMACHINE_INTERPRETED"


def _stale(directory: str) -> bool:
    """Whether some compiled module of `directory` is older than its source."""
    try:
        names = os.listdir(directory)
    except OSError:  # inside a zip (spark-submit --py-files): sources only
        return False
    for name in names:
        suffix = next((s for s in EXTENSION_SUFFIXES if name.endswith(s)), None)
        if suffix is None:
            continue
        source = os.path.join(directory, name[: -len(suffix)] + ".py")
        built = os.path.join(directory, name)
        if os.path.exists(source) and os.path.getmtime(source) > os.path.getmtime(built):
            return True
    return False


def _import_sources() -> None:
    """Find this package's modules with a source-only finder: the compiled ones are skipped."""
    for directory in __path__:
        sys.path_importer_cache[directory] = FileFinder(
            directory, (SourceFileLoader, SOURCE_SUFFIXES))


def compiled() -> bool:
    """Whether the fold runs the mypyc-compiled modules."""
    from statemachine import replay

    return not (replay.__file__ or "").endswith(".py")


if os.environ.get(INTERPRETED_ENV) == "1" or any(_stale(d) for d in __path__):
    _import_sources()
