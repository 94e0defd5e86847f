"""Every other template the controller and state-change loggers write (0.8.2 to 3.9).

Lines that match a template here are recognised but carry nothing the replay needs (the
auto-rebalance check, connection notices, the failover checklist...): they count as used
informational lines, never as unparsed. The templates come from FORMATS.md's catalogues
(`catalogue.py`), compiled to regexes: literal text is matched exactly, every interpolated
`{expr}` / `%d` is a lazy wildcard. A template that the extraction cut inside an expression
is matched up to the cut.
"""

from __future__ import annotations

import re

from jobs.logparse.catalogue import TEMPLATES

# Thread lifecycle lines of the controller's threads (kafka.utils.ShutdownableThread, whose
# lines carry the thread's logger), and a few call sites the catalogue's extraction missed.
EXTRA = (
    "Starting", "Stopped", "Stopping", "Shutting down", "Shutdown completed",
    "Stopped ", "Starting up.", "Startup complete.", "Shutting down.", "Shut down completely",
)


def _lit(text: str) -> str:
    # Empty collections render as nothing, so spaces around a value may collapse or double.
    return re.escape(text).replace("\\ ", "\\s*")


def _to_regex(template: str) -> str | None:
    """Template -> regex source, or None if it is nothing but placeholders."""
    cut = template.find("{)")
    if cut >= 0:
        template = template[:cut]
    parts: list[str] = []
    literal: list[str] = []
    i, n = 0, len(template)
    open_end = False
    while i < n:
        c = template[i]
        if c == "$" and i + 1 < n and template[i + 1] == "{":
            i += 1
            continue
        if c == "{":
            depth, j = 0, i
            while j < n:
                if template[j] == "{":
                    depth += 1
                elif template[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            expr = template[i + 1 : j]
            parts.append(_lit("".join(literal)))
            literal = []
            if j >= n or expr.count("(") != expr.count(")"):
                open_end = True  # the extraction cut the template inside this expression
                break
            parts.append("(?:.*?)")
            i = j + 1
            continue
        if c == "%" and i + 1 < n and template[i + 1] in "sdf":
            parts.append(_lit("".join(literal)))
            literal = []
            parts.append("(?:.*?)")
            i += 2
            continue
        literal.append(c)
        i += 1
    if literal:
        parts.append(_lit("".join(literal).rstrip()))
    text = "".join(p for p in parts if p != "(?:.*?)")
    if len(re.sub(r"\\.", "x", text).strip()) < 4:
        return None
    body = "".join(parts)
    return body + (".*" if open_end else r".*")


def _key(template: str) -> str | None:
    """First word of a template that starts with literal text (the dispatch key)."""
    if not template or template[0] in "{%$":
        return None
    return template.split(" ", 1)[0]


def _build() -> tuple[dict[str, re.Pattern[str]], re.Pattern[str]]:
    buckets: dict[str, list[str]] = {}
    wild: list[str] = []
    seen: set[str] = set()
    for _logger, _levels, _first, _last, template in TEMPLATES:
        rx = _to_regex(template)
        if rx is None or rx in seen:
            continue
        seen.add(rx)
        key = _key(template)
        (buckets.setdefault(key, []) if key else wild).append(rx)
    for t in EXTRA:
        rx = re.escape(t.strip()) + r"\s*$"
        buckets.setdefault(t.split(" ", 1)[0], []).append(rx)
    compiled = {k: re.compile("|".join(f"(?:{r})" for r in v)) for k, v in buckets.items()}
    return compiled, re.compile("|".join(f"(?:{r})" for r in wild))


_BUCKETS, _WILD = _build()


def is_known(msg: str) -> bool:
    """True if `msg` (logIdent already stripped) is a known controller/state-change line."""
    key = msg.split(" ", 1)[0]
    rx = _BUCKETS.get(key)
    if rx is not None and rx.match(msg):
        return True
    return _WILD.match(msg) is not None
