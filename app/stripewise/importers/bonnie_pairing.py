"""A bonnie++ table and its CSV line are one run, never two.

bonnie++ without `-q` prints the table of a run and then its CSV line; with `-q` and both
streams in one log the CSV may come first; a post may give a table with its CSV line and other
tables without. A table row and a CSV line are the same run when they name the same machine
(tables cut long names) and size, and every figure of the table is one bonnie++ prints for the
CSV's, at the table's precision (`printed_range`: `1.1g` is a CSV's 1101004 to 1205862 K/s);
of several such tables the nearest to the CSV line is its own. The run is read from the CSV
(full precision) and its lines include the table's (and its version, which a 1.0x CSV line
lacks). Tables and CSV lines without a partner are runs of their own.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from stripewise.importers.bonnie_fields import BonnieRow, is_plus

_PRINTED = re.compile(r"([0-9]+)(?:\.([0-9]+))?([kmg]?)", re.IGNORECASE)
_SCALE = {"": 1, "k": 1, "m": 1024, "g": 1024 * 1024}  # bonnie++'s K, M, G: KiB, MiB, GiB
# The speeds (K/s) bonnie++ 2.00a prints with each suffix: k under 10000, m under 1000 M.
_INF = float("inf")
_BAND = {"": (0.0, _INF), "k": (0.0, 1e4), "m": (1e4, 1024e3), "g": (1024e3, _INF)}
_SEEKS = 10  # the cell of the seeks figure in a row's I/O cells


def paired(csv_rows: Sequence[BonnieRow], table_rows: Sequence[BonnieRow]) -> list[BonnieRow]:
    """All runs, in file order: CSV rows with their tables merged in, then the others."""
    tables = _Tables(table_rows)
    for row in csv_rows:
        mate = tables.take_nearest_mate(row)
        if mate is None:
            continue
        row.lines = sorted({*row.lines, *mate.lines})
        row.version = row.version or mate.version  # 1.0x CSV lines carry no version
    runs = [*csv_rows, *tables.free()]
    return sorted(runs, key=lambda run: min(run.lines or [run.line]))


_ANY_SIZE = "any"  # the size key of a file-test-only table row, which names no size
# Tables of one machine and size tried on each side of a CSV line: its own is printed next to
# it, and a log of many runs of one machine must not compare every line with every table.
_MOST_TRIED = 16


class _Tables:
    """Table rows not yet paired, by machine name and size (what a CSV line must share with
    its table), so a CSV line looks only at tables that can be its own: a file of many CSV
    lines and many other tables is read in linear time, not in their product."""

    def __init__(self, rows: Sequence[BonnieRow]) -> None:
        self._groups: dict[tuple[str, object], _Group] = {}
        for row in sorted(rows, key=lambda table: table.line):
            size = row.spec.get("file_size_bytes") if row.io is not None else _ANY_SIZE
            self._groups.setdefault((row.name, size), _Group()).add(row)
        for group in self._groups.values():
            group.seal()
        self._name_lengths = sorted({len(name) for name, _ in self._groups})

    def take_nearest_mate(self, row: BonnieRow) -> BonnieRow | None:
        """The nearest table of the same run as the CSV `row`; the one before on a tie
        (bonnie++ prints the table first). Tables cut long names: a table's name may be the
        start of the CSV line's."""
        sizes: list[object] = [_ANY_SIZE]
        if row.io is not None:
            sizes.append(row.spec.get("file_size_bytes"))
        best: tuple[int, int, _Group, int] | None = None  # distance, after?, group, index
        for length in self._name_lengths:
            if length > len(row.name):
                break
            for size in sizes:
                group = self._groups.get((row.name[:length], size))
                if group is None:
                    continue
                for found in group.nearest(row):
                    if best is None or found[:2] < best[:2]:
                        best = (*found[:2], group, found[2])
        if best is None:
            return None
        _, _, group, index = best
        group.take(index)
        return group.tables[index]

    def free(self) -> list[BonnieRow]:
        return [row for group in self._groups.values() for row in group.free()]


