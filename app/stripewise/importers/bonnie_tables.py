"""The tables bonnie++ prints (and bon_csv2txt rebuilds), read row by row.

A table starts at its column header (`Machine Size K/sec %CP ...`, `Name:Size etc /sec %CP`,
`files /sec %CP` or `files:max:min /sec %CP`); the lines just above it give the version, the
concurrency and, for file tests, the machine name. Cells of tests that did not run are blank,
so a row that is not full is placed by column (`bonnie_columns`). Rows of a file-test table
belong, in order, to the rows of the sequential-I/O table before it.

One table or row that cannot be read is skipped and reported to `skipped`; the rest are read.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from stripewise.importers.bonnie_columns import (
    CutOff,
    Unplaced,
    latency_readings,
    pair_cells,
    place,
    readings_for,
)
from stripewise.importers.bonnie_fields import BonnieRow, io_spec, is_figure, is_plus
from stripewise.importers.common import Token, tokens
from stripewise.model.imported_run import ImportFormatError, digits

# The first Size or files is taken for good (atomic group): retrying at each later one scanned
# the rest of the line again each time, quadratic on a line of them.
TABLE_HEADER = re.compile(r"^(?>.*?(Size|files)\b).*/sec\s+%CP", re.IGNORECASE)
_SIZE = re.compile(r"[0-9]+(\.[0-9]+)?[kmgt]?(:\S*)*", re.IGNORECASE)
_FILES = re.compile(r"[0-9]+([:/]\S*)?")
_LATENCY = re.compile(r"[0-9]+(\.[0-9]+)?(ns|us|ms|s)")
_COLUMN_WORDS = {"/sec", "k/sec", "%cp", "%cpu"}
_FEWEST_COLUMN_WORDS = 4  # a header names at least two tests' figure and %CP
_MOST_PATTERNS = 8  # layouts of complete rows tried on a row with blank cells

Skip = Callable[[ImportFormatError], None]


@dataclass
class _Table:
    kind: str  # "io" or "files"
    header_line: int
    cp_edges: list[int]  # right edges of the %CP columns
    version: str
    concurrency: int | None
    machine: str  # from the `-Create--` line of file tables


@dataclass
class _Raw:
    """A row as words, before its figures are placed in columns."""

    number: int
    described: list[Token]  # machine and size, or (machine and) file count
    values: list[Token]
    latency: list[Token] | None = None
    latency_start: int = 0
    latency_line: int = 0


def parse_tables(lines: list[str], source: str, skip: Skip) -> list[BonnieRow]:
    rows: list[BonnieRow] = []
    io_rows: list[BonnieRow] = []  # rows of the latest I/O table, for file rows to join
    io_lost = False  # whether that table had a row skipped
    version = ""
    index = 0
    while index < len(lines):
        if not TABLE_HEADER.search(lines[index]):
            index += 1
            continue
        try:
            table = _table(lines, index, source)
        except ImportFormatError as error:
            skip(error)
            index += 1
            continue
        if table is None:  # prose that happens to read like a header
            index += 1
            continue
        # bon_csv2txt prints no Version line above the file-test table: it is the same run's.
        table.version = table.version or version
        version = table.version
        index, found, lost = _rows(lines, index + 1, table, source, skip)
        if table.kind == "io":
            rows.extend(found)
            io_rows, io_lost = found, lost
        elif not io_lost:
            rows.extend(_attach(io_rows, found))
        else:  # file rows left over belong to the runs skipped: no run of their own
            _attach(io_rows, found)
    return rows


def _attach(io_rows: list[BonnieRow], file_rows: list[BonnieRow]) -> list[BonnieRow]:
    """Join file-test rows to their machine's I/O rows; return those left on their own.

    bonnie++ prints one row of each per run. bon_csv2txt prints all I/O rows, then the file
    rows of only the runs that had file tests: per machine name the rows are joined in order
    when both tables have as many, and are otherwise kept as file-test-only runs rather than
    joined to a run they may not belong to.
    """
    alone: list[BonnieRow] = []
    by_name: dict[str, list[BonnieRow]] = {}
    for row in file_rows:
        by_name.setdefault(row.name, []).append(row)
    machines = _Machines(io_rows)
    for name, mine in by_name.items():
        theirs = machines.without_files(name)
        if len(mine) == len(theirs):
            for io_row, file_row in zip(theirs, mine, strict=True):
                _join(io_row, file_row)
        else:
            alone.extend(mine)
    return alone


class _Machines:
    """I/O rows by machine name, so each file row's machine is looked up, not found by a scan
    of every row (tables of many machines would take the square of their rows)."""

    def __init__(self, rows: list[BonnieRow]) -> None:
        self._rows = rows
        self._named: dict[str, list[int]] = {}
        for index, row in enumerate(rows):
            self._named.setdefault(row.name, []).append(index)
        self._names = sorted(self._named)  # those starting with a name are a range of these
        self._lengths = sorted({len(name) for name in self._named})

    def without_files(self, name: str) -> list[BonnieRow]:
        """In file order, the rows still without file tests whose machine is `name`'s: either
        name the start of the other, as tables cut long names to fit (`c6300-optimiz` is
        `c6300-optimized`), or `name` empty."""
        if not name:
            found: set[int] | range = range(len(self._rows))
        else:
            found = set()
            at = bisect.bisect_left(self._names, name)
            while at < len(self._names) and self._names[at].startswith(name):
                found.update(self._named[self._names[at]])
                at += 1
            for length in self._lengths:  # rows whose name is the start of this one
                if length >= len(name):
                    break
                found.update(self._named.get(name[:length], ()))
        return [self._rows[i] for i in sorted(found) if self._rows[i].files is None]


def _join(io_row: BonnieRow, file_row: BonnieRow) -> None:
    io_row.file_spec = file_row.file_spec
    io_row.files = file_row.files
    io_row.file_latency = file_row.file_latency
    io_row.lines.extend(file_row.lines)


def _table(lines: list[str], header_index: int, source: str) -> _Table | None:
    header = lines[header_index]
    edges = [t.end for t in tokens(header) if t.text.lower() in _COLUMN_WORDS]
    if len(edges) < _FEWEST_COLUMN_WORDS:
        return None
    if len(edges) % 2 or len(edges) > 12:
        raise ImportFormatError(
            source, header_index + 1, f"bonnie++ table header with {len(edges)} columns"
        )
    version, concurrency, machine = "", None, ""
    above = [line for line in lines[max(0, header_index - 6) : header_index] if line.strip()]
    for line in above[-3:]:
        if m := re.search(r"Version\s+(\S+)", line):
            version = m.group(1) if any(digits(c) for c in m.group(1)) else ""
        if m := re.search(r"Concurrency\s+([0-9]+)", line):
            concurrency = int(m.group(1))
        first = line.split()[0]
        if "-Create--" in line and not first.startswith("-"):
            machine = first
    kind = "files" if "files" in header.lower() else "io"
    return _Table(kind, header_index + 1, edges[1::2], version, concurrency, machine)


def _rows(
    lines: list[str], start: int, table: _Table, source: str, skip: Skip
) -> tuple[int, list[BonnieRow], bool]:
    """Rows up to the first line that is neither a row, a Latency line nor blank, and whether
    any was skipped."""
    raws: list[_Raw] = []
    last: _Raw | None = None  # the row a Latency line belongs to; None after a skipped row
    skipped = False
    index = start
    while index < len(lines):
        number = index + 1
        words = tokens(lines[index])
        index += 1
        if not words:
            continue
        try:
            if words[0].text == "Latency":
                if last is not None:
                    _latency_words(last, words, source, number)
                elif not skipped:
                    raise ImportFormatError(source, number, "Latency line without a result row")
                continue
            raw = _raw_row(words, table, source, number)
        except ImportFormatError as error:
            skip(error)
            last, skipped = None, True
            continue
        if raw is None:
            index -= 1
            break
        raws.append(raw)
        last = raw
    rows = _placed(raws, table, source, skip)
    if not raws and not skipped:
        skip(ImportFormatError(source, table.header_line, "bonnie++ table without result rows"))
    return index, rows, skipped or len(rows) < len(raws)


def _latency_words(row: _Raw, words: list[Token], source: str, number: int) -> None:
    for value in words[1:]:
        if not (_LATENCY.fullmatch(value.text) or is_plus(value.text)):
            raise ImportFormatError(source, number, f"{value.text!r} is not a latency")
    row.latency, row.latency_start, row.latency_line = words[1:], words[0].start, number


def _is_heading(words: list[Token]) -> bool:
    """`Version 1.97  ------Sequential Create------` would otherwise pass for a row."""
    return words[0].text in ("Version", "Concurrency") or any(w.text[0] == "-" for w in words)


def _raw_row(words: list[Token], table: _Table, source: str, number: int) -> _Raw | None:
    """The row's words, or None for a line that is not a row of this table (its end)."""
    if _is_heading(words):
        return None
    if table.kind == "io":
        if len(words) < 3 or not _SIZE.fullmatch(words[1].text):
            return None
        described, values = words[:2], words[2:]
    else:
        # bonnie++ prints the file count alone; bon_csv2txt puts the machine before it.
        if len(words) in (13, 14):
            count = len(words) - 12
        else:
            count = 1 if _FILES.fullmatch(words[0].text) else 2
        described, values = words[:count], words[count:]
        if not _FILES.fullmatch(described[-1].text):
            return None
    if not values:
        return None
    if not all(is_figure(v.text) for v in values):
        bad = next(v.text for v in values if not is_figure(v.text))
        raise ImportFormatError(source, number, f"{bad!r} is not a bonnie++ figure")
    return _Raw(number, described, values)


