"""Flat rows for the Spark job: one split ("block") of a file's lines -> parsed rows, and
sorted facts -> event and observation rows. Pure Python; `jobs.ingest` only moves
these tuples in and out of Arrow batches.

A block is numbered from line 0: Spark does not know how many lines came before a split,
so every block also yields one count row, from which the driver derives line offsets, the
timestamp carried into the block and the per-file summary.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from jobs.ingest.logparse import records as R
from jobs.ingest.logparse.assemble import Assembler
from jobs.ingest.logparse.envelope import Clock
from jobs.ingest.logparse.facts import Fact, Located

__all__ = ["Assembler", "Fact", "Located", "assemble_rows", "parse_block"]

FACT, UNPARSED, COUNT = "F", "U", "C"

FACT_FIELDS = Fact._fields
PARSED_COLUMNS: tuple[str, ...] = (
    "rtype", "path", "block", "rline", "fidx", "ts", "ts_fill", "observed_by",
    *FACT_FIELDS,
    "text", "reason",
    "n_lines", "n_extracted", "n_informational", "n_ignored", "n_unparsed",
    "first_ts", "last_ts",
)
_NF = len(FACT_FIELDS)
_NONE_FACT = (None,) * _NF
_NONE_TAIL_COUNTS = (None,) * 7


def parse_block(path: str, block: int, lines: Iterable[str], clock: Clock
                ) -> Iterator[tuple[Any, ...]]:
    counts = {R.EXTRACTED: 0, R.INFORMATIONAL: 0, R.IGNORED: 0, R.UNPARSED: 0}
    n_lines = 0
    first_ts: int | None = None
    last_ts: int | None = None
    for rec, ts, last_ts, first_seen in R.timed_records(lines, clock, first_line=0):
        first_ts = first_seen
        counts[rec.status] += rec.n_lines
        n_lines += rec.n_lines
        if rec.status == R.UNPARSED:
            yield (UNPARSED, path, block, rec.line, None, ts, last_ts, rec.observed_by,
                   *_NONE_FACT, rec.text, rec.reason, *_NONE_TAIL_COUNTS)
        for i, f in enumerate(rec.facts):
            yield (FACT, path, block, rec.line, i, ts, last_ts, rec.observed_by, *f,
                   None, None, *_NONE_TAIL_COUNTS)
    yield (COUNT, path, block, None, None, None, None, None, *_NONE_FACT, None, None,
           n_lines, counts[R.EXTRACTED], counts[R.INFORMATIONAL], counts[R.IGNORED],
           counts[R.UNPARSED], first_ts, last_ts)


# Sorted facts in: (file, line, fidx, ts_eff, observed_by, *fact fields).
SORTED_COLUMNS: tuple[str, ...] = ("file", "line", "fidx", "ts_eff", "observed_by",
                                   *FACT_FIELDS)
EVENT, OBSERVATION = "E", "O"


def assemble_rows(rows: Iterable[tuple[Any, ...]], assume_controller: int | None = None,
                  assume_live: Iterable[int] | None = None
                  ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """(events, observations) as tuples of `EventRow` / `ObservedRow` fields."""
    a = Assembler(assume_controller, assume_live)
    for file, line, _fidx, ts, observed_by, *fact in rows:
        f = Fact(*fact)
        a.add(Located(file, line, None, observed_by, f), ts)
    return [tuple(e) for e in a.finish()], [tuple(o) for o in a.observations]