class _Group:
    """Tables of one machine and size in file order; each is taken at most once, and the
    taken ones are skipped in constant time (union-find pointers to the next free one)."""

    def __init__(self) -> None:
        self.tables: list[BonnieRow] = []
        self._lines: list[int] = []
        self._after: list[int] = []  # from index i: the first free index >= i (len: none)
        self._before: list[int] = []  # from i + 1: the last free index <= i, plus one (0: none)

    def add(self, row: BonnieRow) -> None:
        self.tables.append(row)
        self._lines.append(row.line)

    def seal(self) -> None:
        self._after = list(range(len(self.tables) + 1))
        self._before = list(range(len(self.tables) + 1))

    def take(self, index: int) -> None:
        self._after[index] = index + 1
        self._before[index + 1] = index

    def free(self) -> list[BonnieRow]:
        return [row for i, row in enumerate(self.tables) if self._after[i] == i]

    def nearest(self, row: BonnieRow) -> list[tuple[int, int, int]]:
        """(distance, 0 before / 1 after, index) of the nearest table of `row`'s run on each
        side, trying at most _MOST_TRIED free tables per side."""
        found = []
        start = bisect.bisect_left(self._lines, row.line)
        index, tried = _find(self._before, start) - 1, 0
        while index >= 0 and tried < _MOST_TRIED:
            if _same_run(row, self.tables[index]):
                found.append((row.line - self._lines[index], 0, index))
                break
            index, tried = _find(self._before, index) - 1, tried + 1
        index, tried = _find(self._after, start), 0
        while index < len(self.tables) and tried < _MOST_TRIED:
            if _same_run(row, self.tables[index]):
                found.append((self._lines[index] - row.line, 1, index))
                break
            index, tried = _find(self._after, index + 1), tried + 1
        return found


def _find(parent: list[int], index: int) -> int:
    """Follow `parent` from `index` to a fixed point, halving the path as it goes."""
    while parent[index] != index:
        parent[index] = parent[parent[index]]
        index = parent[index]
    return index


def _same_run(csv: BonnieRow, table: BonnieRow) -> bool:
    if table.name and not (csv.name == table.name or csv.name.startswith(table.name)):
        return False
    if table.io is not None and (
        csv.io is None or csv.spec.get("file_size_bytes") != table.spec.get("file_size_bytes")
    ):
        return False
    if table.files is not None and csv.files is None:
        return False
    groups = [(csv.io, table.io, True), (csv.files, table.files, False)]
    return all(
        _agree(mine, theirs, cpu=index % 2 == 1, rounded=io and index == _SEEKS)
        for csv_cells, table_cells, io in groups
        if csv_cells is not None and table_cells is not None
        for index, (mine, theirs) in enumerate(zip(csv_cells, table_cells, strict=False))
    )


def _agree(csv_cell: str | None, table_cell: str | None, *, cpu: bool, rounded: bool) -> bool:
    """One cell as the CSV and the table give it; bon_csv2txt prints `+++++` as `0k`."""
    if csv_cell is None or table_cell is None:
        return csv_cell is None and table_cell is None
    if is_plus(csv_cell):
        return is_plus(table_cell) or table_cell in ("0k", "0")
    if is_plus(table_cell):
        return False
    exact = printed_range(csv_cell, suffixed=False, rounded=rounded)
    shown = printed_range(table_cell, suffixed=not cpu, rounded=rounded)
    if exact is None or shown is None:
        return False
    return shown[0] < exact[1] and exact[0] < shown[1]


def printed_range(cell: str, *, suffixed: bool, rounded: bool) -> tuple[float, float] | None:
    """The figures [low, high) (KiB/s for speeds) that bonnie++ prints as `cell`; None if it
    is not a figure.

    bonnie++ 2.00a's BonTimer::print_stat (bon_time.cpp), and bon_csv2txt's convSpd alike,
    print a speed under 10000 K/s as int() with `k`; else speed/1024 as `%4.1fm` (under 100)
    or `%4dm` of speed/1024 + 0.5; else speed/1024/1024 as `%4.1fg`. So `1.1g` is any speed in
    [1.05, 1.15) x 1024^2 K/s, `564m` one in [563.5, 564.5) x 1024. The CSV, and every plain
    figure of a table, is int() of the speed (`%d`), except the seeks, which are rounded
    (`%.0f`, or `%.1f` under 1000).
    """
    m = _PRINTED.fullmatch(cell)
    if m is None or (m.group(3) and not suffixed):
        return None
    whole, decimals, suffix = m.group(1), m.group(2) or "", m.group(3).lower()
    value = float(f"{whole}.{decimals or 0}")
    if decimals or suffix in ("m", "g") or rounded:
        half = 0.5 / 10 ** len(decimals)
        low, high = value - half, value + half
    else:  # int() dropped what followed the point
        low, high = value, value + 1
    floor, ceiling = _BAND[suffix]
    return max(low * _SCALE[suffix], floor), min(high * _SCALE[suffix], ceiling)
