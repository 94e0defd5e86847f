"""Job settings from a TOML file (`conf/replay.toml`): its `[replay]` and `[kafka]` tables
over DEFAULTS, and per-topic `[topics."NAME"]` tables; command-line flags win over both
(the job applies them).

A relative path is looked up in the working directory, then under `base` when given, then
in the repository (so a job started from elsewhere still finds `conf/`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from statemachine.profiles import profile_for

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_CONFIG = "conf/replay.toml"
SECTIONS = ("replay", "kafka")
DEFAULTS: dict[str, Any] = {
    "buckets": 64,
    "spark_conf": "conf/spark/local.conf",
    "max_file_age": "3650d",
    # Runs after which a checkpoint's runs have rewritten every replay group's state rows
    # once (jobs/engine/state_refresh.py): the state after a run is in its last this many.
    "state_refresh_runs": 8,
    "unclean_leader_election_enable": False,
    "delete_topic_enable": True,
    "min_insync_replicas": 1,
    # The Kafka release line replayed (statemachine/profiles.py): `--kafka-version` wins.
    "kafka_version": "3.7",
    # Plausibility of event times (jobs/engine/plausibility.py): a row dated before
    # `ts_min` or more than `ts_max_ahead` after the run started is quarantined; time
    # running backwards against seq by more than `ts_backwards_tolerance` is reported.
    "ts_min": "2011-01-01",
    "ts_max_ahead": "1d",
    "ts_backwards_tolerance": "5m",
    "topics": {},
}
# Per-topic settings a `[topics."NAME"]` table may hold (Kafka topic configs).
TOPIC_SETTINGS = frozenset({"min_insync_replicas"})


def find_file(path: str, base: Path | None = None) -> Path | None:
    """The first existing file among `path`, `base / path` and the repository's `path`."""
    candidates = [Path(path), *([base / path] if base else []), REPO_ROOT / path]
    return next((c for c in candidates if c.is_file()), None)


def load_config(
    path: str | None,
    default: str = DEFAULT_CONFIG,
    defaults: Mapping[str, Any] = DEFAULTS,
    sections: Iterable[str] = SECTIONS,
) -> tuple[dict[str, Any], Path | None]:
    """The settings (file over `defaults`) and the file they came from. A missing `path`
    is an error; a missing `default` file leaves the defaults."""
    found = find_file(path or default)
    if path is not None and found is None:
        raise FileNotFoundError(f"config file {path} not found")
    cfg = dict(defaults)
    if found is not None:
        with found.open("rb") as f:
            data = tomllib.load(f)
        for section in sections:
            cfg.update(data.get(section, {}))
        cfg["topics"] = _topic_settings(data.get("topics", {}), found)
    _check_min_isr(cfg, found)
    return cfg, found


def _check_min_isr(cfg: Mapping[str, Any], source: Path | None) -> None:
    """`min.insync.replicas` is at least 1 in Kafka (`KafkaConfig` and `LogConfig` refuse
    0): a 0 would make every partition look healthy to the audit and the windows."""
    where = source or "defaults"
    values = [("[kafka] min_insync_replicas", cfg.get("min_insync_replicas", 1))]
    values += [(f"[topics.{name!r}] min_insync_replicas", settings["min_insync_replicas"])
               for name, settings in cfg.get("topics", {}).items()
               if "min_insync_replicas" in settings]
    for name, value in values:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{where}: {name} = {value!r}; Kafka's min.insync.replicas is "
                             "an integer of at least 1")


def _topic_settings(topics: Mapping[str, Any], source: Path) -> dict[str, dict[str, Any]]:
    """`[topics."NAME"]` tables, checked: an unknown setting is a mistake worth stopping on
    (a misspelt `min_insync_replicas` would silently audit against the default)."""
    for name, settings in topics.items():
        unknown = set(settings) - TOPIC_SETTINGS if isinstance(settings, dict) else {"?"}
        if unknown:
            raise ValueError(f"{source}: [topics.{name!r}] has unknown setting(s) "
                             f"{sorted(unknown)}; known: {sorted(TOPIC_SETTINGS)}")
    return {name: dict(settings) for name, settings in topics.items()}


def kafka_release(cfg: Mapping[str, Any], flag: str | None = None) -> tuple[str, str]:
    """(kafka_version, scala_binary) for a ReplayConfig: `flag` (`--kafka-version`) over the
    file's `[kafka] kafka_version`; ValueError (one line) when malformed or unsupported."""
    version = str(flag if flag is not None else cfg.get("kafka_version", DEFAULTS["kafka_version"]))
    return version.strip(), profile_for(version).scala_binary


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str | float | int) -> float:
    """Seconds of `90`, `90s`, `30m`, `1h`, `2d` (a bare number is seconds)."""
    if isinstance(text, (int, float)):
        return float(text)
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"not a duration: {text!r} (e.g. 3600, 90s, 30m, 1h, 2d)")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2) or "s"]
