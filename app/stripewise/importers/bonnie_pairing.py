"""A bonnie++ table and its CSV line are one run, never two.

bonnie++ without `-q` prints the table of a run and then its CSV line; with `-q` and both
streams in one log the CSV may come first; a post may give a table with its CSV line and other
tables without. A table row and a CSV line are the same run when they name the same machine
(tables cut long names) and size, and their figures agree as far as the table shows them (two
or three significant digits with 2.00a's k/m/g); of several such tables the nearest to the CSV
line is its own. The run is read from the CSV (full precision) and its lines include the
table's (and its version, which a 1.0x CSV line lacks). Tables and CSV lines without a
partner are runs of their own.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from stripewise.importers.bonnie_fields import BonnieRow, is_plus, speed

_TABLE_PRECISION = 0.03  # `1.6g` is 1.6 x 1024^2 KiB/s for 1.55 to 1.65: within 3%


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
    groups = [(csv.io, table.io), (csv.files, table.files)]
    return all(
        _agree(mine, theirs, cpu=index % 2 == 1)
        for csv_cells, table_cells in groups
        if csv_cells is not None and table_cells is not None
        for index, (mine, theirs) in enumerate(zip(csv_cells, table_cells, strict=False))
    )


def _agree(csv_cell: str | None, table_cell: str | None, *, cpu: bool) -> bool:
    """One cell as the CSV and the table give it; bon_csv2txt prints `+++++` as `0k`."""
    if csv_cell is None or table_cell is None:
        return csv_cell is None and table_cell is None
    if is_plus(csv_cell):
        return is_plus(table_cell) or table_cell in ("0k", "0")
    if is_plus(table_cell):
        return False
    try:
        exact = speed(csv_cell, suffixed=False)
        shown = speed(table_cell, suffixed=not cpu)
    except ValueError:
        return False
    if exact is None or shown is None:
        return exact == shown
    return abs(shown - exact) <= max(1.0, _TABLE_PRECISION * exact)
