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

_PRINTED = re.compile(r"(\d+)(?:\.(\d+))?([kmg]?)", re.IGNORECASE)
_SCALE = {"": 1, "k": 1, "m": 1024, "g": 1024 * 1024}  # bonnie++'s K, M, G: KiB, MiB, GiB
# The speeds (K/s) bonnie++ 2.00a prints with each suffix: k under 10000, m under 1000 M.
_INF = float("inf")
_BAND = {"": (0.0, _INF), "k": (0.0, 1e4), "m": (1e4, 1024e3), "g": (1024e3, _INF)}
_SEEKS = 10  # the cell of the seeks figure in a row's I/O cells


def paired(csv_rows: Sequence[BonnieRow], table_rows: Sequence[BonnieRow]) -> list[BonnieRow]:
    """All runs, in file order: CSV rows with their tables merged in, then the others."""
    free = sorted(table_rows, key=lambda table: table.line)
    for row in csv_rows:
        mate = _nearest_mate(row, free)
        if mate is None:
            continue
        free.remove(mate)
        row.lines = sorted({*row.lines, *mate.lines})
        row.version = row.version or mate.version  # 1.0x CSV lines carry no version
    runs = [*csv_rows, *free]
    return sorted(runs, key=lambda run: min(run.lines or [run.line]))


def _nearest_mate(row: BonnieRow, free: list[BonnieRow]) -> BonnieRow | None:
    """The nearest table of the same run as the CSV `row`, looking outwards from it; the one
    before on a tie (bonnie++ prints the table first). `free` is in file order."""
    after = bisect.bisect_left(free, row.line, key=lambda table: table.line)
    before = after - 1
    while before >= 0 or after < len(free):
        take_before = after >= len(free) or (
            before >= 0 and row.line - free[before].line <= free[after].line - row.line
        )
        candidate = free[before] if take_before else free[after]
        if _same_run(row, candidate):
            return candidate
        if take_before:
            before -= 1
        else:
            after += 1
    return None


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
