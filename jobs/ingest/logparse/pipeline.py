"""The whole ingest over local files in one process (tests, small logs, the reference the
Spark job is checked against). Same steps as `jobs.ingest`: read lines, group records,
classify, sort facts by (timestamp, file, line), assemble events and observations.
"""

from __future__ import annotations

import fnmatch
import gzip
import io
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from jobs.ingest.logparse import records as R
from jobs.ingest.logparse.assemble import EventRow, ObservedRow, assemble, order_key
from jobs.ingest.logparse.envelope import Clock
from jobs.ingest.logparse.facts import Located
from jobs.ingest.logparse.offsets.facts import OffsetFact
from jobs.ingest.logparse.offsets.owners import file_owners
from jobs.ingest.logparse.offsets.rows import EvidenceRow, evidence_row


@dataclass
class FileSummary:
    file: str
    lines_read: int = 0
    lines_extracted: int = 0
    lines_informational: int = 0
    lines_ignored: int = 0
    lines_unparsed: int = 0

    def add(self, status: str, n: int) -> None:
        self.lines_read += n
        if status == R.EXTRACTED:
            self.lines_extracted += n
        elif status == R.INFORMATIONAL:
            self.lines_informational += n
        elif status == R.IGNORED:
            self.lines_ignored += n
        else:
            self.lines_unparsed += n


@dataclass
class UnparsedRow:
    file: str
    line: int
    ts: int | None
    text: str
    reason: str


@dataclass
class IngestResult:
    events: list[EventRow]
    observations: list[ObservedRow]
    summary: list[FileSummary]
    unparsed: list[UnparsedRow] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files of a folder not read (`wanted`)
    evidence: list[EvidenceRow] = field(default_factory=list)  # offset lines, file order
    owners: dict[str, int] = field(default_factory=dict)  # file -> the broker that wrote it


@dataclass
class FileOffsets:
    """A file's offset lines (line, timestamp, fact, text) and the brokers it names."""

    lines: list[tuple[int, int, OffsetFact, str]] = field(default_factory=list)
    writers: set[int] = field(default_factory=set)


# File names read when a folder is given (files named explicitly are always read): Kafka's
# logs and their rotations, compressed copies, text dumps, and KRaft metadata snapshots
# (`*.checkpoint`; its log segments are `*.log`). Anything else in a folder (a README, a
# catalogue, a segment's `.index`) is skipped and reported, not parsed as a log.
DEFAULT_INCLUDE: tuple[str, ...] = ("*.log", "*.log.*", "*.gz", "*.txt", "*.out",
                                    "*.checkpoint")


def wanted(name: str, include: Iterable[str] = DEFAULT_INCLUDE) -> bool:
    """Whether a file found in a folder is read: not hidden (`.`, `_`, as Spark), and its
    name matches one of the `include` globs."""
    if name.startswith((".", "_")):
        return False
    return any(fnmatch.fnmatchcase(name, g) for g in include)


def list_files(paths: Iterable[str], include: Iterable[str] = DEFAULT_INCLUDE,
               skipped: list[str] | None = None) -> list[str]:
    """Files under `paths` (folders recursively, one folder per broker), sorted. Files of a
    folder that `wanted` refuses are appended to `skipped`."""
    include = tuple(include)
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
                for f in files:
                    if wanted(f, include):
                        out.append(os.path.join(root, f))
                    elif skipped is not None:
                        skipped.append(os.path.join(root, f))
        else:
            out.append(p)
    return sorted(set(out))


def display_names(files: list[str]) -> dict[str, str]:
    """File -> name used in `source` ("file:line"): the path below the files' common folder."""
    if not files:
        return {}
    absolute = [os.path.abspath(f) for f in files]
    root = os.path.commonpath([os.path.dirname(a) for a in absolute])
    return {f: os.path.relpath(a, root) for f, a in zip(files, absolute, strict=True)}


def read_lines(path: str) -> Iterator[str]:
    """Lines without their terminator; `\\n`, `\\r\\n` and `\\r` all end a line (as in Spark's
    text source). Gzip is recognised by its magic bytes."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    raw = gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")  # noqa: SIM115
    with raw, io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=None) as text:
        for line in text:
            yield line[:-1] if line.endswith("\n") else line


def parse_file(lines: Iterable[str], name: str, clock: Clock,
               summary: FileSummary, unparsed: list[UnparsedRow],
               offsets: FileOffsets | None = None) -> list[tuple[Located, int, int]]:
    """(located fact, effective timestamp, index in record) per fact of one file.

    A record without a timestamp (a quoted line, a blog excerpt) takes the last timestamp
    before it in its file, else the first one of the file, else 0 (1970-01-01 UTC): it
    keeps its place in its file's order.
    """
    out: list[tuple[Located, int | None, int]] = []
    first_ts: int | None = None
    for rec, ts, last_ts, first_seen in R.timed_records(lines, clock):
        first_ts = first_seen
        summary.add(rec.status, rec.n_lines)
        if rec.status == R.UNPARSED:
            unparsed.append(UnparsedRow(name, rec.line, ts, rec.text, rec.reason or ""))
        for i, f in enumerate(rec.facts):
            out.append((Located(name, rec.line, ts, rec.observed_by, f), last_ts, i))
        if offsets is not None:
            if rec.writer is not None:
                offsets.writers.add(rec.writer)
            for fact in rec.evidence:
                offsets.lines.append((rec.line, last_ts if last_ts is not None else -1, fact,
                                      rec.header))
    if offsets is not None:  # lines before the file's first timestamp take that one
        offsets.lines = [(n, ts if ts >= 0 else effective_ts(None, first_ts), f, t)
                         for n, ts, f, t in offsets.lines]
    return [(loc, effective_ts(carried, first_ts), i) for loc, carried, i in out]


def effective_ts(carried: int | None, file_first: int | None) -> int:
    return carried if carried is not None else file_first if file_first is not None else 0


def ingest(paths: Iterable[str], tz: str = "UTC", assume_controller: int | None = None,
           assume_live: Iterable[int] | None = None,
           include: Iterable[str] = DEFAULT_INCLUDE) -> IngestResult:
    skipped: list[str] = []
    files = list_files(paths, include, skipped)
    names = display_names(files)
    clock = Clock(tz)
    summaries: list[FileSummary] = []
    unparsed: list[UnparsedRow] = []
    allfacts: list[tuple[Located, int, int]] = []
    offsets: dict[str, FileOffsets] = {}
    for path in files:
        s = FileSummary(names[path])
        summaries.append(s)
        offsets[names[path]] = FileOffsets()
        allfacts += parse_file(read_lines(path), names[path], clock, s, unparsed,
                               offsets[names[path]])
    allfacts.sort(key=lambda x: order_key(x[0].file, x[0].line, x[1], x[2]))
    events, observations = assemble(((loc, ts) for loc, ts, _ in allfacts),
                                    assume_controller, assume_live)
    owners = file_owners({name: o.writers for name, o in offsets.items()})
    evidence = [evidence_row(name, n, ts, fact, text, owners)
                for name in sorted(offsets) for n, ts, fact, text in offsets[name].lines]
    return IngestResult(events, observations, summaries, unparsed, sorted(skipped),
                        evidence, owners)
