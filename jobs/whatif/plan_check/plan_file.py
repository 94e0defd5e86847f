"""The plan file: `[racks]`, `[settings]` and `[[step]]` tables, read and checked.

    [racks]                      # broker = "rack" (broker.rack), as in a scenario file
    1 = "r1"

    [settings]                   # what the controller reads (Kafka defaults otherwise)
    min_insync_replicas = 2
    unclean_leader_election_enable = false
    topic_min_insync_replicas = { orders = 3 }
    topic_unclean_leader_election_enable = { logs = true }

    [[step]]
    name = "drain rack r1"       # optional; "step N" otherwise
    action = "shutdown"          # fail | shutdown | restart | reassign | config
    rack = "r1"                  # or brokers = [1, 2]

A `reassign` step names `topic`, `partition` and `replicas`; a `config` step sets
`min_insync_replicas` and/or `unclean_leader_election_enable`, of one `topic` or of the
cluster. The shape is checked here; brokers and topics against the state in `job`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jobs.common.exitcodes import BadInput

FAIL, SHUTDOWN, RESTART, REASSIGN, CONFIG = "fail", "shutdown", "restart", "reassign", "config"
BROKER_ACTIONS = (FAIL, SHUTDOWN, RESTART)
ACTIONS = (*BROKER_ACTIONS, REASSIGN, CONFIG)
_STEP_FIELDS: dict[str, frozenset[str]] = {
    **{a: frozenset({"name", "action", "brokers", "rack"}) for a in BROKER_ACTIONS},
    REASSIGN: frozenset({"name", "action", "topic", "partition", "replicas"}),
    CONFIG: frozenset({"name", "action", "topic", "min_insync_replicas",
                       "unclean_leader_election_enable"}),
}
_SETTINGS = frozenset({"min_insync_replicas", "unclean_leader_election_enable",
                       "topic_min_insync_replicas", "topic_unclean_leader_election_enable"})
_TOP = frozenset({"racks", "settings", "step"})


class PlanError(BadInput):
    """A bad plan file: the one line says which step and field, and why."""


@dataclass(frozen=True)
class Step:
    """One planned step, in the plan's order (`number` from 1)."""

    number: int
    name: str
    action: str
    brokers: tuple[int, ...] = ()  # fail / shutdown / restart (a rack resolved)
    rack: str | None = None
    topic: str | None = None  # reassign; config of one topic
    partition: int | None = None
    replicas: tuple[int, ...] = ()
    min_insync_replicas: int | None = None
    unclean_leader_election_enable: bool | None = None

    def describe(self) -> str:
        """The step in one short phrase: `fail rack r2 (3, 4)`, `reassign orders-0 -> [..]`."""
        if self.action in BROKER_ACTIONS:
            who = ", ".join(map(str, self.brokers))
            return (f"{self.action} rack {self.rack} (brokers {who})" if self.rack
                    else f"{self.action} broker{'s' if len(self.brokers) > 1 else ''} {who}")
        if self.action == REASSIGN:
            return f"reassign {self.topic}-{self.partition} to {list(self.replicas)}"
        sets = [f"{k}={v}" for k, v in (("min.insync.replicas", self.min_insync_replicas),
                                        ("unclean.leader.election.enable",
                                         self.unclean_leader_election_enable)) if v is not None]
        whose = f"topic {self.topic}" if self.topic else "the cluster"
        return f"config {' '.join(sets)} of {whose}"


@dataclass(frozen=True)
class Settings:
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False
    topic_min_insync_replicas: dict[str, int] = field(default_factory=dict)
    topic_unclean_leader_election_enable: dict[str, bool] = field(default_factory=dict)

    def unclean_of(self, topic: str) -> bool:
        return self.topic_unclean_leader_election_enable.get(
            topic, self.unclean_leader_election_enable)

    def under(self, topic_min_isr: dict[str, int],
              topic_unclean: dict[str, bool]) -> Settings:
        """These settings over a state's own topic configs (the plan's win)."""
        return Settings(self.min_insync_replicas, self.unclean_leader_election_enable,
                        {**topic_min_isr, **self.topic_min_insync_replicas},
                        {**topic_unclean, **self.topic_unclean_leader_election_enable})


@dataclass(frozen=True)
class Plan:
    path: str
    steps: tuple[Step, ...]
    racks: dict[int, str]
    settings: Settings


