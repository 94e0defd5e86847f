"""A group's valid rows, deduplicated and put in the order the fold applies them, with at
most `spill_rows` of them in memory.

Spark gives no order inside a group, so the rows must be sorted before the fold. A group
of a normal run fits in memory (the bench log's 64 groups hold 3,700 to 74,000 rows), and is
sorted there (`total_order`; the core then sorts by seq). A group larger than
`spill_rows`, like a first replay of a long history, is an external sort instead. Each
`spill_rows` rows are deduplicated, sorted and written to an anonymous temporary file
(in Spark's local directories) as a run; the files are closed, hence removed, with the
group. The runs are then merged lazily and handed to the fold in pieces
(`statemachine.replay.Fold`). The memory a group needs then depends on `spill_rows`, not
on how many events the group has.

Both paths give the fold the same order: by seq, then the core's tie order
(`statemachine.replay.apply_order`), then a total order over the row contents, so exact
duplicates are adjacent and counted once.
"""

from __future__ import annotations

import heapq
import os
import pickle
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import groupby
from operator import itemgetter
from typing import IO, Any

from statemachine.events import Event
from statemachine.replay import apply_order

Row = tuple[Any, ...]  # the fields of `statemachine.events.Event`, in order
BLOCK_ROWS = 10_000  # rows per pickle in a run file: one block per run is in memory
_FIRST = itemgetter(0)


def full_key(e: Row) -> Row:
    return tuple((v is None, v if v is not None else 0) for v in e)


SEQ, EVENT_TYPE, BROKER_ID, TOPIC, PARTITION = map(
    Event._fields.index, ("seq", "event_type", "broker_id", "topic", "partition"))


def cheap_key(e: Row) -> Row:
    # seq, event_type, topic, partition, broker_id: unique for all but malformed rows.
    return (e[SEQ], e[EVENT_TYPE], e[TOPIC] or "", -1 if e[PARTITION] is None else e[PARTITION],
            -1 if e[BROKER_ID] is None else e[BROKER_ID])


def _resolve_ties(keyed: list[tuple[Row, Row]]) -> list[Row]:
    """Rows sorted by a partial key -> rows in total order: runs that tie on the partial
    key are ordered by every column."""
    out = [e for _, e in keyed]
    i, n = 0, len(keyed)
    while i < n:
        j = i + 1
        while j < n and keyed[j][0] == keyed[i][0]:
            j += 1
        if j - i > 1:
            out[i:j] = sorted(out[i:j], key=full_key)
        i = j
    return out


def total_order(rows: set[Row]) -> list[Row]:
    """The distinct rows in a total order over their contents, whatever order Spark
    delivered them in (the core sorts stably by seq and scope; this fixes its ties)."""
    return _resolve_ties(sorted(((cheap_key(e), e) for e in rows), key=itemgetter(0)))


def fold_key(e: Row) -> Row:
    """`apply_order` of the row, then `cheap_key`: the order of a run, before ties."""
    return (*apply_order(Event._make(e)), cheap_key(e))


def fold_order(rows: set[Row]) -> list[Row]:
    return _resolve_ties(sorted(((fold_key(e), e) for e in rows), key=itemgetter(0)))


def _spill_dir() -> str | None:
    """Spark's local directories, as PySpark's own external sorter uses them (executors
    get SPARK_LOCAL_DIRS; elsewhere the system's temporary directory)."""
    dirs = os.environ.get("SPARK_LOCAL_DIRS")
    return dirs.split(",")[0] if dirs else None


def _read_run(f: IO[bytes]) -> Iterator[Row]:
    f.seek(0)
    while True:
        try:
            block: list[Row] = pickle.load(f)
        except EOFError:
            return
        yield from block


class GroupRows:
    """Collects a group's valid rows (`add`), then gives them distinct and in order."""

    def __init__(self, spill_rows: int) -> None:
        self.spill_rows = spill_rows
        self.buffer: list[Row] = []
        self.runs: list[IO[bytes]] = []
        self.rows = 0  # rows added
        self.distinct = 0  # distinct rows delivered so far
        # row -> its copies beyond the first (known once all rows are delivered): what a
        # what-if variant that drops the row no longer counts as duplicates
        self.repeated: Counter[Row] = Counter()

    @property
    def spilled(self) -> bool:
        return bool(self.runs)

    @property
    def duplicates(self) -> int:
        """Rows not delivered because an equal row was (valid once all are delivered)."""
        return self.rows - self.distinct

    def add(self, row: Row) -> None:
        self.buffer.append(row)
        self.rows += 1
        if len(self.buffer) >= self.spill_rows:
            self._spill()

    def _note_repeats(self, rows: list[Row], distinct: int) -> None:
        if distinct < len(rows):
            self.repeated.update({r: n - 1 for r, n in Counter(rows).items() if n > 1})

    def _spill(self) -> None:
        distinct = set(self.buffer)
        self._note_repeats(self.buffer, len(distinct))
        run = fold_order(distinct)
        self.buffer = []
        f = tempfile.TemporaryFile(prefix="replay-run-", dir=_spill_dir())  # noqa: SIM115
        for start in range(0, len(run), BLOCK_ROWS):
            pickle.dump(run[start:start + BLOCK_ROWS], f, protocol=5)
        self.runs.append(f)

    def in_memory(self) -> list[Row]:
        """All the distinct rows, in `total_order` (only when nothing was spilled)."""
        assert not self.runs
        distinct = set(self.buffer)
        self._note_repeats(self.buffer, len(distinct))
        rows = total_order(distinct)
        self.distinct = len(rows)
        return rows

    def merged(self) -> Iterator[Row]:
        """The distinct rows in fold order, merged from the runs and the rows still held.

        The runs are merged on `fold_key` alone (computed once per row); the rare rows
        that tie on it are deduplicated and ordered by every column, as in `fold_order`."""
        runs: list[Iterable[Row]] = [_read_run(f) for f in self.runs]
        runs.append(fold_order(set(self.buffer)))
        self.buffer = []
        keyed = [((fold_key(e), e) for e in run) for run in runs]
        for _, tied in groupby(heapq.merge(*keyed, key=_FIRST), key=_FIRST):
            group = [e for _, e in tied]
            if len(group) > 1:
                distinct = set(group)
                self._note_repeats(group, len(distinct))
                group = sorted(distinct, key=full_key)
            self.distinct += len(group)
            yield from group

    def replayable(self) -> Callable[[], Iterator[Row]]:
        """The distinct rows in fold order, as often as asked: a group in memory as one
        sorted list; a spilled group merged once into one more run file, read again each
        time (a what-if folds the same rows once per variant)."""
        if not self.runs:
            distinct = set(self.buffer)
            self._note_repeats(self.buffer, len(distinct))
            self.buffer = []
            rows = fold_order(distinct)
            self.distinct = len(rows)
            return lambda: iter(rows)
        f = tempfile.TemporaryFile(prefix="replay-merged-", dir=_spill_dir())  # noqa: SIM115
        block: list[Row] = []
        for row in self.merged():
            block.append(row)
            if len(block) >= BLOCK_ROWS:
                pickle.dump(block, f, protocol=5)
                block = []
        pickle.dump(block, f, protocol=5)
        for run in self.runs:
            run.close()
        self.runs = [f]
        return lambda: _read_run(f)

    def close(self) -> None:
        for f in self.runs:
            f.close()
        self.runs = []
