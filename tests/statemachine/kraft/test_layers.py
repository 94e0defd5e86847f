"""The KRaft fold is pure and sits beside the ZooKeeper fold, on the shared layers: it
imports no pyspark, pandas or job code, and of the core only the model, the rows and the
windows (docs/core.md, "Modules"), never the ZooKeeper controller's context or flows."""

from __future__ import annotations

import ast

import pytest

from tests.helpers import ROOT

KRAFT = ROOT / "statemachine" / "kraft"
SHARED = {"statemachine.model", "statemachine.rows", "statemachine.windows"}


def imports(path: str) -> set[str]:
    tree = ast.parse((KRAFT / path).read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


@pytest.mark.parametrize("path", sorted(p.name for p in KRAFT.glob("*.py")))
def test_kraft_module_imports_only_the_shared_layers(path: str) -> None:
    got = imports(path)
    core = {m for m in got if m.startswith("statemachine") and not m.startswith(
        "statemachine.kraft")}
    assert core <= SHARED
    assert not {m for m in got if m.split(".")[0] in ("pyspark", "pandas", "jobs", "pyarrow")}


def test_the_fold_uses_the_shared_windows() -> None:
    assert "statemachine.windows" in imports("fold.py")
