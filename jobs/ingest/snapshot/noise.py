"""Lines around a snapshot that carry no state: blank lines, comments, the tools' logging.

Ignoring is explicit: a line is dropped only when it matches one of these shapes. Logged
errors are not noise: a tool that logged ERROR may have printed an incomplete snapshot, so
those lines are reported as Unreadable.
"""

from __future__ import annotations

import re

# kafka-topics' own log4j layout (tools-log4j.properties: "[%d] %p %m (%c)%n").
_KAFKA_LOG4J = re.compile(
    r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}\] (TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL) "
)
# zookeeper-shell's log4j layout ("%d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m%n").
_ZOOKEEPER_LOG4J = re.compile(
    r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2},\d{3} .*?\b(TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\b"
)
_LOGGING_SETUP = re.compile(r"^(log4j:(WARN|INFO|ERROR)|SLF4J:) ")
_ERROR_LEVELS = frozenset({"ERROR", "FATAL"})


def is_blank_or_comment(text: str) -> bool:
    """Blank, or a `#` comment (neither tool prints one; operators annotate their pastes)."""
    stripped = text.strip()
    return not stripped or stripped.startswith("#")


def log_level(text: str) -> str | None:
    """The level of a log4j line of kafka-topics or zookeeper-shell, None for other lines."""
    for pattern in (_KAFKA_LOG4J, _ZOOKEEPER_LOG4J):
        match = pattern.match(text)
        if match:
            return match.group(1)
    if _LOGGING_SETUP.match(text):
        return "INFO"
    return None


def is_logged_error(level: str) -> bool:
    return level in _ERROR_LEVELS
