"""`jobs.compare.profile`: the profile a comparison holds the replay to."""

from __future__ import annotations

from typing import Any

import pytest

from jobs.compare.job import main
from jobs.compare.profile import choose_profile


def test_the_flag_wins_over_the_detected_release() -> None:
    assert choose_profile("2.0", "3.5-3.9") == ("2.0", "--kafka-version 2.0")


def test_a_detected_range_within_one_profile_picks_it() -> None:
    choice = choose_profile(None, "3.5-3.9")
    assert choice.profile == "3.7" and "3.5-3.9" in choice.reason
    assert choose_profile(None, "0.8-0.11").profile == "2.0"


def test_a_range_spanning_profiles_picks_the_newest_and_says_so() -> None:
    choice = choose_profile(None, "1.0-2.2")
    assert choice.profile == "2.2"
    assert "spanning profiles 2.0, 2.1, 2.2" in choice.reason


def test_nothing_detected_or_unreadable_is_the_default() -> None:
    assert choose_profile(None, None).profile == "3.7"
    choice = choose_profile(None, "banana")
    assert choice.profile == "3.7" and "unreadable" in choice.reason


def test_a_bad_flag_stops_compare_in_one_line(capsys: Any, tmp_path: Any) -> None:
    assert main(["--observed", str(tmp_path), "--replayed", str(tmp_path),
                 "--out", str(tmp_path / "o"), "--kafka-version", "9.9"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unsupported Kafka version '9.9'" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("flag", ["2.x", " "])
def test_malformed_flags_raise(flag: str) -> None:
    with pytest.raises(ValueError, match="Kafka version"):
        choose_profile(flag, None)
