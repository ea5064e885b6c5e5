"""The package's shape, read from the code: no import cycles (imports inside functions and under
TYPE_CHECKING count, as grimp counts them), a GUI that starts no process itself, and no
program started through a shell.

pyproject.toml's import-linter contracts hold the layers and the rules of the design; these are
the rules a contract cannot say: that no modules import each other round in a circle, that no
widget reaches for QProcess or os.fork, and that external programs get argument lists, never a
shell string (names and arguments inside a module, not modules).
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

PACKAGE = Path(__file__).resolve().parents[1] / "app" / "stripewise"
# What starts a process without importing subprocess (a contract forbids that in gui): Qt's
# QProcess by any name, and os's functions that fork, exec or spawn
OS_PROCESS_STARTERS = frozenset(
    {"fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp"}
    | {
        f"{verb}{suffix}"
        for verb in ("exec", "spawn")
        for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")
    }
)


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's algorithm,
    iterative: the package is deeper than Python's recursion limit likes)."""
    edges = {
        module: sorted(graph.find_modules_directly_imported_by(module)) for module in graph.modules
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(edges[root]))]
        while work:
            module, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(edges[successor])))
                    break
                if successor in on_stack:
                    low[module] = min(low[module], index[successor])
            else:
                work.pop()
                if work:
                    caller = work[-1][0]
                    low[caller] = min(low[caller], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
    return cycles


def _described(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    """`a <-> b <-> c`, then each import inside the cycle with its line."""
    members = set(cycle)
    lines = [" <-> ".join(cycle)]
    for importer in cycle:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
            for detail in graph.get_import_details(importer=importer, imported=imported):
                lines.append(f"    {importer}:{detail['line_number']} imports {imported}")
    return "\n".join(lines)


def test_no_module_imports_itself_round_a_cycle() -> None:
    graph = grimp.build_graph("stripewise", cache_dir=None)
    cycles = import_cycles(graph)
    described = "\n".join(_described(graph, cycle) for cycle in cycles)
    assert not cycles, f"{len(cycles)} import cycle(s):\n{described}"


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.one", "a.two", "a.three", "a.alone"):
        graph.add_module(module)
    graph.add_import(importer="a.one", imported="a.two")
    graph.add_import(importer="a.two", imported="a.three")
    graph.add_import(importer="a.three", imported="a.one")
    graph.add_import(importer="a.alone", imported="a.one")
    assert import_cycles(graph) == [["a.one", "a.three", "a.two"]]


def _process_starters(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Name) and node.id == "QProcess":
            names.append(node.id)
        elif isinstance(node, ast.Attribute) and (
            node.attr == "QProcess"
            or (
                isinstance(node.value, ast.Name)
                and node.value.id == "os"
                and node.attr in OS_PROCESS_STARTERS
            )
        ):
            names.append(node.attr)
        elif isinstance(node, ast.ImportFrom):
            names += [
                alias.name
                for alias in node.names
                if alias.name == "QProcess"
                or (node.module == "os" and alias.name in OS_PROCESS_STARTERS)
            ]
        found += [
            f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', '?')} {name}" for name in names
        ]
    return found


def test_gui_starts_no_processes_it_asks_services() -> None:
    found = [
        hit for path in sorted((PACKAGE / "gui").rglob("*.py")) for hit in _process_starters(path)
    ]
    assert not found, "the GUI starts processes through services only:\n" + "\n".join(found)


def _shell_strings(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                passed = keyword.value
                if keyword.arg == "shell" and not (
                    isinstance(passed, ast.Constant) and passed.value is False
                ):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} shell=")
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in ("system", "popen")
        ):
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} os.{node.attr}")
    return found


def test_external_programs_get_argument_lists_never_a_shell_string() -> None:
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in _shell_strings(path)]
    assert not found, "a program is started through a shell:\n" + "\n".join(found)
