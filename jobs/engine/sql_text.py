"""Spark SQL text for the long validation expressions (`jobs.engine.keying`,
`jobs.engine.plausibility`): one `F.expr` is one py4j round trip, where the same expression
built with the Column API is one per column, literal and operator."""

from __future__ import annotations

from collections.abc import Iterable


def col(name: str) -> str:
    """A column reference (back-quoted: `partition` is a keyword)."""
    return f"`{name}`"


def quote(text: str) -> str:
    """A string literal. Backslash and quote are escaped; control characters (a NUL in a
    key) are written as `\\uXXXX`, which Spark's parser decodes."""
    out = []
    for ch in text:
        if ch in ("\\", "'"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def in_list(expr: str, values: Iterable[str]) -> str:
    return f"({expr} IN ({', '.join(quote(v) for v in values)}))"


def all_of(*conditions: str) -> str:
    return "(" + " AND ".join(f"({c})" for c in conditions) + ")"


def when(condition: str, message: str, *, literal: bool = True) -> str:
    """`F.when(condition, message)`: the message when the condition holds, else null.
    `message` is a literal's text, or an expression with `literal=False`."""
    return f"CASE WHEN {condition} THEN {quote(message) if literal else message} END"
