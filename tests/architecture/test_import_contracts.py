"""`make lint`'s import contracts (pyproject.toml, `[tool.importlinter]`) hold on the
project, and break on a copy of it with a deliberate circle or an arrow back up a layer."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT

LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "pyproject.toml"],
                          cwd=root, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def copy_of_project(tmp: Path) -> Path:
    for package in ("jobs", "statemachine", "schemas"):
        shutil.copytree(ROOT / package, tmp / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    return tmp


def add_import(module: Path, line: str) -> None:
    text = module.read_text()
    head = "from __future__ import annotations\n"
    module.write_text(text.replace(head, head + line + "\n", 1))


def test_the_project_keeps_its_contracts() -> None:
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_a_new_circle_between_two_modules_breaks_lint(tmp_path: Path) -> None:
    root = copy_of_project(tmp_path)
    # codec is imported by the group function; make codec import it back.
    add_import(root / "jobs" / "engine" / "codec.py", "import jobs.engine.group_fn  # noqa")
    done = lint(root)
    assert done.returncode != 0
    assert "No module circle in any package BROKEN" in done.stdout
    assert "cycles are allowed in jobs.engine" in done.stdout
    assert ".group_fn -> .codec" in done.stdout


def test_an_arrow_back_up_a_layer_breaks_lint(tmp_path: Path) -> None:
    root = copy_of_project(tmp_path)
    add_import(root / "jobs" / "store" / "tables.py", "import jobs.engine.keying  # noqa")
    add_import(root / "statemachine" / "election.py", "import pyspark  # noqa")
    done = lint(root)
    assert done.returncode != 0
    assert "engine, readers, store, \ncommon BROKEN" in done.stdout \
        or "common BROKEN" in done.stdout
    assert "no pyspark, no pandas, no pyarrow BROKEN" in done.stdout
    assert "jobs.store.tables -> jobs.engine.keying" in done.stdout
