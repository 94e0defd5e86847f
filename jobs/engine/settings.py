"""One replay run's settings (`Settings`: the command line over the config file over the
defaults), the controller settings the core replays with (`replay_config`), and the wall
clock of each stage (`StageClock`, for `run_summary.stage_seconds`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jobs.common.config import kafka_release
from jobs.engine.plausibility import Plausibility
from jobs.engine.state_refresh import DEFAULT_CYCLE
from jobs.store.layout import CheckpointLayout
from statemachine.context import ReplayConfig


@dataclass(frozen=True)
class Settings:
    """One run's settings: the command line over the config file over the defaults."""

    events: str
    out: str
    checkpoint: str
    temporary_checkpoint: bool  # none given: a temporary one, a full replay
    run_id: str
    buckets: int
    config: ReplayConfig
    max_file_age: str
    config_file: Path | None
    spark_conf: Path | None  # properties file of a local run (spark-submit passes its own)
    master: str | None
    audit: bool = False  # run jobs.audit on this run in the same session
    fail_on: str | None = None
    observed: tuple[str, ...] = ()
    initial_state: tuple[str, ...] = ()  # --initial-state files (jobs.engine.initial_state)
    rules: Plausibility = Plausibility()  # what an event row must be to be believed
    rebuild: bool = False  # replay the whole log into a new generation of the checkpoint
    superseded: tuple[str, ...] = ()  # a rebuild: the runs of the generation it replaces
    verdict_json: str | None = None  # with --audit: jobs.audit.publish
    prometheus: str | None = None
    release: str = ""  # which Kafka release line is replayed, and why (one line)
    offset_evidence: str | None = None  # jobs.engine.data_loss_table: else beside --events
    # Runs after which every replay group's state rows have been rewritten once
    # (`jobs.engine.state_refresh`): the state after a run is in its last this many.
    state_refresh_runs: int = DEFAULT_CYCLE

    @property
    def layout(self) -> CheckpointLayout:
        """The files of the checkpoint (or of the generation the run uses)."""
        return CheckpointLayout(self.checkpoint)

    @property
    def marker(self) -> str:
        """Written when the run has committed: the same run id again does nothing."""
        return self.layout.run_marker(self.run_id)


def replay_config(cfg: dict[str, Any], kafka_version: str | None = None) -> ReplayConfig:
    """The controller settings of the config file: Kafka's broker defaults, then topics';
    the release line (`kafka_version` over the file's) and its Scala binary."""
    version, scala_binary = kafka_release(cfg, kafka_version)
    return ReplayConfig(
        kafka_version=version,
        scala_binary=scala_binary,
        unclean_leader_election_enable=bool(cfg["unclean_leader_election_enable"]),
        delete_topic_enable=bool(cfg["delete_topic_enable"]),
        min_insync_replicas=int(cfg["min_insync_replicas"]),
        topic_min_insync_replicas=tuple(
            (topic, int(settings["min_insync_replicas"]))
            for topic, settings in sorted(cfg["topics"].items())
            if "min_insync_replicas" in settings
        ),
    )


@dataclass
class StageClock:
    """Wall-clock seconds per stage, for `run_summary.stage_seconds`."""

    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    t0: float = field(default_factory=time.perf_counter)
    seconds: dict[str, float] = field(default_factory=dict)

    def since(self, start: float) -> float:
        return time.perf_counter() - start


