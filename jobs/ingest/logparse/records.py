"""Lines -> records -> facts, and the status of every line.

A record is a line that starts a log message (`envelope.split` finds an envelope) plus the
continuation lines after it (exception text, stack frames). A line cut by a terminal hard
wrap (`... (state.change.l` + `ogger)`) is re-joined with the continuation that completes it.

Every line ends with exactly one status, so the summary reconciles
(`read = extracted + informational + ignored + unparsed`):

* extracted      a controller or state-change record that gave events or observations
* informational  a known controller template that carries nothing to replay
* ignored        not controller-related (other loggers, server.log lines, file comments)
* unparsed       looked controller-related but no template knows it: kept with its text

A broker's offset line (`jobs.ingest.logparse.offsets`: ISR shrinks, leader and follower starts, log
loads and truncations, the epoch cache, unclean elections) is extracted too, as an
`OffsetFact` in the record's `evidence`; one of those loggers' lines that looks like an
offset line but fits no format is unparsed. `writer` is the broker a line names as the one
writing it (`offsets.owners` tells each file's broker from them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from jobs.ingest.logparse import envelope, idents, known, patterns
from jobs.ingest.logparse.facts import BROKER_SIDE_KINDS, Fact
from jobs.ingest.logparse.offsets import idents as offset_idents
from jobs.ingest.logparse.offsets import parse as offsets
from jobs.ingest.logparse.offsets.facts import OffsetFact
from jobs.ingest.logparse.outcomes import failure_outcome
from statemachine.rows import FAILED

EXTRACTED = "extracted"
INFORMATIONAL = "informational"
IGNORED = "ignored"
UNPARSED = "unparsed"

# A continuation line with no record before it (start of a file or of a Spark split) that
# is recognisably a controller exception: it cannot be used on its own, so it is unparsed.
_CONTROLLER_EXCEPTION = re.compile(
    r"^(?:kafka\.common\.StateChangeFailedException|kafka\.common\.ControllerMovedException|"
    r"java\.lang\.IllegalStateException: (?:Replica|Partition) )"
)
_MAX_WRAP_JOIN = 3
OFFSET_UNKNOWN = "a broker offset line no known format reads (jobs.ingest.logparse.offsets)"
# log4j 1.x's JMX registration of a logger (`AbstractDynamicMBean.preRegister`), written
# under the logger being registered (`state.change.logger` too): log4j's, not Kafka's.
_LOG4J_JMX = re.compile(r"preRegister called\. Server=\S*, name=log4j:")


class Record(NamedTuple):
    line: int  # number of the record's first line (as counted by the caller)
    n_lines: int  # lines in the record (header, joined wrap tails, continuations)
    status: str
    ts: str | None  # timestamp text as logged
    observed_by: str  # controller | broker
    facts: list[Fact]
    text: str  # the record's text (kept for unparsed records)
    reason: str | None
    evidence: tuple[OffsetFact, ...] = ()  # what an offset line says (`logparse.offsets`)
    writer: int | None = None  # the broker the line names as its writer
    header: str = ""  # the record's first line, as read (an offset line's proof)


def classify(env: envelope.Envelope, conts: list[str]) -> tuple[str, str, list[Fact], str | None]:
    """(status, observed_by, facts, reason) of one record."""
    msg = env.msg
    if _LOG4J_JMX.match(msg):
        return IGNORED, idents.CONTROLLER, [], None
    if (env.logger is not None and not idents.is_controller_logger(env.logger)
            and not msg.startswith(("[Controller", "[Broker id="))):
        return IGNORED, idents.CONTROLLER, [], None  # another logger: the common fast path
    ident, body = idents.strip(msg)
    observed_by = idents.BROKER if ident.role == idents.BROKER else idents.CONTROLLER
    related = idents.is_controller_logger(env.logger) or ident.role in (
        idents.CONTROLLER, idents.BROKER)
    if not related:
        return IGNORED, observed_by, [], None
    if env.logger is None:
        # Every layout Kafka ships names the logger: a controller line whose logger cannot be
        # read is in a layout we do not know, and whatever the message seems to say (a
        # `(logger:66)` left in it reads as broker 66) is not used.
        return UNPARSED, observed_by, [], "the logger of this controller line cannot be read"
    facts = patterns.extract(body, ident)
    if facts is not None:
        if not facts:
            return INFORMATIONAL, observed_by, [], None
        if facts[0].kind in BROKER_SIDE_KINDS:
            observed_by = idents.BROKER
        if any(f.outcome == FAILED for f in facts):
            facts = _failure_details(facts, conts)
        return EXTRACTED, observed_by, facts, None
    if known.is_known(body):
        return INFORMATIONAL, observed_by, [], None
    return UNPARSED, observed_by, [], "no known template matches this controller line"


def _failure_details(facts: list[Fact], conts: list[str]) -> list[Fact]:
    """The failed facts of a record with the exception's first line as `detail`; a failed
    transition's outcome refined to `rejected` when that exception (or, without one, the
    transition matrix) says the matrix refused it (`outcomes.failure_outcome`)."""
    detail = envelope.continuation_text(conts[0]).strip() if conts else None
    out: list[Fact] = []
    for f in facts:
        if f.outcome == FAILED:
            if f.kind in ("partition_transition", "replica_transition"):
                f = f._replace(outcome=failure_outcome(f.kind, f.from_state, f.to_state,
                                                       detail))
            if detail is not None:
                f = f._replace(detail=detail)
        out.append(f)
    return out


# A line whose layout no envelope knows but which carries a controller logger or logIdent:
# it is reported, never swallowed as the continuation of the record before it.
_CONTROLLER_MARK = re.compile(
    r"\((?:state\.change\.logger|kafka\.controller\.[A-Za-z0-9_.$]+)(?::\d+)?\)|"
    r"\[(?:Controller id=\d+|Broker id=\d+)[\] ]"
)


def _finish(start: int, header: str, env: envelope.Envelope, conts: list[str]
            ) -> Iterator[Record]:
    strays = [k for k, c in enumerate(conts) if _CONTROLLER_MARK.search(c)]
    if strays:
        first = strays[0]
        joined = header + envelope.continuation_text(conts[first]) if first == 0 else None
        e2 = envelope.split(joined) if joined is not None else None
        if e2 is not None and e2.logger is not None:  # a hard wrap: handled below
            strays = strays[1:]
        for k in strays:
            yield Record(start + k + 1, 1, UNPARSED, None, idents.CONTROLLER, [], conts[k],
                         "controller line in an unknown layout")
        keep = set(range(len(conts))) - set(strays)
        conts = [c for k, c in enumerate(conts) if k in keep]
    yield _record(start, header, env, conts)


def _record(start: int, header: str, env: envelope.Envelope, conts: list[str]) -> Record:
    n = 1 + len(conts)
    joined = 0
    if env.logger is None and conts and (env.truncated_logger or env.ts is not None):
        text = header
        for k in range(min(_MAX_WRAP_JOIN, len(conts))):
            text += envelope.continuation_text(conts[k])
            env2 = envelope.split(text)
            if env2 is not None and env2.logger is not None:
                env, header, joined = env2, text, k + 1
                break
    rest = conts[joined:]
    status, by, facts, reason = classify(env, rest)
    evidence: tuple[OffsetFact, ...] = ()
    found = offsets.parse(env.logger, env.msg)
    if found is offsets.UNKNOWN:
        if status == IGNORED:
            status, by, reason = UNPARSED, idents.BROKER, OFFSET_UNKNOWN
    elif found is not None:
        evidence = (found,)
        if status in (IGNORED, INFORMATIONAL):
            status, by = EXTRACTED, idents.BROKER
    text = header if not rest else header + "\n" + "\n".join(rest)
    writer = evidence[0].broker_id if evidence else None
    return Record(start, n, status, env.ts, by, facts,
                  text if status == UNPARSED else "", reason, evidence,
                  offset_idents.writer(env.msg) if writer is None else writer,
                  header if evidence else "")


def _orphan(line_no: int, line: str) -> Record:
    text = envelope.continuation_text(line)
    if _CONTROLLER_EXCEPTION.match(text):
        return Record(line_no, 1, UNPARSED, None, idents.CONTROLLER, [], line,
                      "continuation line without its record (start of file or split)")
    return Record(line_no, 1, IGNORED, None, idents.CONTROLLER, [], "", None)


def records(lines: Iterable[str], first_line: int = 1) -> Iterator[Record]:
    """Group numbered lines into records; lines are numbered from `first_line`."""
    start = -1
    header = ""
    env: envelope.Envelope | None = None
    conts: list[str] = []
    n = first_line - 1
    for n, line in enumerate(lines, first_line):  # noqa: B007
        if line.startswith("#"):
            # A comment (a file header added by whoever collected the log); log4j never
            # writes one, and a quoted log line inside it is not a record.
            yield Record(n, 1, IGNORED, None, idents.CONTROLLER, [], "", None)
            continue
        e = envelope.split(line)
        if e is None:
            if env is None:
                yield _orphan(n, line)
            else:
                conts.append(line)
            continue
        if env is not None:
            yield from _finish(start, header, env, conts)
        start, header, env, conts = n, line, e, []
    if env is not None:
        yield from _finish(start, header, env, conts)


class Timed(NamedTuple):
    record: Record
    ts: int | None  # the record's own timestamp (epoch microseconds), None if it has none
    last_ts: int | None  # the latest timestamp so far, carried to records without one
    first_ts: int | None  # the first timestamp of the walk so far


def timed_records(lines: Iterable[str], clock: envelope.Clock, first_line: int = 1
                  ) -> Iterator[Timed]:
    """`records` with their timestamps in `clock`'s zone, and the timestamps a record
    without one inherits: shared by the pure pipeline and the Spark blocks."""
    first_ts: int | None = None
    last_ts: int | None = None
    for rec in records(lines, first_line):
        ts = clock.micros(rec.ts) if rec.ts else None
        if ts is not None:
            last_ts = ts
            if first_ts is None:
                first_ts = ts
        yield Timed(rec, ts, last_ts, first_ts)
