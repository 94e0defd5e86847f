"""The scenario file: `[[variant]]` tables and a `[sweep]` table, read and checked.

This module checks the file's shape only (known fields, types, names); what needs the log
(brokers, topics, seqs, times) is checked by `jobs.whatif.plan` against `jobs.whatif.facts`.
Both run before Spark starts. The format is described in docs/whatif.md.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from jobs.common.exitcodes import BadInput
from schemas.events import EVENT_COLUMNS
from schemas.whatif import BASELINE, VARIANT_SEPARATOR


class ScenarioError(BadInput):
    """The scenario cannot be run: the message says which variant and field, and why."""


# Field -> expected Python type of a `drop` entry (times become microseconds).
DROP_FIELDS: dict[str, type] = {
    "cluster": str, "event_type": str, "broker_id": int, "topic": str, "partition": int,
    "seq": int, "seq_from": int, "seq_to": int, "ts_from": datetime, "ts_to": datetime,
}
# An injected event: the event-log columns but seq (renumbered) and ts (from its place),
# plus where it goes (exactly one of `at`, `after_seq`) and an optional explicit `ts`.
INJECT_EVENT_FIELDS: dict[str, type] = {
    "cluster": str, "event_type": str, "broker_id": int, "topic": str, "partition": int,
    "replicas": list, "isr": list, "leader_epoch": int, "brokers": list, "error": str,
    "unclean_leader_election": bool, "source": str,
}
INJECT_FIELDS: dict[str, type] = {**INJECT_EVENT_FIELDS, "at": datetime, "after_seq": int,
                                  "ts": datetime, "for": timedelta}
# The injected events a `for` may follow with the broker's restart (a `BrokerStartup`).
RESTARTABLE = frozenset({"BrokerFailure", "ControlledShutdown"})
CONFIG_FIELDS: dict[str, type] = {
    "unclean_leader_election_enable": bool, "min_insync_replicas": int,
    "delete_topic_enable": bool,
    # KIP-966 on a KRaft log's 4.0 profile (jobs.whatif.kraft.plan); refused on a
    # ZooKeeper log.
    "eligible_leader_replicas_enable": bool,
}
TOPIC_CONFIG_FIELDS: dict[str, type] = {
    "unclean_leader_election_enable": bool, "min_insync_replicas": int,
}
VARIANT_FIELDS = frozenset({"name", "drop", "inject", "config", "topic_config"})
# Sweep kind -> the name of its variants' member ("broker", "rack", "pair").
SWEEP_KINDS: dict[str, str] = {
    "fail_each_broker": "broker", "shutdown_each_broker": "broker",
    "fail_each_rack": "rack", "fail_each_pair": "pair",
}
SWEEP_FIELDS: dict[str, type] = {"at": datetime, "for": timedelta, "max_variants": int}
# Above this many variants a `fail_each_pair` sweep is refused unless `max_variants` says.
DEFAULT_MAX_PAIR_VARIANTS = 200
TOP_FIELDS = frozenset({"variant", "sweep", "racks"})
DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d)\s*$")
DURATION_UNITS = {"ms": 1_000, "s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000,
                  "d": 86_400_000_000}
assert set(INJECT_EVENT_FIELDS) <= set(EVENT_COLUMNS)


@dataclass(frozen=True)
class Drop:
    """One `drop` entry: an event is removed when it matches every field given."""

    fields: tuple[tuple[str, Any], ...]  # (name, value), times as microseconds (UTC)

    def get(self, name: str) -> Any:
        return dict(self.fields).get(name)


@dataclass(frozen=True)
class Injection:
    """One `inject` entry: an event and where it goes (`at` a time or `after_seq`)."""

    fields: tuple[tuple[str, Any], ...]  # event columns given (lists as tuples)
    at: int | None  # microseconds (UTC)
    after_seq: int | None
    ts: int | None  # an explicit time for an `after_seq` event
    restart_after: int | None = None  # `for`: microseconds until the broker's restart
    # One controller event with the injection before it at the same place (the same seq):
    # the brokers of a rack or pair leave in one `BrokerChange`.
    together: bool = False

    def get(self, name: str) -> Any:
        return dict(self.fields).get(name)


@dataclass(frozen=True)
class VariantSpec:
    name: str
    drops: tuple[Drop, ...] = ()
    injections: tuple[Injection, ...] = ()
    config: tuple[tuple[str, Any], ...] = ()
    topic_config: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()


@dataclass(frozen=True)
class Sweep:
    """One `[sweep]` entry: one variant per member (broker, rack or pair) and time."""

    kind: str  # a key of SWEEP_KINDS
    at: tuple[int, ...]  # microseconds; the sweep is made once per time
    restart_after: int | None = None  # `for` (microseconds)
    max_variants: int = DEFAULT_MAX_PAIR_VARIANTS


@dataclass(frozen=True)
class Scenario:
    variants: tuple[VariantSpec, ...]
    sweeps: tuple[Sweep, ...] = ()
    racks: tuple[tuple[int, str], ...] = ()  # `[racks]`: broker -> rack (broker.rack)


def micros(value: datetime) -> int:
    """A TOML or ISO time as microseconds since the epoch; a time without zone is UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def duration(where: str, name: str, value: Any) -> int:
    """A duration ("90s", "15m", "2h", "1d", "500ms") as microseconds, above zero."""
    match = DURATION.match(value) if isinstance(value, str) else None
    if match is None or int(match.group(1)) == 0:
        raise ScenarioError(f"{where}: {name} = {value!r} is not a duration above zero "
                            "(e.g. \"15m\", \"90s\", \"2h\")")
    return int(match.group(1)) * DURATION_UNITS[match.group(2)]