def load_plan(path: str) -> Plan:
    """The plan at `path`, or PlanError with one line."""
    try:
        raw = tomllib.loads(Path(path).read_text())
    except FileNotFoundError:
        raise PlanError(f"--plan: no such file {path}") from None
    except OSError as exc:
        raise PlanError(f"--plan: cannot read {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PlanError(f"--plan {path}: not TOML: {exc}") from None
    return parse_plan(raw, path)


def parse_plan(raw: dict[str, Any], path: str) -> Plan:
    unknown = sorted(set(raw) - _TOP)
    if unknown:
        raise PlanError(f"--plan {path}: unknown table {unknown[0]!r} (known: "
                        + ", ".join(sorted(_TOP)) + ")")
    racks = _racks(raw.get("racks", {}), path)
    settings = _settings(raw.get("settings", {}), path)
    steps_raw = raw.get("step")
    if not isinstance(steps_raw, list) or not steps_raw:
        raise PlanError(f"--plan {path}: no [[step]]: a plan needs at least one step")
    steps = tuple(_step(i + 1, s, racks, path) for i, s in enumerate(steps_raw))
    return Plan(path, steps, racks, settings)


def _racks(table: Any, path: str) -> dict[int, str]:
    if not isinstance(table, dict):
        raise PlanError(f"--plan {path}: [racks] must be a table of broker = \"rack\"")
    racks: dict[int, str] = {}
    for key, rack in table.items():
        if not key.isdigit() or not isinstance(rack, str) or not rack:
            raise PlanError(f"--plan {path}: [racks] {key} = {rack!r}: want broker id = "
                            "\"rack name\"")
        racks[int(key)] = rack
    return racks


def _min_isr(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PlanError(f"{where}: min_insync_replicas must be an integer of at least 1 "
                        f"(Kafka's LogConfig), not {value!r}")
    return value


def _settings(table: Any, path: str) -> Settings:
    where = f"--plan {path}: [settings]"
    if not isinstance(table, dict):
        raise PlanError(f"{where} must be a table")
    unknown = sorted(set(table) - _SETTINGS)
    if unknown:
        raise PlanError(f"{where}: unknown field {unknown[0]!r} (known: "
                        + ", ".join(sorted(_SETTINGS)) + ")")
    unclean = table.get("unclean_leader_election_enable", False)
    if not isinstance(unclean, bool):
        raise PlanError(f"{where}: unclean_leader_election_enable must be true or false")
    topics = table.get("topic_min_insync_replicas", {})
    if not isinstance(topics, dict):
        raise PlanError(f"{where}: topic_min_insync_replicas must be a table topic = N")
    uncleans = table.get("topic_unclean_leader_election_enable", {})
    if not isinstance(uncleans, dict) or any(not isinstance(v, bool) for v in uncleans.values()):
        raise PlanError(f"{where}: topic_unclean_leader_election_enable must be a table "
                        "topic = true|false")
    return Settings(_min_isr(table.get("min_insync_replicas", 1), where), unclean,
                    {str(t): _min_isr(v, f"{where} topic {t}") for t, v in topics.items()},
                    {str(t): bool(v) for t, v in uncleans.items()})


def _ints(value: Any, where: str, what: str) -> tuple[int, ...]:
    if (not isinstance(value, list) or not value
            or any(isinstance(b, bool) or not isinstance(b, int) or b < 0 for b in value)):
        raise PlanError(f"{where}: {what} must be a non-empty list of broker ids, "
                        f"not {value!r}")
    if len(set(value)) != len(value):
        raise PlanError(f"{where}: {what} {value} names a broker twice")
    return tuple(value)


def _step(number: int, raw: Any, racks: dict[int, str], path: str) -> Step:
    where = f"--plan {path}: step {number}"
    if not isinstance(raw, dict):
        raise PlanError(f"{where}: must be a table")
    action = raw.get("action")
    if action not in ACTIONS:
        raise PlanError(f"{where}: action must be one of {', '.join(ACTIONS)}, not {action!r}")
    unknown = sorted(set(raw) - _STEP_FIELDS[action])
    if unknown:
        raise PlanError(f"{where}: unknown field {unknown[0]!r} for action {action!r} "
                        "(known: " + ", ".join(sorted(_STEP_FIELDS[action])) + ")")
    name = raw.get("name", f"step {number}")
    if not isinstance(name, str) or not name:
        raise PlanError(f"{where}: name must be a non-empty string")
    if action in BROKER_ACTIONS:
        return _broker_step(number, name, action, raw, racks, where)
    if action == REASSIGN:
        topic, partition = raw.get("topic"), raw.get("partition")
        if not isinstance(topic, str) or not topic:
            raise PlanError(f"{where}: reassign needs topic = \"name\"")
        if isinstance(partition, bool) or not isinstance(partition, int) or partition < 0:
            raise PlanError(f"{where}: reassign needs partition = N (0 or more)")
        replicas = _ints(raw.get("replicas"), where, "replicas")
        return Step(number, name, action, topic=topic, partition=partition, replicas=replicas)
    topic = raw.get("topic")
    if topic is not None and (not isinstance(topic, str) or not topic):
        raise PlanError(f"{where}: topic must be a topic name")
    min_isr = raw.get("min_insync_replicas")
    unclean = raw.get("unclean_leader_election_enable")
    if min_isr is None and unclean is None:
        raise PlanError(f"{where}: config sets nothing: give min_insync_replicas or "
                        "unclean_leader_election_enable")
    if unclean is not None and not isinstance(unclean, bool):
        raise PlanError(f"{where}: unclean_leader_election_enable must be true or false")
    return Step(number, name, action, topic=topic,
                min_insync_replicas=None if min_isr is None else _min_isr(min_isr, where),
                unclean_leader_election_enable=unclean)


def _broker_step(number: int, name: str, action: str, raw: dict[str, Any],
                 racks: dict[int, str], where: str) -> Step:
    rack = raw.get("rack")
    if ("brokers" in raw) == (rack is not None):
        raise PlanError(f"{where}: {action} needs exactly one of brokers = [..] or rack = "
                        "\"name\"")
    if rack is None:
        return Step(number, name, action, brokers=_ints(raw["brokers"], where, "brokers"))
    members = tuple(sorted(b for b, r in racks.items() if r == rack))
    if not isinstance(rack, str) or not members:
        raise PlanError(f"{where}: rack {rack!r} has no broker in [racks]")
    return Step(number, name, action, brokers=members, rack=rack)
