"""Issue 28.13: a bonnie++ CSV of many runs (one per line) is imported in time and memory
linear in its lines, and the import holds no more than its parse.

Time as the other linear-time tests measure it (tests/security/linear_time.py: 8 times the
input may take at most 16 times the CPU); memory as the parse's peak (tracemalloc), with the
same bound. `python -m bench --only imports` prints the figures up to a 60 MiB file.
"""

from __future__ import annotations

import contextlib
import io
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from stripewise.cli import main
from stripewise.history import imports as history_imports
from stripewise.importers import parse
from tests.importers.fixtures import FIXTURES, text
from tests.security.linear_time import GROWTH, MOST_RATIO, Case, assert_linear

RECORDED = [line for line in text("bonnie200a_direct_x2_files.csv").splitlines() if line[:1] == "1"]
SEED = "1795358228"
LINE = len(RECORDED[0]) + 1  # characters per run


def bonnie_csv(size: int) -> str:
    """About `size` characters of bonnie++ 2.00a CSV lines, each a run with its own seed."""
    return "".join(
        RECORDED[n % 2].replace(SEED, str(int(SEED) + n)) + "\n" for n in range(size // LINE)
    )


STDOUT = text("bonnie200a_stdout.txt")  # a run's tables, then its CSV line
CSV2TXT = text("bonnie200a_pasted.txt").split("$ bon_csv2txt < db8-2023-05.csv\n")[1]


def csv_lines_and_other_tables(size: int) -> str:
    """The CSV lines of many runs of one machine, then the tables of other runs of it (other
    figures): no line finds its table among the many that could be it."""
    runs = [STDOUT.replace("1795354693", str(1795354693 + n)) for n in range(size // len(STDOUT))]
    csv = "".join(run.splitlines(True)[-1] for run in runs)
    tables = "".join("".join(run.splitlines(True)[:-1]) for run in runs)
    return csv + tables.replace(" 1320k  99 ", " 1010k  98 ")


def csv2txt_of_many_machines(size: int) -> str:
    """bon_csv2txt of many machines: every I/O row, then every file-test row, by name."""
    lines = CSV2TXT.splitlines(True)
    io_header, io_run, file_header, file_run = lines[:3], lines[3:5], lines[7:10], lines[10:12]
    names = [_base36(n) for n in range(size // 330)]
    io_rows = "".join(line.replace("db8", m) for m in names for line in io_run)
    file_rows = "".join(line.replace("db8", m) for m in names for line in file_run)
    return "".join(io_header) + io_rows + "".join(file_header) + file_rows


def _renamed(run: str, n: int) -> str:
    return run.replace("lab-nas", f"n{n:06d}").replace("1795354693", str(1795354693 + n))


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    return "".join(digits[n // 36**k % 36] for k in (2, 1, 0))


@pytest.mark.parametrize(
    ("what", "build", "size"),
    [
        # 300 runs, then 2,400: about 0.1 s and 1 s of CPU
        ("CSV lines of many runs", bonnie_csv, 300 * LINE),
        # before, each CSV line was compared with every table: 64 MiB would take hours
        ("CSV lines and other runs' tables", csv_lines_and_other_tables, 64 * 1024),
        # before, each machine's file rows were found by a scan of every row of both tables
        ("bon_csv2txt tables of many machines", csv2txt_of_many_machines, 256 * 1024),
    ],
)
def test_runs_are_read_in_linear_time(what: str, build: Callable[[int], str], size: int) -> None:
    assert_linear(Case(f"bonnie++ {what}", build, _parse, size))


def test_the_growth_cases_are_read_whole() -> None:
    apart = parse(csv_lines_and_other_tables(10 * len(STDOUT)), "apart.txt")
    assert [run.context["format"][:12] for run in apart] == ["bonnie++ csv"] * 10 + [
        "bonnie++ tab"
    ] * 10
    together = parse(
        csv_lines_and_other_tables(10 * len(STDOUT)).replace("1010k  98", "1320k  99"), "x"
    )
    assert len(together) == 10 and all(len(run.context["lines"]) == 5 for run in together)
    machines = parse(csv2txt_of_many_machines(10 * 330), "many.txt")
    assert len(machines) == 10 and all(run.spec.get("file_test") for run in machines)


def test_runs_are_read_in_linear_memory() -> None:
    assert len(parse(bonnie_csv(200 * LINE), "many.csv")) == 200
    small, large = (_peak_bytes(lambda n=n: _parse(bonnie_csv(n * LINE))) for n in (200, 1600))
    ratio = large / small
    assert ratio <= MOST_RATIO, f"{GROWTH}x the runs took {ratio:.1f}x the memory"


def test_an_import_holds_no_more_than_its_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: each run was read back and made a dict, and the output one string, all held
    # until printed: 5 times the parse's memory (20,000 runs: 1.7 GB). Now each run is
    # printed as it is read back.
    many = tmp_path / "many.csv"
    many.write_text(bonnie_csv(300 * LINE), encoding="utf-8")
    # the capped read reserves its 64 MiB at once (never resident): not the import's own
    monkeypatch.setattr(history_imports, "read_bytes", lambda path, **_: Path(path).read_bytes())
    _import(tmp_path / "warm.db", FIXTURES / "bonnie200a_n0.csv")  # modules loaded
    parsed = _peak_bytes(lambda: _parse(many.read_text(encoding="utf-8")))
    imported = _peak_bytes(lambda: _import(tmp_path / "history.db", many))
    assert imported <= 1.5 * parsed, f"{imported / parsed:.1f} times the parse's memory"


def _parse(csv: str) -> None:
    parse(csv, "many.csv")


def _import(database: Path, path: Path) -> None:
    with contextlib.redirect_stdout(_Discard()):
        assert main(["--db", f"sqlite:///{database}", "import", str(path), "--json"]) == 0


class _Discard(io.TextIOBase):
    def write(self, text: str) -> int:
        return len(text)


def _peak_bytes(work: Callable[[], object]) -> int:
    """The most memory `work` held at once, above what was held before it."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        work()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before
