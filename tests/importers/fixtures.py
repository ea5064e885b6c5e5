"""Access to the recorded and written results files in tests/fixtures/imports.

`runs_of` reads them as the parsers do, under each tool's own names (what test_bonnie,
test_fio and test_iozone check); `imported` as they are stored, in the history's vocabulary.
"""

from __future__ import annotations

from pathlib import Path

from stripewise.importers import ImportedRun, parse, parse_raw
from stripewise.model.run import ResultValue

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports"
SEEDS = Path("/work/shared/seeds")


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def runs_of(name: str, fmt: str = "auto") -> list[ImportedRun]:
    return parse_raw(text(name), name, fmt)


def imported(name: str, fmt: str = "auto") -> list[ImportedRun]:
    return parse(text(name), name, fmt)


def figures(run: ImportedRun) -> dict[tuple[str, str], float | None]:
    """(phase, metric) -> value, checking no figure appears twice."""
    found: dict[tuple[str, str], float | None] = {}
    for result in run.results:
        key = (result.phase, result.metric)
        assert key not in found, f"{key} twice"
        found[key] = result.value
    return found


def result(run: ImportedRun, phase: str, metric: str) -> ResultValue:
    return next(r for r in run.results if r.phase == phase and r.metric == metric)
