"""The docs say what the code does: the README's input contract and docs/tables.md are
checked against `schemas/`, every relative link resolves, the README stays a five-minute
read and carries no measured figure (those live in BENCHMARKS.md).

Pure: `pyspark.sql.types` needs no SparkSession."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import pytest
from pyspark.sql.types import StructType

from schemas import event_types as ET
from schemas.events import EVENT_SCHEMA, REQUIRED_COLUMNS
from schemas.tables import KRAFT_TABLES, TABLES
from schemas.whatif import STORAGE_TABLES
from tests.helpers import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
TABLES_DOC = DOCS / "tables.md"
COLUMN_HEADER = ("column", "type", "meaning")
EVENT_TYPES_HEADER = ("scope", "event_type", "Kafka flow", "required fields")
# Figures with a unit of time, size or rate: measurements, which belong in BENCHMARKS.md
# (the generated table and the dated log below it), nowhere else.
MEASURED = re.compile(
    r"\b\d[\d,.]*\s?(?:s|ms|µs|min|GB|MB|GiB|MiB|k?\s?events/s|lines/s|rows/s)\b"
    r"|\bratio (?:of )?\d"
)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


class Section(NamedTuple):
    title: str
    lines: list[str]


def _doc_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md")), ROOT / "tests" / "NOT_COVERED.md",
            ROOT / "tests" / "fixtures" / "ingest" / "README.md"]


def _sections(text: str, level: str) -> list[Section]:
    """Split markdown at headings of exactly `level` ('## ' or '### ')."""
    sections: list[Section] = []
    for line in text.splitlines():
        if line.startswith(level):
            sections.append(Section(line[len(level):].strip(), []))
        elif sections:
            sections[-1].lines.append(line)
    return sections


def _cells(line: str) -> tuple[str, ...]:
    return tuple(c.strip().strip("`") for c in line.strip().strip("|").split("|"))


def _tables(lines: list[str]) -> list[list[tuple[str, ...]]]:
    """Every markdown table in `lines`: header row first, the `|---|` row dropped."""
    tables: list[list[tuple[str, ...]]] = []
    current: list[tuple[str, ...]] | None = None
    for line in lines:
        if line.startswith("|"):
            if current is None:
                current = []
                tables.append(current)
            if not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line.strip()):
                current.append(_cells(line))
        else:
            current = None
    return tables


def _table_with_header(lines: list[str], header: tuple[str, ...]) -> list[tuple[str, ...]]:
    found = [t for t in _tables(lines) if t and t[0] == header]
    assert len(found) == 1, f"expected one table with header {header}, found {len(found)}"
    return found[0][1:]


def _section(text: str, level: str, title: str) -> Section:
    found = [s for s in _sections(text, level) if s.title == title]
    assert len(found) == 1, f"expected one section {level}{title!r}, found {len(found)}"
    return found[0]


def _schema_columns(schema: StructType) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in schema.fields]


# -- (a) every replay table of schemas.tables is documented column by column ----------------

@pytest.mark.parametrize("table", list(TABLES))
def test_tables_doc_matches_schema(table: str) -> None:
    section = _section(TABLES_DOC.read_text(encoding="utf-8"), "### ", f"`{table}`")
    rows = _table_with_header(section.lines, COLUMN_HEADER)
    assert [(r[0], r[1]) for r in rows] == _schema_columns(TABLES[table])
    assert all(r[2] for r in rows), f"{table}: a column without a meaning"


@pytest.mark.parametrize("table", list(KRAFT_TABLES))
def test_tables_doc_matches_kraft_schema(table: str) -> None:
    section = _section(TABLES_DOC.read_text(encoding="utf-8"), "### ", f"`{table}`")
    rows = _table_with_header(section.lines, COLUMN_HEADER)
    assert [(r[0], r[1]) for r in rows] == _schema_columns(KRAFT_TABLES[table])
    assert all(r[2] for r in rows), f"{table}: a column without a meaning"


@pytest.mark.parametrize("table", list(STORAGE_TABLES))
def test_tables_doc_matches_whatif_storage_schema(table: str) -> None:
    section = _section(TABLES_DOC.read_text(encoding="utf-8"), "### ", f"`{table}`")
    rows = _table_with_header(section.lines, COLUMN_HEADER)
    assert [(r[0], r[1]) for r in rows] == _schema_columns(STORAGE_TABLES[table])


def test_tables_doc_has_no_stale_replay_table() -> None:
    text = TABLES_DOC.read_text(encoding="utf-8")
    replay = _section(text, "## ", "Output of the replay (`python -m jobs.replay`)")
    documented = [s.title.strip("`") for s in _sections("\n".join(replay.lines), "### ")]
    assert documented == list(TABLES)


# -- (b) the README's input contract is the schema's -----------------------------------------

def _readme_input() -> Section:
    return _section(README.read_text(encoding="utf-8"), "## ", "Input: the controller event log")


@pytest.mark.parametrize("path", [README, TABLES_DOC], ids=lambda p: p.name)
def test_input_contract_matches_event_schema(path: Path) -> None:
    section = _section(path.read_text(encoding="utf-8"), "## ", "Input: the controller event log")
    rows = _table_with_header(section.lines, COLUMN_HEADER)
    assert [(r[0], r[1]) for r in rows] == _schema_columns(EVENT_SCHEMA)
    text = "\n".join(section.lines)
    for column in REQUIRED_COLUMNS:
        assert f"`{column}`" in text


def test_event_types_table_matches_event_types() -> None:
    rows = _table_with_header(_readme_input().lines, EVENT_TYPES_HEADER)
    scopes = {"cluster": ET.CLUSTER_EVENTS, "topic": ET.TOPIC_EVENTS,
              "partition": ET.PARTITION_EVENTS}
    documented = {}
    for scope, event_type, flow, required in rows:
        assert event_type in scopes[scope], f"{event_type} is not a {scope} event"
        assert flow, f"{event_type}: no Kafka flow"
        documented[event_type] = tuple(f.strip(" `") for f in required.split(","))
    assert len(documented) == len(rows), "an event type listed twice"
    assert documented == dict(ET.REQUIRED_FIELDS)
    assert set(documented) == ET.ALL_EVENTS


# -- (c) every relative link resolves ----------------------------------------------------------

def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), flags=re.M)
    return {_anchor(h) for h in headings}


@pytest.mark.parametrize("doc", _doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # an absolute URL
        path_part, _, anchor = target.partition("#")
        path = (doc.parent / path_part).resolve() if path_part else doc
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{target}: no such heading")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


# -- (d) a five-minute README, and figures in one place ----------------------------------------

def test_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) < 200


@pytest.mark.parametrize(
    "doc", _doc_files(),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_measured_figures_outside_the_benchmarks(doc: Path) -> None:
    hits = [f"{n}: {line.strip()}"
            for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
            if MEASURED.search(line)]
    assert not hits, "measured figures belong in BENCHMARKS.md:\n" + "\n".join(hits)
