"""iozone `-a` tables: one row per (file size kB, record size kB), one column per test.

Tests left out with `-i` leave blank fixed-width cells mid-row, so figures are placed by the
column their end lines up with (the header's words end within a character of the figures).
A pasted table may be indented differently from the original: positions are taken relative
to the row's first figure (the file size) and the header's "kB". A row that cannot be read
(a garbled cell, more figures than tests) is skipped and named in one warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from stripewise.importers.common import Token, by_column, is_number, tokens
from stripewise.model.imported_run import ImportFormatError, clip, digits
from stripewise.model.run import ResultValue

AUTO_HEADER = re.compile(r"^\s*kB\s+reclen\b", re.IGNORECASE)
# Column order of every iozone version's -a table.
AUTO_TESTS = (
    "write",
    "rewrite",
    "read",
    "reread",
    "random_read",
    "random_write",
    "bkwd_read",
    "record_rewrite",
    "stride_read",
    "fwrite",
    "frewrite",
    "fread",
    "freread",
)
_ROW_START = re.compile(r"^\s*[0-9]")

Made = tuple[str, dict[str, Any], dict[str, Any], list[ResultValue]]


class _NoRow(ImportFormatError):
    """A line inside a table that is no row of it (a stray line, a note typed into a paste)."""


def metric_name(file_kb: int, record_kb: int) -> str:
    return f"{file_kb}k_file_{record_kb}k_records"


@dataclass
class _Table:
    header: list[Token]
    line: int
    rows: dict[tuple[int, int], list[str | None]] = field(default_factory=dict)
    last_line: int = 0

    def edges(self, offset: int, count: int) -> list[int]:
        # A row has `count` figures at most: a header's words past twice that many are not
        # read (a header of thousands of words made every row cost as much)
        ends = [t.end + offset for t in self.header[2 : 2 + 2 * count]]
        if not ends:  # a header cut to "kB reclen": iozone's 9-wide cells follow
            ends = [self.header[-1].end + offset + 9]
        step = ends[-1] - ends[-2] if len(ends) > 1 else 9
        while len(ends) < count:  # a header cut short when pasted: extend its spacing
            ends.append(ends[-1] + step)
        return ends


def auto_runs(
    lines: list[str], start: int, end: int, source: str, *, ops: bool, warnings: list[str]
) -> list[Made]:
    tables: list[_Table] = []
    table: _Table | None = None  # the open table, while its rows continue
    skipped: list[ImportFormatError] = []
    # Lines since a line that is no row: inside the table (a stray line, skipped and named)
    # if a row follows them, else text after it.
    held: list[ImportFormatError] = []
    for index in range(start, end):
        line = lines[index].expandtabs()
        number = index + 1
        if AUTO_HEADER.match(line):
            header = tokens(line)
            held = []
            # A repeated header continues the same run unless its rows then repeat.
            if tables and [t.text for t in tables[-1].header] == [t.text for t in header]:
                table = tables[-1]
            else:
                table = _Table(header, number)
                tables.append(table)
            continue
        if table is None or not line.strip():
            continue
        if not _ROW_START.match(line):
            shown = clip(" ".join(line.split()), 80)
            held.append(_NoRow(source, number, f"{shown!r} is no iozone -a table row"))
            continue
        try:
            key, cells = _row(line, table, source, number)
        except ImportFormatError as exc:
            (held if held else skipped).append(exc)
            continue
        skipped += held
        held = []
        if key in table.rows:  # the same sizes again: another run pasted below this one
            table = _Table(table.header, number)
            tables.append(table)
        table.rows[key] = cells
        table.last_line = number
    made = [_made(t, ops) for t in tables if t.rows]
    if skipped and not made:
        raise skipped[0]  # nothing of the table could be read: the file's error
    if skipped:
        first, more = skipped[0], len(skipped) - 1
        kind = "line" if any(isinstance(e, _NoRow) for e in skipped) else "row"
        also = f" (and {more} more {kind}s, the last at line {skipped[-1].line})" if more else ""
        warnings.append(f"{first}{also}; the {kind} was skipped, the rest of the table read")
    return made


def _row(
    line: str, table: _Table, source: str, number: int
) -> tuple[tuple[int, int], list[str | None]]:
    words = tokens(line)
    for word in words:
        if not is_number(word.text):
            raise ImportFormatError(source, number, f"{word.text!r} in an iozone -a table row")
    if len(words) < 3 or not digits(words[0].text) or not digits(words[1].text):
        raise ImportFormatError(
            source, number, "iozone -a row without file size, record size and a figure"
        )
    values = words[2:]
    columns = len(table.header) - 2
    if len(values) > len(AUTO_TESTS):
        raise ImportFormatError(
            source, number, f"{len(values)} figures for {len(AUTO_TESTS)} tests"
        )
    if len(values) == columns:
        cells: list[str | None] = [v.text for v in values]
    else:
        offset = words[0].end - table.header[0].end
        edges = table.edges(offset, len(AUTO_TESTS))
        cells = by_column(values, edges, source=source, line=number)
    return (int(words[0].text), int(words[1].text)), cells


def _made(table: _Table, ops: bool) -> Made:
    unit = "ops/s" if ops else "KiB/s"
    width = max(len(cells) for cells in table.rows.values())
    ran = [
        i for i in range(width) if any(i < len(c) and c[i] is not None for c in table.rows.values())
    ]
    results: list[ResultValue] = []
    for column in ran:
        phase = AUTO_TESTS[column] if column < len(AUTO_TESTS) else f"column_{column + 1}"
        for (file_kb, record_kb), cells in table.rows.items():
            cell = cells[column] if column < len(cells) else None
            value = float(cell) if cell is not None else None
            results.append(ResultValue(phase, metric_name(file_kb, record_kb), unit, value))
    file_sizes = sorted({f for f, _ in table.rows})
    record_sizes = sorted({r for _, r in table.rows})
    tests = [AUTO_TESTS[c] for c in ran if c < len(AUTO_TESTS)]
    spec: dict[str, Any] = {
        "file_sizes_kB": file_sizes,
        "record_sizes_kB": record_sizes,
        "tests": tests,
    }
    context: dict[str, Any] = {
        "line": table.line,
        "lines": [table.line, table.last_line],
        "rows": len(table.rows),
        "tests_not_run": [t for t in AUTO_TESTS if t not in tests],
    }
    if len(file_sizes) == 1:
        context["file_size_bytes"] = file_sizes[0] * 1024
    return "iozone -a table", spec, context, results