def _typed(where: str, name: str, value: Any, expected: type) -> Any:
    """`value` checked against `expected` (bool is not an int; a time may be a string)."""
    if expected is timedelta:
        return duration(where, name, value)
    if expected is datetime:
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value)
            except ValueError:
                raise ScenarioError(f"{where}: {name} = {value!r} is not an ISO time "
                                    "(e.g. 2026-11-01T02:10:00Z)") from None
        if not isinstance(value, datetime):
            raise ScenarioError(f"{where}: {name} must be a time, not {value!r}")
        return micros(value)
    if expected is list:
        ok = isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value)
        if not ok:
            raise ScenarioError(f"{where}: {name} must be a list of broker ids")
        return tuple(value)
    ok = isinstance(value, expected) and (expected is bool or not isinstance(value, bool))
    if not ok:
        raise ScenarioError(f"{where}: {name} must be {expected.__name__}, not {value!r}")
    return value


def _fields(where: str, table: Any, known: Mapping[str, type]) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise ScenarioError(f"{where} must be a table")
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ScenarioError(f"{where}: unknown field(s) {unknown}; known: {sorted(known)}")
    return {k: _typed(where, k, v, known[k]) for k, v in table.items()}


def _entries(where: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ScenarioError(f"{where} must be a list of tables")
    return value


def _drop(where: str, table: Any) -> Drop:
    fields = _fields(where, table, DROP_FIELDS)
    if not fields:
        raise ScenarioError(f"{where}: an empty drop entry would drop every event")
    for low, high in (("seq_from", "seq_to"), ("ts_from", "ts_to")):
        if low in fields and high in fields and fields[low] > fields[high]:
            raise ScenarioError(f"{where}: {low} is after {high}")
    return Drop(tuple(sorted(fields.items())))


def _injection(where: str, table: Any) -> Injection:
    fields = _fields(where, table, INJECT_FIELDS)
    at, after_seq, ts = fields.pop("at", None), fields.pop("after_seq", None), \
        fields.pop("ts", None)
    restart_after = fields.pop("for", None)
    if (at is None) == (after_seq is None):
        raise ScenarioError(f"{where}: give exactly one of at, after_seq")
    if at is not None and ts is not None:
        raise ScenarioError(f"{where}: ts goes with after_seq; an `at` event is at `at`")
    if "event_type" not in fields:
        raise ScenarioError(f"{where}: event_type is required")
    if restart_after is not None and fields["event_type"] not in RESTARTABLE:
        raise ScenarioError(f"{where}: for restarts a broker; it goes with "
                            f"{' or '.join(sorted(RESTARTABLE))}")
    return Injection(tuple(sorted(fields.items())), at, after_seq, ts, restart_after)


def _topic_config(where: str, table: Any) -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
    if not isinstance(table, dict):
        raise ScenarioError(f"{where} must be a table of topics")
    return tuple(
        (topic, tuple(sorted(_fields(f"{where}.{topic}", settings,
                                     TOPIC_CONFIG_FIELDS).items())))
        for topic, settings in sorted(table.items())
    )


def check_name(where: str, name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ScenarioError(f"{where}: name must be a non-empty string")
    if name == BASELINE:
        raise ScenarioError(f"{where}: name {BASELINE!r} is reserved for the unedited log")
    if VARIANT_SEPARATOR in name or "/" in name:
        raise ScenarioError(f"{where}: name {name!r} holds a reserved character")
    return name


def _variant(index: int, table: Any) -> VariantSpec:
    where = f"[[variant]] #{index + 1}"
    if not isinstance(table, dict):
        raise ScenarioError(f"{where} must be a table")
    unknown = sorted(set(table) - VARIANT_FIELDS)
    if unknown:
        raise ScenarioError(f"{where}: unknown field(s) {unknown}; known: "
                            f"{sorted(VARIANT_FIELDS)}")
    name = check_name(where, table.get("name"))
    where = f"variant {name!r}"
    return VariantSpec(
        name=name,
        drops=tuple(_drop(f"{where} drop #{i + 1}", t)
                    for i, t in enumerate(_entries(f"{where} drop", table.get("drop", [])))),
        injections=tuple(
            _injection(f"{where} inject #{i + 1}", t)
            for i, t in enumerate(_entries(f"{where} inject", table.get("inject", [])))),
        config=tuple(sorted(_fields(f"{where} config", table.get("config", {}),
                                    CONFIG_FIELDS).items())),
        topic_config=_topic_config(f"{where} topic_config", table.get("topic_config", {})),
    )


def _times(where: str, value: Any) -> tuple[int, ...]:
    """`at`: one time or a non-empty list of them."""
    values = value if isinstance(value, list) else [value]
    if not values:
        raise ScenarioError(f"{where}: at is an empty list")
    return tuple(_typed(where, "at", v, datetime) for v in values)


def _sweep_entry(kind: str, table: Any) -> Sweep:
    where = f"[sweep] {kind}"
    if not isinstance(table, dict):
        raise ScenarioError(f"{where} must be a table")
    if "at" not in table:
        raise ScenarioError(f"{where}: at is required")
    known = SWEEP_FIELDS if kind == "fail_each_pair" else \
        {k: v for k, v in SWEEP_FIELDS.items() if k != "max_variants"}
    fields = _fields(where, {k: v for k, v in table.items() if k != "at"}, known)
    if fields.get("max_variants", 1) < 1:
        raise ScenarioError(f"{where}: max_variants must be at least 1")
    return Sweep(kind, _times(where, table["at"]), fields.get("for"),
                 fields.get("max_variants", DEFAULT_MAX_PAIR_VARIANTS))


def _sweeps(table: Any) -> tuple[Sweep, ...]:
    if not isinstance(table, dict):
        raise ScenarioError("[sweep] must be a table")
    unknown = sorted(set(table) - set(SWEEP_KINDS))
    if unknown:
        raise ScenarioError(f"[sweep]: unknown field(s) {unknown}; known: {sorted(SWEEP_KINDS)}")
    return tuple(_sweep_entry(kind, table[kind]) for kind in SWEEP_KINDS if kind in table)


def _racks(table: Any) -> tuple[tuple[int, str], ...]:
    """`[racks]`: broker id (a TOML key, so a string of digits) -> rack name."""
    if not isinstance(table, dict):
        raise ScenarioError("[racks] must be a table of broker = \"rack\"")
    racks = []
    for key, rack in table.items():
        if not str(key).isdigit():
            raise ScenarioError(f"[racks]: {key!r} is not a broker id")
        if not isinstance(rack, str) or not rack:
            raise ScenarioError(f"[racks]: the rack of broker {key} must be a non-empty string")
        racks.append((int(key), rack))
    return tuple(sorted(racks))


def parse_scenario(data: Mapping[str, Any]) -> Scenario:
    """A scenario from its TOML tables; raises ScenarioError naming what is wrong."""
    unknown = sorted(set(data) - TOP_FIELDS)
    if unknown:
        raise ScenarioError(f"unknown table(s) {unknown}; known: {sorted(TOP_FIELDS)}")
    variants = tuple(_variant(i, t)
                     for i, t in enumerate(_entries("[[variant]]", data.get("variant", []))))
    sweeps = _sweeps(data["sweep"]) if "sweep" in data else ()
    racks = _racks(data["racks"]) if "racks" in data else ()
    if any(sw.kind == "fail_each_rack" for sw in sweeps) and not racks:
        raise ScenarioError("[sweep] fail_each_rack needs a [racks] table (broker = \"rack\")")
    seen: set[str] = set()
    for v in variants:
        if v.name in seen:
            raise ScenarioError(f"variant name {v.name!r} is given twice")
        seen.add(v.name)
    if not variants and not sweeps:
        raise ScenarioError("the scenario has no [[variant]] and no [sweep]")
    return Scenario(variants, sweeps, racks)


def load_scenario(path: str) -> Scenario:
    try:
        with Path(path).open("rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise ScenarioError(f"scenario file {path} not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"scenario file {path} is not valid TOML ({exc})") from None
    try:
        return parse_scenario(data)
    except ScenarioError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
