"""The core's modules import downwards (docs/core.md, "Modules"): the model knows nothing
of the windows or the context, the windows and incidents nothing of the context, not even
for type checking, so that each layer reads without the ones above it."""

from __future__ import annotations

import ast

import pytest

from tests.helpers import ROOT

# module -> the core modules it must not import, at run time or for type checking
BELOW = {
    "model": {"windows", "incidents", "context"},
    "windows": {"context", "incidents"},
    "incidents": {"context", "windows"},
}


def core_imports(module: str) -> set[str]:
    tree = ast.parse((ROOT / "statemachine" / f"{module}.py").read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("statemachine."):
                found.add(node.module.removeprefix("statemachine."))
            elif node.module == "statemachine":
                found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("statemachine.") for a in node.names
                      if a.name.startswith("statemachine.")}
    return found


@pytest.mark.parametrize("module", sorted(BELOW))
def test_module_imports_nothing_above_it(module: str) -> None:
    assert not core_imports(module) & BELOW[module]


def test_the_flows_use_the_windows_and_the_model() -> None:
    assert {"model", "windows"} <= core_imports("flows")
