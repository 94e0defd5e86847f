"""Which modules of the core run: the mypyc-compiled ones `make install` builds next to the
sources, or the sources (`STATEMACHINE_INTERPRETED=1`, or a build older than its sources).
`make test` runs the core's tests on whichever is installed, `make test-interpreted` on the
sources."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import statemachine

ROOT = Path(statemachine.__file__).resolve().parents[1]
PROBE = ("import statemachine, statemachine.replay as r; "
         "print(statemachine.compiled(), r.__file__.endswith('.py'))")


def _probe(root: Path, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != statemachine.INTERPRETED_ENV}
    environ |= {"PYTHONPATH": str(root), **env}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=root, env=environ,
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_compiled_tells_which_modules_run() -> None:
    from statemachine import replay

    assert statemachine.compiled() is not (replay.__file__ or "").endswith(".py")


def test_the_switch_imports_the_sources() -> None:
    assert _probe(ROOT, STATEMACHINE_INTERPRETED="1") == "False True"


def _copy_with_a_built_replay(tmp_path: Path) -> Path:
    """The core's sources plus a `replay` extension module that cannot load: imported, it
    raises ImportError."""
    shutil.copytree(ROOT / "statemachine", tmp_path / "statemachine",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    (tmp_path / "schemas").symlink_to(ROOT / "schemas")
    (tmp_path / "statemachine" / f"replay{EXTENSION_SUFFIXES[0]}").write_bytes(b"not a module")
    return tmp_path


def test_a_build_older_than_its_source_is_not_run(tmp_path: Path) -> None:
    root = _copy_with_a_built_replay(tmp_path)
    built = root / "statemachine" / f"replay{EXTENSION_SUFFIXES[0]}"
    os.utime(built, (1_000_000_000, 1_000_000_000))  # older than every source
    assert _probe(root) == "False True"


def test_a_fresh_build_is_preferred_to_the_source(tmp_path: Path) -> None:
    root = _copy_with_a_built_replay(tmp_path)
    environ = {k: v for k, v in os.environ.items() if k != statemachine.INTERPRETED_ENV}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=root,
                          env=environ | {"PYTHONPATH": str(root)}, capture_output=True, text=True)
    assert done.returncode != 0 and "ImportError" in done.stderr


def test_the_closure_of_the_group_function_pickles() -> None:
    """The timelines and the config reach Spark's workers pickled; compiled, a frozen
    dataclass refused to be unpickled."""
    import pickle

    from statemachine.cluster import build_timeline
    from statemachine.context import ReplayConfig
    from statemachine.events import Event
    from statemachine.model import BucketState, Topic

    timeline = build_timeline([
        Event(1, None, "ControllerFailover", broker_id=0, brokers=(0, 1)),
        Event(2, None, "BrokerFailure", broker_id=1),
    ])
    config = ReplayConfig(min_insync_replicas=2, kafka_version="2.0", scala_binary="2.12")
    state = BucketState.freeze(7, {"t": Topic("t")})
    back = pickle.loads(pickle.dumps((timeline, config, state)))
    assert back == (timeline, config, state)
    assert back[1].profile == config.profile and back[0].state_at(2) == timeline.state_at(2)


DUMP = """
import pickle, sys
from statemachine.cluster import build_timeline
from statemachine.context import ReplayConfig
from statemachine.events import Event
timeline = build_timeline([Event(1, None, "ControllerFailover", broker_id=0, brokers=(0, 1)),
                           Event(2, None, "BrokerFailure", broker_id=1)])
sys.stdout.buffer.write(pickle.dumps((timeline, ReplayConfig(min_insync_replicas=2))))
"""


def test_pickles_cross_between_the_sources_and_the_compiled_modules() -> None:
    """spark-submit's workers run the sources whatever the driver runs: each side reads
    the other's pickles."""
    import pickle

    from statemachine.cluster import build_timeline
    from statemachine.events import Event

    expected = build_timeline([Event(1, None, "ControllerFailover", broker_id=0, brokers=(0, 1)),
                               Event(2, None, "BrokerFailure", broker_id=1)])
    for interpreted in ("1", "0"):
        environ = os.environ | {"PYTHONPATH": str(ROOT),
                                statemachine.INTERPRETED_ENV: interpreted}
        dumped = subprocess.run([sys.executable, "-c", DUMP], cwd=ROOT, env=environ,
                                capture_output=True, check=True).stdout
        timeline, config = pickle.loads(dumped)
        assert timeline == expected and timeline.state_at(2) == expected.state_at(2)
        assert config.min_insync_replicas == 2 and config.profile.name == "3.7"
