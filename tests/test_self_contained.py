"""The repository stands on its own: no text points at a document outside it.

A pointer such as a design document's section number, a notes file or a project issue
number means nothing to a reader of this repository. Say what it stands for instead, in
Kafka's own terms (class, method, release, KAFKA-NNNN issue, KIP) or with an in-repository
doc (`docs/core.md`, `docs/replay-job.md`, `docs/ingest-compare.md`, `docs/tables.md`).

Scans every git-tracked text file; the real-log fixtures are quoted text and are left out.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import NamedTuple

from tests.helpers import ROOT

TEXT_SUFFIXES = frozenset({".py", ".md", ".toml", ".conf", ".txt", ".cfg", ".properties"})
TEXT_NAMES = frozenset({"Makefile"})
THIS_FILE = Path(__file__).resolve().relative_to(ROOT).as_posix()


class Rule(NamedTuple):
    name: str
    pattern: re.Pattern[str]


RULES = (
    Rule("path outside the repository", re.compile(r"\.\./shared\b|/work/shared\b")),
    Rule("design document", re.compile(r"\bDESIGN\b")),
    Rule("semantics notes", re.compile(r"\bsemantics(?:\.md|\s*§)")),
    Rule("Spark notes", re.compile(r"\bSPARK-NOTES\b")),
    Rule("log format notes", re.compile(r"\bFORMATS\.md\b")),
    Rule("test catalogue", re.compile(r"\bscenarios\.md\b")),
    # This project's issues by number. Kafka's are named KAFKA-NNNN and are fine; so are
    # names that merely contain "issue" and digits (a real-log file `...-issue19522__...`).
    Rule("project issue number",
         re.compile(r"(?<![\w-])issues?\s*#\s*\d+|(?<![\w-])issues?\s+\d+\b", re.IGNORECASE)),
    Rule("section pointer", re.compile(r"§")),
)


class Hit(NamedTuple):
    path: str
    line: int
    rules: tuple[str, ...]
    text: str


def tracked_text_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split("\0")
    return sorted(p for p in listed if p and _is_scanned(p))


def _is_scanned(path: str) -> bool:
    p = Path(path)
    if path == THIS_FILE or not (p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES):
        return False
    # Fixtures are quoted input, except the notes that describe them.
    return not path.startswith("tests/fixtures/") or p.suffix == ".md"


def find_hits(path: str, text: str) -> list[Hit]:
    """One hit per offending line, naming every rule it breaks."""
    hits = []
    for n, line in enumerate(text.splitlines(), 1):
        broken = tuple(rule.name for rule in RULES if rule.pattern.search(line))
        if broken:
            hits.append(Hit(path, n, broken, line.strip()))
    return hits


def test_rules_catch_what_they_target() -> None:
    caught = [
        "see ../shared/kafka/semantics.md", "DESIGN §4", "(semantics §7.2)", "SPARK-NOTES",
        "FORMATS.md §1", "scenarios.md section 9", "(issue 5)", "issue #12", "step (§7.10)",
    ]
    fine = [
        "KAFKA-13225", "KIP-455", "bitnami-charts-issue19522__ak3.5.log", "a known issue",
        "docs/core.md", "the design of the job", "PR #8320",
    ]
    assert all(find_hits("x", line) for line in caught)
    assert not [line for line in fine if find_hits("x", line)]


def test_no_reference_to_documents_outside_the_repository() -> None:
    hits: list[Hit] = []
    for path in tracked_text_files():
        file = ROOT / path
        if file.exists():  # tracked but deleted in the work tree: nothing to read
            hits += find_hits(path, file.read_text(encoding="utf-8", errors="replace"))
    report = "\n".join(f"{h.path}:{h.line}: {', '.join(h.rules)}: {h.text}" for h in hits)
    files = sorted({h.path for h in hits})
    assert not hits, (
        f"{len(hits)} reference(s) to documents outside the repository in {len(files)} "
        f"file(s); name the Kafka class, method, release, KAFKA issue or KIP, or a doc under "
        f"docs/, instead:\n{report}"
    )
