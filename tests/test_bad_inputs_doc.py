"""docs/bad-inputs.md stays true: each line names a test that exists and asserts the words
the line quotes."""

from __future__ import annotations

import ast
import re

import pytest

from tests.helpers import ROOT

DOC = ROOT / "docs" / "bad-inputs.md"
ROW = re.compile(r"^\|(?P<case>[^|]+)\|(?P<where>[^|]+)\|\s*`(?P<said>[^`]+)`\s*\|"
                 r"\s*`(?P<test>tests/[^`]+::\w+)`\s*\|$")


def doc_rows() -> list[tuple[str, str, str]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            rows.append((match["case"].strip(), match["said"], match["test"]))
    return rows


def test_the_doc_has_its_rows() -> None:
    lines = [x for x in DOC.read_text(encoding="utf-8").splitlines()
             if x.startswith("| ") and not x.startswith(("| case", "|---"))]
    assert len(doc_rows()) == len(lines) > 20  # every table line is in the checked form


def _test_source(reference: str) -> str:
    path, name = reference.split("::")
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment((ROOT / path).read_text(encoding="utf-8"), node) or ""
    raise AssertionError(f"{reference} does not exist")


@pytest.mark.parametrize("case,said,test", doc_rows(), ids=[r[0][:40] for r in doc_rows()])
def test_each_line_names_a_test_that_asserts_what_it_says(case: str, said: str,
                                                          test: str) -> None:
    source = _test_source(test)
    assert "assert" in source or "pytest.raises" in source
    assert said in source, f"{test} does not assert {said!r} ({case})"
