"""docs/architecture.md's reading paths against the code: every file there, at most eight per
path, and each one reached from an earlier one by an import or across the helper's pipe. The
traces (Start to history row, Apply to the sysfs write) are measured from the running code
instead, by tests/gui/test_traces.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "app" / "stripewise"
DOC = ROOT / "docs" / "architecture.md"
MAX_FILES = 8


def _paths() -> dict[str, list[tuple[str, bool]]]:
    """Heading -> its files in order, each with whether the step crosses the pipe."""
    text = DOC.read_text().split("\n## Reading paths", 1)[1]
    found: dict[str, list[tuple[str, bool]]] = {}
    for section in text.split("### ")[1:]:
        heading, body = section.split("\n", 1)
        steps = re.findall(r"^\d+\. `([^`]+\.py)`( \(over the pipe\))?", body, re.MULTILINE)
        found[heading.strip()] = [(name, bool(pipe)) for name, pipe in steps]
    return found


def _module(relative: str) -> str:
    return "stripewise." + relative.removesuffix(".py").replace("/", ".")


def _imports(relative: str) -> set[str]:
    """Every module the file imports, at the top or inside a function (lazy imports count)."""
    tree = ast.parse((PACKAGE / relative).read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


PATHS = _paths()


def test_the_document_names_the_reading_paths() -> None:
    assert set(PATHS) == {"A run on several hosts"}


@pytest.mark.parametrize("heading", sorted(PATHS))
def test_each_path_is_short_real_and_connected(heading: str) -> None:
    steps = PATHS[heading]
    assert 2 <= len(steps) <= MAX_FILES
    for index, (relative, over_the_pipe) in enumerate(steps):
        assert (PACKAGE / relative).is_file(), relative
        if index == 0 or over_the_pipe:
            continue
        earlier = set().union(*(_imports(name) for name, _pipe in steps[:index]))
        assert _module(relative) in earlier, f"{relative}: no earlier file on the path imports it"
