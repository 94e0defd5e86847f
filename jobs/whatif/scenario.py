"""The scenario file: `[[variant]]` tables and a `[sweep]` table, read and checked.

This module checks the file's shape only (known fields, types, names); what needs the log
(brokers, topics, seqs, times) is checked by `jobs.whatif.plan` against `jobs.whatif.facts`.
Both run before Spark starts. The format is described in docs/whatif.md.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schemas.events import EVENT_COLUMNS
from schemas.whatif import BASELINE, VARIANT_SEPARATOR


class ScenarioError(ValueError):
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
                                  "ts": datetime}
CONFIG_FIELDS: dict[str, type] = {
    "unclean_leader_election_enable": bool, "min_insync_replicas": int,
    "delete_topic_enable": bool,
}
TOPIC_CONFIG_FIELDS: dict[str, type] = {
    "unclean_leader_election_enable": bool, "min_insync_replicas": int,
}
VARIANT_FIELDS = frozenset({"name", "drop", "inject", "config", "topic_config"})
SWEEP_FIELDS = frozenset({"fail_each_broker"})
FAIL_EACH_BROKER_FIELDS: dict[str, type] = {"at": datetime}
TOP_FIELDS = frozenset({"variant", "sweep"})
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
class Scenario:
    variants: tuple[VariantSpec, ...]
    fail_each_broker_at: int | None = None  # the sweep's failure time (microseconds)


def micros(value: datetime) -> int:
    """A TOML or ISO time as microseconds since the epoch; a time without zone is UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _typed(where: str, name: str, value: Any, expected: type) -> Any:
    """`value` checked against `expected` (bool is not an int; a time may be a string)."""
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
    if (at is None) == (after_seq is None):
        raise ScenarioError(f"{where}: give exactly one of at, after_seq")
    if at is not None and ts is not None:
        raise ScenarioError(f"{where}: ts goes with after_seq; an `at` event is at `at`")
    if "event_type" not in fields:
        raise ScenarioError(f"{where}: event_type is required")
    return Injection(tuple(sorted(fields.items())), at, after_seq, ts)


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


def _sweep(table: Any) -> int | None:
    if not isinstance(table, dict):
        raise ScenarioError("[sweep] must be a table")
    unknown = sorted(set(table) - SWEEP_FIELDS)
    if unknown:
        raise ScenarioError(f"[sweep]: unknown field(s) {unknown}; known: {sorted(SWEEP_FIELDS)}")
    if "fail_each_broker" not in table:
        return None
    fields = _fields("[sweep] fail_each_broker", table["fail_each_broker"],
                     FAIL_EACH_BROKER_FIELDS)
    if "at" not in fields:
        raise ScenarioError("[sweep] fail_each_broker: at is required")
    return int(fields["at"])


def parse_scenario(data: Mapping[str, Any]) -> Scenario:
    """A scenario from its TOML tables; raises ScenarioError naming what is wrong."""
    unknown = sorted(set(data) - TOP_FIELDS)
    if unknown:
        raise ScenarioError(f"unknown table(s) {unknown}; known: {sorted(TOP_FIELDS)}")
    variants = tuple(_variant(i, t)
                     for i, t in enumerate(_entries("[[variant]]", data.get("variant", []))))
    sweep_at = _sweep(data["sweep"]) if "sweep" in data else None
    seen: set[str] = set()
    for v in variants:
        if v.name in seen:
            raise ScenarioError(f"variant name {v.name!r} is given twice")
        seen.add(v.name)
    if not variants and sweep_at is None:
        raise ScenarioError("the scenario has no [[variant]] and no [sweep]")
    return Scenario(variants, sweep_at)


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
