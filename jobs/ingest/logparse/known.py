"""Every other template the controller and state-change loggers write (0.8.2 to 3.9).

Lines that match a template here are recognised but carry nothing the replay needs (the
auto-rebalance check, connection notices, the failover checklist...): they count as used
informational lines, never as unparsed. The templates are every log call site of the
controller package and the state-change logger (`catalogue.py`), and those of other
packages that log through the controller's logger (`BORROWED`), matched as literal chunks
in order: literal text exactly, every interpolated `{expr}` / `%d` is a lazy wildcard. A
template that the extraction cut inside an expression is matched up to the cut.
"""

from __future__ import annotations

from jobs.ingest.logparse.catalogue import TEMPLATES

# Thread lifecycle lines of the controller's threads (RequestSendThread,
# ControllerEventThread: Kafka's ShutdownableThread, `kafka.utils.ShutdownableThread` up to
# 3.4 and `org.apache.kafka.server.util.ShutdownableThread` after, whose lines carry the
# thread's logger: `Starting`, `Shutting down`, the TRACE `shutdownInitiated latch count
# reached zero. Shutdown called.` (2.0+), `Stopped`, `Shutdown completed`, and `Error due
# to` before the exception's stack trace), and a few call sites the catalogue's extraction
# missed.
EXTRA = (
    "Starting", "Stopped", "Stopping", "Shutting down", "Shutdown completed",
    "shutdownInitiated latch count reached zero. Shutdown called.", "Error due to",
    "Stopped ", "Starting up.", "Startup complete.", "Shutting down.", "Shut down completely",
)


# Call sites outside the controller package that log through the controller's own logger,
# so their lines carry `kafka.controller.KafkaController` and its logIdent (the catalogue
# lists the controller package only). From 3.0 the controller hands out producer-id blocks
# (AllocateProducerIds, KIP-730): `KafkaController.processAllocateProducerIds` calls
# `ZkProducerIdManager.getNewProducerIdBlock(brokerId, zkClient, this)`
# (kafka/coordinator/transaction/ProducerIdManager.scala), which logs with the logger it is
# given; up to 2.8 that code logged under its own class. Same layout as `TEMPLATES`.
BORROWED: tuple[tuple[str, str, str, str, str], ...] = (
    ("class", "DEBUG", "3.0.0", "3.9.0",
     "Read current producerId block {currProducerIdBlock}, Zk path version {zkVersion}"),
    ("class", "FATAL", "3.0.0", "3.9.0",
     "Exhausted all producerIds as the next block's end producerId is will has exceeded long "
     "type limit (current block end producerId is {currProducerIdBlock.lastProducerId})"),
    ("class", "DEBUG", "3.0.0", "3.9.0",
     "There is no producerId block yet (Zk path version {zkVersion}), creating the first block"),
    ("class", "INFO", "3.0.0", "3.9.0",
     "Acquired new producerId block {newProducerIdBlock} by writing to Zk with path version "
     "{version}"),
)


def _chunks(template: str) -> tuple[bool, tuple[str, ...]] | None:
    """Template -> (starts with literal text, the literal chunks in order), or None if it is
    nothing but placeholders. A message matches when the chunks occur in it in order (the
    first at the start): every `{expr}` is a lazy wildcard. Matching by `str.find` instead of
    a regex of lazy wildcards keeps a long line from backtracking through every split."""
    cut = template.find("{)")
    if cut >= 0:
        template = template[:cut]
    chunks: list[str] = []
    literal: list[str] = []
    i, n = 0, len(template)
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
            chunks.append("".join(literal))
            literal = []
            expr = template[i + 1 : j]
            if j >= n or expr.count("(") != expr.count(")"):
                break  # the extraction cut the template inside this expression
            i = j + 1
            continue
        if c == "%" and i + 1 < n and template[i + 1] in "sdf":
            chunks.append("".join(literal))
            literal = []
            i += 2
            continue
        literal.append(c)
        i += 1
    else:
        chunks.append("".join(literal))
    anchored = not template.startswith(("{", "%s", "%d", "%f", "${"))
    # Empty collections render as nothing, so spaces around a value may collapse: match the
    # chunks without their outer spaces.
    kept = tuple(c.strip() for c in chunks if c.strip())
    if sum(len(c) for c in kept) < 4:
        return None
    return anchored, kept


def _key(template: str) -> str | None:
    """First word of a template that starts with literal text (the dispatch key)."""
    if not template or template[0] in "{%$":
        return None
    return template.split(" ", 1)[0]


Entry = tuple[bool, tuple[str, ...]]


def _build() -> tuple[dict[str, list[Entry]], list[Entry]]:
    buckets: dict[str, list[Entry]] = {}
    wild: list[Entry] = []
    seen: set[Entry] = set()
    for _logger, _levels, _first, _last, template in (*TEMPLATES, *BORROWED):
        entry = _chunks(template)
        if entry is None or entry in seen:
            continue
        seen.add(entry)
        key = _key(template)
        (buckets.setdefault(key, []) if key and entry[0] else wild).append(entry)
    for t in EXTRA:
        buckets.setdefault(t.split(" ", 1)[0], []).append((True, (t.strip(),)))
    return buckets, wild


def _matches(msg: str, entry: Entry) -> bool:
    anchored, chunks = entry
    if anchored:
        if not msg.startswith(chunks[0]):
            return False
        pos = len(chunks[0])
        rest = chunks[1:]
    else:
        pos, rest = 0, chunks
    for c in rest:
        i = msg.find(c, pos)
        if i < 0:
            return False
        pos = i + len(c)
    return True


_BUCKETS, _WILD = _build()


def is_known(msg: str) -> bool:
    """True if `msg` (logIdent already stripped) is a known controller/state-change line."""
    for entry in _BUCKETS.get(msg.split(" ", 1)[0], ()):
        if _matches(msg, entry):
            return True
    return any(_matches(msg, entry) for entry in _WILD)
