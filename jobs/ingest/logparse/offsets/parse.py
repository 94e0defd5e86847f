"""A broker's offset line -> `OffsetFact` (`formats.py` holds the formats).

`parse(logger, msg)` reads a message whose envelope is removed (`logparse.envelope`):

* an `OffsetFact` when a format of the catalogue reads it;
* `UNKNOWN` when it is a line of one of the loggers that write offsets and looks like an
  offset line (`formats.CANDIDATE`) but no format reads it: the ingest reports it as
  unparsed, it never guesses a figure out of it;
* None for every other line.

A line's topic-partition is in its body or in its logIdent (`[Log partition=t-0, ...]`);
its broker is the one the logIdent names, else None (`owners.py` then tells it from the
other lines of its file).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from jobs.ingest.logparse.offsets import formats, idents
from jobs.ingest.logparse.offsets.facts import OffsetFact, ReplicaOffsets
from jobs.ingest.logparse.values import ints, tp

UNKNOWN: Final = OffsetFact("unknown")

_BY_WORD: dict[str, list[tuple[formats.LineFormat, re.Pattern[str]]]] = {}
for _f, _rx in formats.COMPILED:
    _word = _f.example.split("] ", 1)[-1].split(" ", 1)[0] if _f.example.startswith("[") \
        else _f.example.split(" ", 1)[0]
    # The leader lines of 1.0-2.5 start with the partition itself: try them on any word.
    _BY_WORD.setdefault("*" if _f.name in ("leader_start@1.0", "leader_start@2.5")
                        else _word, []).append((_f, _rx))

_OOS = re.compile(r"\(brokerId: (\d+), endOffset: (-?\d+|unknown)")
_DIFF = re.compile(r"(\w+): (\[[^\]]*\]|[-\w]+) -> (\[[^\]]*\]|[-\w]+)")


def logger_name(logger: str | None) -> str | None:
    """The class of a logger name (`kafka.cluster.Partition` -> `Partition`)."""
    if logger is None:
        return None
    return logger if logger == "state.change.logger" else logger.rsplit(".", 1)[-1]


@lru_cache(maxsize=1024)
def is_offset_logger(logger: str | None) -> bool:
    """Whether the logger writes offset lines (a log has few loggers: cached)."""
    return logger_name(logger) in formats.LOGGERS


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.lstrip("-").isdigit() else None


def _ids(text: str | None) -> tuple[int, ...] | None:
    return ints(text) if text is not None else None


def _replicas(text: str | None) -> ReplicaOffsets | None:
    if text is None:
        return None
    return tuple((int(b), _int(o)) for b, o in _OOS.findall(text))


def _diff(fact: OffsetFact, text: str) -> OffsetFact:
    """`isr: [1] -> [2], leader: -1 -> 2, leaderEpoch: 5 -> 6, ...` (`PartitionRegistration.diff`):
    the fields an unclean change set; the ones it did not change are not printed."""
    found = {name: (old, new) for name, old, new in _DIFF.findall(text)}
    isr = found.get("isr")
    leader = found.get("leader")
    epoch = found.get("leaderEpoch")
    pe = found.get("partitionEpoch")
    return fact._replace(
        previous_isr=ints(isr[0]) if isr else None, isr=ints(isr[1]) if isr else None,
        previous_leader=_int(leader[0]) if leader else None,
        leader=_int(leader[1]) if leader else None,
        leader_epoch=_int(epoch[1]) if epoch else None,
        partition_epoch=_int(pe[1]) if pe else None)


def _fact(f: formats.LineFormat, m: re.Match[str], ident: idents.Ident) -> OffsetFact:
    g = m.groupdict()
    topic, partition = ident.topic, ident.partition
    named = g.get("tp") or g.get("name")
    if named:
        topic, partition = tp(named)
    elif g.get("topic") is not None:
        topic, partition = g["topic"], _int(g.get("partition"))
    elif g.get("partition") is not None:
        partition = _int(g["partition"])
    leo = _int(g.get("leo"))
    if g.get("largest") is not None:
        leo = int(g["largest"]) + 1
    offset = _int(g.get("offset"))
    if f.kind == "follower_start":
        offset = leo
    prev = g.get("prev_leader")
    fact = OffsetFact(
        f.kind, topic, partition, ident.broker_id,
        leader=_int(g.get("leader")) if g.get("leader") is not None else ident.leader,
        leader_epoch=_int(g.get("epoch")), isr=_ids(g.get("isr")), offset=offset,
        log_end_offset=leo, high_watermark=_int(g.get("hw")),
        previous_isr=_ids(g.get("prev_isr")), previous_leader=_int(prev),
        partition_epoch=_int(g.get("pe")), topic_id=g.get("topic_id"),
        replica_offsets=_replicas(g.get("oos")), format=f.name)
    if g.get("diff") is not None:
        fact = _diff(fact, g["diff"])
    return fact


def parse(logger: str | None, msg: str) -> OffsetFact | None:
    """The fact of an offset line, `UNKNOWN`, or None (module docstring)."""
    if not is_offset_logger(logger) or formats.CANDIDATE.search(msg) is None:
        return None
    ident, body = idents.split(msg)
    space = body.find(" ")
    tried = _BY_WORD.get(body if space < 0 else body[:space], ())
    if " starts at " in body:  # 1.0-2.5's leader line starts with its partition
        tried = (*tried, *_BY_WORD["*"])
    for f, rx in tried:
        m = rx.match(body)
        if m is not None:
            return _fact(f, m, ident)
    return UNKNOWN if formats.CANDIDATE.search(body) else None


__all__ = ["UNKNOWN", "OffsetFact", "is_offset_logger", "logger_name", "parse"]
