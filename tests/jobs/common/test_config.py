"""`jobs.common.config`: the release line of `[kafka] kafka_version` and `--kafka-version`
reach ReplayConfig with the Scala binary of its profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.common.config import kafka_release, load_config
from jobs.engine.settings import replay_config
from jobs.whatif.job import read_settings as whatif_settings


def test_the_default_is_3_7_with_scala_2_13() -> None:
    cfg, _ = load_config(None)
    assert cfg["kafka_version"] == "3.7"
    config = replay_config(cfg)
    assert (config.kafka_version, config.scala_binary) == ("3.7", "2.13")


def test_the_file_sets_the_version_and_the_flag_wins(tmp_path: Path) -> None:
    conf = tmp_path / "replay.toml"
    conf.write_text('[kafka]\nkafka_version = "2.2"\n')
    cfg, _ = load_config(str(conf))
    assert kafka_release(cfg) == ("2.2", "2.12")
    config = replay_config(cfg, "3.1")
    assert (config.kafka_version, config.scala_binary, config.profile.name) == (
        "3.1", "2.13", "3.1")


@pytest.mark.parametrize("bad", ["4.0", "2.x", "", "1.5"])
def test_bad_versions_raise_one_line(bad: str) -> None:
    with pytest.raises(ValueError, match="Kafka version") as info:
        kafka_release({}, bad)
    assert "\n" not in str(info.value)


def test_whatif_takes_the_flag(tmp_path: Path) -> None:
    s = whatif_settings(["--events", str(tmp_path), "--scenario", "s.toml",
                         "--out", str(tmp_path / "o"), "--kafka-version", "2.0"])
    assert (s.config.kafka_version, s.config.scala_binary, s.config.profile.name) == (
        "2.0", "2.12", "2.0")
