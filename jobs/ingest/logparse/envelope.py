"""Line envelopes: strip what log4j, docker compose, test harnesses and grep put around a
Kafka log message, and read the timestamp. The default layout is log4j's
`[%d] %p %m (%c)%n` of Kafka's `config/log4j.properties` (every release 0.8 to 3.9):
`[2023-10-01 14:41:35,289] INFO <message> (<logger name>)`, with no time zone marker.

`split(line)` returns an `Envelope` for a line that starts a log record, or None for a
continuation line (exception text, stack frames, the tail of a hard-wrapped line, a
`# comment`). Continuations are attached to the record before them by `records.py`.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime
from typing import NamedTuple
from zoneinfo import ZoneInfo

LEVELS = r"TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL"
_TS = r"\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?"

# 1.1 default layout `[%d] %p %m (%c)%n`, found anywhere in the line so that any prefix
# (docker compose `kafka | `, grep `file:`, a test harness `... STDOUT: `) falls away.
_DEFAULT = re.compile(rf"\[(?P<ts>{_TS})\] (?P<level>{LEVELS}) (?P<rest>.*)$")
# log4j2 / logback test layouts: `2024-03-18 05:33:09 ERROR state.change.logger:76 - msg`,
# optionally with a `[thread]` before the level.
_LOG4J2 = re.compile(
    rf"^(?P<ts>{_TS})\s+(?:\[[^\]]*\]\s+)?(?P<level>{LEVELS})\s+"
    r"(?P<logger>[A-Za-z0-9_.$]+)(?::\d+)?\s+-\s(?P<msg>.*)$"
)
# LinkedIn fork: `2022/07/27 17:34:53.348 [KafkaController] msg` (level optional).
_BRACKET_LOGGER = re.compile(
    rf"^(?P<ts>{_TS})\s+(?:(?P<level>{LEVELS})\s+)?\[(?P<logger>[A-Za-z0-9_.$]+)\]\s(?P<msg>.*)$"
)
# Default layout without the brackets, as Strimzi and other Kubernetes images write it:
# `2023-10-01 14:41:35,289 INFO msg (logger) [thread]`.
_BARE_TS = re.compile(rf"^(?P<ts>{_TS}) (?P<level>{LEVELS})\s+(?P<rest>.*?)(?: \[[^\[\]]*\])?\s*$")
# Quotes without a timestamp: `INFO [Controller 1]: Broker failure callback for 4 (kafka...)`.
_NO_TS = re.compile(rf"^(?P<level>{LEVELS}) (?P<rest>.*)$")
_LOGGER_AT_LINE = re.compile(r"(?P<logger>[A-Za-z0-9_.$]+)(?::\d+)?")
_LOGGER_CUT = re.compile(r"[A-Za-z0-9_.$]+(?::\d*)?")
# A message quoted bare (no timestamp, no level) but with a controller logIdent.
_BARE_IDENT = re.compile(
    r"^\[(?:Controller[ -]|Broker id=|PartitionStateMachine |ReplicaStateMachine |"
    r"Topic Deletion Manager |Channel manager |RequestSendThread |ControllerEventThread |"
    r"Partition state machine |Replica state machine |\w+Listener on |\w+Selector\])"
)
# Prefixes in front of continuation lines.
_CONT_PREFIX = re.compile(r"^(?:[A-Za-z0-9_.-]+\s*\| |.*? - STD(?:OUT|ERR): )")


class Envelope(NamedTuple):
    ts: str | None  # the timestamp text as written
    level: str | None
    logger: str | None  # None: the layout has no logger, or a hard wrap cut it off
    msg: str
    truncated_logger: bool  # the line ends inside `(logger` (terminal hard wrap)


def _split_rest(rest: str) -> tuple[str, str | None, bool]:
    """`msg (logger)` or `msg (logger:line)` -> (msg, logger). The message may itself
    contain parentheses, so the logger is the last `(...)` at the end of the line (log4j's
    `%m (%c)`, or `%m (%c:%L)` with the caller's line number as Kafka's own test
    `log4j.properties` and `connect-log4j.properties` write it)."""
    rest = rest.rstrip()
    if rest.endswith(")"):
        i = rest.rfind(" (")
        m = _LOGGER_AT_LINE.fullmatch(rest, i + 2, len(rest) - 1) if i >= 0 else None
        if m is not None:
            return rest[:i], m.group("logger"), False
    # `... (state.change.l` or `... (kafka.controller.KafkaController:6`: a hard wrap inside
    # the logger name or its line number.
    i = rest.rfind(" (")
    if i >= 0 and _LOGGER_CUT.fullmatch(rest, i + 2) and "." in rest[i + 2 :]:
        return rest[:i], None, True
    return rest, None, False


def split(line: str) -> Envelope | None:
    if not line:
        return None
    if line[0] == "[":
        m = _DEFAULT.match(line)
    elif "] " in line:
        m = _DEFAULT.search(line)
    else:
        m = None
    if m is not None:
        msg, logger, cut = _split_rest(m.group("rest"))
        return Envelope(m.group("ts"), m.group("level"), logger, msg, cut)
    c = line[0]
    if c.isdigit():
        m = _LOG4J2.match(line)
        if m is not None:
            return Envelope(m.group("ts"), m.group("level"), m.group("logger"),
                            m.group("msg").rstrip(), False)
        m = _BRACKET_LOGGER.match(line)
        if m is not None:
            return Envelope(m.group("ts"), m.group("level"), m.group("logger"),
                            m.group("msg").rstrip(), False)
        m = _BARE_TS.match(line)
        if m is not None:
            msg, logger, cut = _split_rest(m.group("rest"))
            return Envelope(m.group("ts"), m.group("level"), logger, msg, cut)
        return None
    if c in "TDIWEF":
        m = _NO_TS.match(line)
        if m is not None:
            msg, logger, cut = _split_rest(m.group("rest"))
            return Envelope(None, m.group("level"), logger, msg, cut)
        return None
    if c == "[" and _BARE_IDENT.match(line):
        msg, logger, cut = _split_rest(line)
        return Envelope(None, None, logger, msg, cut)
    return None


def continuation_text(line: str) -> str:
    """A continuation line without the compose / harness prefix in front of it."""
    m = _CONT_PREFIX.match(line)
    return line[m.end():] if m else line


class Clock:
    """Timestamp text -> epoch microseconds (UTC). Text without a zone is read in `tz`."""

    def __init__(self, tz: str = "UTC") -> None:
        self.zone = None if tz.upper() in ("UTC", "Z", "GMT") else ZoneInfo(tz)
        self._hour: dict[str, int] = {}
        self._second: dict[str, int] = {}

    def micros(self, ts: str) -> int:
        # Lines come in bursts within one second: cache the second, parse only the fraction.
        if len(ts) == 23 and ts[19] in ",.":
            base_us = self._second.get(ts[:19])
            if base_us is None:
                base_us = self._second[ts[:19]] = self._micros(ts[:19])
                if len(self._second) > 4096:
                    self._second.clear()
            return base_us + int(ts[20:23]) * 1000
        return self._micros(ts)

    def _micros(self, ts: str) -> int:
        hour_key = ts[:13]
        base = self._hour.get(hour_key)
        if base is None:
            y, mo, d, h = int(ts[0:4]), int(ts[5:7]), int(ts[8:10]), int(ts[11:13])
            base = calendar.timegm((y, mo, d, h, 0, 0))
            if self.zone is not None:
                off = datetime(y, mo, d, h, tzinfo=self.zone).utcoffset()
                base -= int(off.total_seconds()) if off is not None else 0
            self._hour[hour_key] = base
        us = (base + int(ts[14:16]) * 60 + int(ts[17:19])) * 1_000_000
        rest = ts[19:]
        if not rest:
            return us
        if rest[0] in ",.":
            j = 1
            while j < len(rest) and rest[j].isdigit():
                j += 1
            frac = rest[1:j]
            us += int((frac + "000000")[:6])
            rest = rest[j:]
        if rest:  # an explicit zone wins over `tz`: undo the hour's offset, apply this one
            if self.zone is not None:
                y, mo, d, h = int(ts[0:4]), int(ts[5:7]), int(ts[8:10]), int(ts[11:13])
                off = datetime(y, mo, d, h, tzinfo=self.zone).utcoffset()
                us += int(off.total_seconds()) * 1_000_000 if off is not None else 0
            if rest != "Z":
                sign = -1 if rest[0] == "+" else 1
                hh, mm = int(rest[1:3]), int(rest[-2:])
                us += sign * (hh * 3600 + mm * 60) * 1_000_000
        return us
