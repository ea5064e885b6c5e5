"""The tables bonnie++ prints (and bon_csv2txt rebuilds), read by column position.

A table starts at its column header (`Machine Size K/sec %CP ...`, `Name:Size etc /sec %CP`
or `files /sec %CP ...`); the lines just above it give the version, the concurrency and, for
file tests, the machine name. Cells of tests that did not run are blank, so each figure is
placed by where it ends (see `common.by_column`). Rows of a file-test table belong, in order,
to the rows of the sequential-I/O table before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stripewise.importers.bonnie_fields import BonnieRow, io_spec, is_figure, is_plus
from stripewise.importers.common import ImportFormatError, Token, by_column, tokens

TABLE_HEADER = re.compile(r"(Size|files)\b.*/sec\s+%CP")
_SIZE = re.compile(r"\d+(\.\d+)?[kmgt]?(:\S*)*", re.IGNORECASE)
_FILES = re.compile(r"\d+([:/]\S*)?")
_LATENCY = re.compile(r"\d+(\.\d+)?(ns|us|ms|s)")
_COLUMN_WORDS = {"/sec", "K/sec", "%CP"}


@dataclass
class _Table:
    kind: str  # "io" or "files"
    header_line: int
    edges: list[int]
    version: str
    concurrency: int | None
    machine: str  # from the `-Create--` line of file tables


def parse_tables(lines: list[str], source: str) -> list[BonnieRow]:
    rows: list[BonnieRow] = []
    io_rows: list[BonnieRow] = []  # rows of the latest I/O table, for file rows to join
    version = ""
    index = 0
    while index < len(lines):
        line = lines[index].expandtabs()
        if not TABLE_HEADER.search(line):
            index += 1
            continue
        table = _table(lines, index, source)
        # bon_csv2txt prints no Version line above the file-test table: it is the same run's.
        table.version = table.version or version
        version = table.version
        index, found = _rows(lines, index + 1, table, source)
        if table.kind == "io":
            rows.extend(found)
            io_rows = found
        else:
            rows.extend(_attach(io_rows, found))
    return rows


def _same_machine(io_name: str, file_name: str) -> bool:
    """Tables cut long names to fit: `c6300-optimiz` is `c6300-optimized`."""
    return not file_name or io_name.startswith(file_name) or file_name.startswith(io_name)


def _attach(io_rows: list[BonnieRow], file_rows: list[BonnieRow]) -> list[BonnieRow]:
    """Join file-test rows to their machine's I/O rows; return those left on their own.

    bonnie++ prints one row of each per run. bon_csv2txt prints all I/O rows, then the file
    rows of only the runs that had file tests: per machine name the rows are joined in order
    when both tables have as many, and are otherwise kept as file-test-only runs rather than
    joined to a run they may not belong to.
    """
    alone: list[BonnieRow] = []
    for name in dict.fromkeys(row.name for row in file_rows):
        mine = [row for row in file_rows if row.name == name]
        theirs = [row for row in io_rows if row.files is None and _same_machine(row.name, name)]
        if len(mine) == len(theirs):
            for io_row, file_row in zip(theirs, mine, strict=True):
                _join(io_row, file_row)
        else:
            alone.extend(mine)
    return alone


def _join(io_row: BonnieRow, file_row: BonnieRow) -> None:
    io_row.file_spec = file_row.file_spec
    io_row.files = file_row.files
    io_row.file_latency = file_row.file_latency
    io_row.lines.extend(file_row.lines)


def _table(lines: list[str], header_index: int, source: str) -> _Table:
    header = lines[header_index].expandtabs()
    edges = [t.end for t in tokens(header) if t.text in _COLUMN_WORDS]
    if not edges or len(edges) % 2 or len(edges) > 12:
        raise ImportFormatError(
            source, header_index + 1, f"bonnie++ table header with {len(edges)} columns"
        )
    version, concurrency, machine = "", None, ""
    above = [line for line in lines[max(0, header_index - 6) : header_index] if line.strip()]
    for line in above[-3:]:
        if m := re.search(r"Version\s+(\S+)", line):
            version = m.group(1) if any(c.isdigit() for c in m.group(1)) else ""
        if m := re.search(r"Concurrency\s+(\d+)", line):
            concurrency = int(m.group(1))
        first = line.split()[0]
        if "-Create--" in line and not first.startswith("-"):
            machine = first
    kind = "files" if "files" in header else "io"
    return _Table(kind, header_index + 1, edges, version, concurrency, machine)


def _rows(lines: list[str], start: int, table: _Table, source: str) -> tuple[int, list[BonnieRow]]:
    """Rows up to the first line that is neither a row, a Latency line nor blank."""
    rows: list[BonnieRow] = []
    index = start
    while index < len(lines):
        number = index + 1
        words = tokens(lines[index].expandtabs())
        if not words:
            index += 1
            continue
        if words[0].text == "Latency":
            if not rows:
                raise ImportFormatError(source, number, "Latency line without a result row")
            latencies = _latencies(words[1:], table, source, number)
            if table.kind == "io":
                rows[-1].io_latency = latencies
            else:
                rows[-1].file_latency = latencies
            rows[-1].lines.append(number)
        else:
            parse_row = _io_row if table.kind == "io" else _file_row
            row = parse_row(words, table, source, number)
            if row is None:
                break
            rows.append(row)
        index += 1
    if not rows:
        raise ImportFormatError(source, table.header_line, "bonnie++ table without result rows")
    return index, rows


def _fmt(table: _Table) -> str:
    version = table.version
    family = "2.0x" if version.startswith("2") else "1.9x" if version.startswith("1.9") else "1.0x"
    return f"bonnie++ table {family}"


def _cells(values: list[Token], table: _Table, source: str, number: int) -> list[str | None]:
    if len(values) == len(table.edges):
        cells: list[str | None] = [v.text for v in values]
    else:
        cells = by_column(values, table.edges, source=source, line=number)
    if cells[-1] is None:
        raise ImportFormatError(source, number, "row ends before its last column (%CP): truncated?")
    return cells + [None] * (12 - len(cells))


def _is_heading(words: list[Token]) -> bool:
    """`Version 1.97  ------Sequential Create------` would otherwise pass for a row."""
    return words[0].text in ("Version", "Concurrency") or any(w.text[0] == "-" for w in words)


def _io_row(words: list[Token], table: _Table, source: str, number: int) -> BonnieRow | None:
    if len(words) < 3 or not _SIZE.fullmatch(words[1].text) or _is_heading(words):
        return None
    values = words[2:]
    if not all(is_figure(v.text) for v in values):
        bad = next(v.text for v in values if not is_figure(v.text))
        raise ImportFormatError(source, number, f"{bad!r} is not a bonnie++ figure")
    spec: dict[str, object] = {}
    if table.concurrency is not None:
        spec["concurrency"] = table.concurrency
    return BonnieRow(
        line=number,
        fmt=_fmt(table),
        version=table.version,
        name=words[0].text,
        size=words[1].text,
        io=_cells(values, table, source, number),
        spec=io_spec(words[1].text) | spec,
        lines=[number],
    )


def _file_row(words: list[Token], table: _Table, source: str, number: int) -> BonnieRow | None:
    if len(words) == 13:
        described, values = words[:1], words[1:]
    elif len(words) == 14:
        described, values = words[:2], words[2:]
    else:
        first_edge = table.edges[0] - 5  # cells are 5 wide: descriptions end before them
        described = [w for w in words if w.end <= first_edge]
        values = words[len(described) :]
    if _is_heading(words) or not described or len(described) > 2:
        return None
    if not _FILES.fullmatch(described[-1].text):
        return None
    if not all(is_figure(v.text) for v in values):
        bad = next(v.text for v in values if not is_figure(v.text))
        raise ImportFormatError(source, number, f"{bad!r} is not a bonnie++ figure")
    name = described[0].text if len(described) == 2 else table.machine
    return BonnieRow(
        line=number,
        fmt=_fmt(table),
        version=table.version,
        name=name,
        size="",
        io=None,
        file_spec=described[-1].text,
        files=_cells(values, table, source, number),
        lines=[number],
    )


def _latencies(values: list[Token], table: _Table, source: str, number: int) -> list[str | None]:
    for value in values:
        if not (_LATENCY.fullmatch(value.text) or is_plus(value.text)):
            raise ImportFormatError(source, number, f"{value.text!r} is not a latency")
    if len(values) == 6:
        return [v.text for v in values]
    # Each latency sits under its test's pair of cells, ending two columns left of %CP.
    edges = [edge - 2 for edge in table.edges[1::2]]
    cells = by_column(values, edges, source=source, line=number)
    return cells + [None] * (6 - len(cells))