def _placed(raws: list[_Raw], table: _Table, source: str, skip: Skip) -> list[BonnieRow]:
    columns = len(table.cp_edges)
    patterns = (
        tuple(raw.values[2 * j + 1].end - raw.described[-1].end for j in range(columns))
        for raw in raws
        if len(raw.values) == 2 * columns
    )
    # Machine-printed rows share one pattern; a few distinct ones are enough for the others.
    complete = [list(p) for p in dict.fromkeys(patterns)][:_MOST_PATTERNS]
    rows: list[BonnieRow] = []
    for raw in raws:
        try:
            rows.append(_row(raw, table, complete, source))
        except ImportFormatError as error:
            skip(error)
    return rows


def _row(raw: _Raw, table: _Table, complete: list[list[int]], source: str) -> BonnieRow:
    readings = readings_for(table.cp_edges, raw.described[-1].end, complete)
    try:
        cells, shift = pair_cells(raw.values, readings, len(table.cp_edges))
    except CutOff as why:
        raise ImportFormatError(source, raw.number, str(why)) from None
    except Unplaced as why:
        raise ImportFormatError(source, raw.number, f"row not read: {why}") from None
    cells += [None] * (12 - len(cells))
    latencies = _latencies(raw, table, shift, source)
    lines = [raw.number] + ([raw.latency_line] if raw.latency_line else [])
    row = BonnieRow(
        line=raw.number,
        fmt=_fmt(table),
        version=table.version,
        name="",
        size="",
        io=None,
        lines=lines,
    )
    if table.kind == "io":
        row.name, row.size = raw.described[0].text, raw.described[1].text
        row.io, row.io_latency = cells, latencies
        row.spec = io_spec(row.size)
        if table.concurrency is not None:
            row.spec["concurrency"] = table.concurrency
    else:
        row.name = raw.described[0].text if len(raw.described) == 2 else table.machine
        row.file_spec = raw.described[-1].text
        row.files, row.file_latency = cells, latencies
    return row


def _latencies(raw: _Raw, table: _Table, shift: int, source: str) -> list[str | None] | None:
    if raw.latency is None:
        return None
    readings = latency_readings(table.cp_edges, raw.latency_start, shift)
    try:
        ends = [t.end for t in raw.latency]
        slots, _ = place(ends, readings, len(table.cp_edges), ends_full=False)
    except Unplaced as why:
        raise ImportFormatError(source, raw.latency_line, f"latencies not read: {why}") from None
    cells: list[str | None] = [None] * 6
    for token, slot in zip(raw.latency, slots, strict=True):
        cells[slot] = token.text
    return cells


def _fmt(table: _Table) -> str:
    version = table.version
    family = "2.0x" if version.startswith("2") else "1.9x" if version.startswith("1.9") else "1.0x"
    return f"bonnie++ table {family}"
