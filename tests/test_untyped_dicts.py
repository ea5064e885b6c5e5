"""Untyped dictionaries inside the program (issue 30): `dict[str, Any]`, `dict[str, object]`,
`Mapping[str, Any]` and `Mapping[str, object]` in helper, history, services and gui together
number under 15, each at a true boundary (a JSON document from outside), read from the code's
syntax trees, never from a document that describes them."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "app" / "stripewise"
INSIDE = ("helper", "history", "services", "gui")
MAX_UNTYPED = 14  # "under 15"
# Where a JSON document from outside the program arrives, and why it is one. An untyped
# dictionary anywhere else fails the test below, whatever the count.
BOUNDARIES = {
    "helper/tuning/journal.py": "the journal file as json reads it, before its entries are typed",
    "history/models.py": "the database's JSON columns, read into their value types at once",
    "history/bulk_insert.py": "rows of any table as the database driver takes them",
    "history/spool.py": "a spool file's lines, written by another process",
    "history/migrations/versions/": "rows as an earlier schema wrote them",
}
UNTYPED_KEYS = {"str"}
UNTYPED_VALUES = {"Any", "object"}
CONTAINERS = {"dict", "Mapping"}


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):  # typing.Mapping, collections.abc.Mapping
        return node.attr
    return None


def _untyped(node: ast.AST) -> bool:
    if not isinstance(node, ast.Subscript) or _name(node.value) not in CONTAINERS:
        return False
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else []
    return len(parts) == 2 and _name(parts[0]) in UNTYPED_KEYS and _name(parts[1]) in UNTYPED_VALUES


def _nodes_in(source: str) -> list[tuple[ast.AST, int]]:
    """Every node of the module with its line, string annotations parsed too (`from
    __future__ import annotations` leaves annotations as code; a quoted one is a string):
    a node in a string is on the string's line."""
    found: list[tuple[ast.AST, int]] = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        found.append((node, line))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                inner = ast.parse(node.value, mode="eval")
            except (SyntaxError, ValueError):  # Debian's 3.11.2 says ValueError for "\0"
                continue
            found += [(part, line) for part in ast.walk(inner)]
    return found


def untyped_dicts(package: Path = PACKAGE) -> list[str]:
    """`path:line` of every untyped dictionary in the packages inside."""
    found = []
    for directory in INSIDE:
        for path in sorted((package / directory).rglob("*.py")):
            relative = path.relative_to(package).as_posix()
            found += [
                f"{relative}:{line}" for node, line in _nodes_in(path.read_text()) if _untyped(node)
            ]
    return found


def _at_a_boundary(place: str) -> bool:
    return any(place.startswith(boundary) for boundary in BOUNDARIES)


def test_untyped_dicts_inside_number_under_15() -> None:
    found = untyped_dicts()
    assert len(found) <= MAX_UNTYPED, "\n".join(found)


def test_every_untyped_dict_inside_is_at_a_boundary() -> None:
    elsewhere = [place for place in untyped_dicts() if not _at_a_boundary(place)]
    assert not elsewhere, "untyped dictionaries away from a JSON boundary:\n" + "\n".join(elsewhere)


def test_the_counter_finds_each_spelling(tmp_path: Path) -> None:
    gui = tmp_path / "gui"
    gui.mkdir()
    (gui / "page.py").write_text(
        "from typing import Any, Mapping\n"
        "import collections.abc\n"
        "a: dict[str, Any] = {}\n"
        "def f(b: Mapping[str, object], c: 'dict[str, object]')"
        " -> collections.abc.Mapping[str, Any]: ...\n"
        "typed: dict[str, int] = {}\n"
    )
    assert sorted(untyped_dicts(tmp_path)) == ["gui/page.py:3"] + ["gui/page.py:4"] * 3
