"""Job settings from a TOML file (`conf/replay.toml`): its `[replay]` and `[kafka]` tables
over DEFAULTS; command-line flags win over both (the job applies them).

A relative path is looked up in the working directory, then under `base` when given, then
in the repository (so a job started from elsewhere still finds `conf/`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_CONFIG = "conf/replay.toml"
SECTIONS = ("replay", "kafka")
DEFAULTS: dict[str, Any] = {
    "buckets": 64,
    "spark_conf": "conf/spark/local.conf",
    "max_file_age": "3650d",
    "unclean_leader_election_enable": False,
    "delete_topic_enable": True,
}


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
    return cfg, found
