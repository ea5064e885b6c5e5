"""bonnie++ results: CSV lines (1.0x, 1.96/1.97, 1.98 of 2.00a) or the tables it prints.

When a file holds CSV lines, only they are read: bonnie++ without `-q` prints the table and
the CSV line of the same run, and the CSV keeps full precision. Each machine-and-size row
becomes one run. Other text (progress lines, shell prompts, notes) is skipped.
"""

from __future__ import annotations

import re

from stripewise.importers.bonnie_fields import BonnieRow, file_spec, io_spec, results_of
from stripewise.importers.bonnie_tables import TABLE_HEADER, parse_tables
from stripewise.importers.common import (
    NAME_MAX,
    ImportedRun,
    ImportFormatError,
    clip,
    text_lines,
)

ENGINE = "bonnie++"

# 1.96/1.97 write 48 fields; 1.98 (bonnie++ 2.00a) adds seeks and seeker processes after
# the chunk size. Their header line (printed with -x) still names only 48: it is skipped.
_NEW_VERSION = re.compile(r"(1\.9\d|[2-9]\.\d\d)[a-z]?")
_OLD_SIZE = re.compile(r"\d+(\.\d+)?[kmgt]?(:[\w]*)*", re.IGNORECASE)
_FIGURE = re.compile(r"(\d+(\.\d+)?|\++)?")
_HEADER_STARTS = ("format_version,", "name,")


def looks_like(lines: list[str]) -> bool:
    return any(TABLE_HEADER.search(line) or _csv_kind(line) for line in lines)


def parse(text: str, source: str) -> list[ImportedRun]:
    lines = text_lines(text)
    rows = _csv_rows(lines, source)
    suffixed = False
    if not rows:
        rows = parse_tables(lines, source)
        suffixed = True
    if not rows:
        raise ImportFormatError(source, 1, "no bonnie++ CSV line or result table found")
    return [_run(row, source, suffixed=suffixed) for row in rows]


def _csv_kind(line: str) -> str | None:
    """'new' (1.9x), 'old' (1.0x) or None for lines that are not bonnie++ CSV."""
    text = line.strip()
    if "," not in text or text.startswith(_HEADER_STARTS):
        return None
    fields = _fields(text)
    if _NEW_VERSION.fullmatch(fields[0]) and _NEW_VERSION.fullmatch(fields[1]):
        return "new"
    # 1.0x lines start `name,size,` and go on with figures; prose with commas does not.
    name, head = fields[0], fields[1:13]
    if (
        len(fields) >= 8
        and name
        and not any(c.isspace() for c in name)
        and _OLD_SIZE.fullmatch(fields[1])
        and all(_FIGURE.fullmatch(f) for f in head[1:])
    ):
        return "old"
    return None


def _fields(line: str) -> list[str]:
    """bonnie++ never quotes; a spreadsheet saving the file again may."""
    return [f.strip().strip('"').strip() for f in line.strip().split(",")]


def _csv_rows(lines: list[str], source: str) -> list[BonnieRow]:
    rows: list[BonnieRow] = []
    for number, line in enumerate(lines, start=1):
        kind = _csv_kind(line)
        if kind is None:
            continue
        fields = _fields(line)
        row = (
            _new_row(fields, number, source) if kind == "new" else _old_row(fields, number, source)
        )
        rows.append(row)
    return rows


def _fit(fields: list[str], expected: tuple[int, ...], number: int, source: str) -> list[str]:
    """Trailing empty fields beyond the format's count are tolerated; anything else is not."""
    while len(fields) > max(expected) and fields[-1] == "":
        fields = fields[:-1]
    if len(fields) not in expected:
        wanted = " or ".join(str(n) for n in expected)
        raise ImportFormatError(
            source, number, f"expected {wanted} fields, found {len(fields)} (truncated line?)"
        )
    return fields


def _new_row(fields: list[str], number: int, source: str) -> BonnieRow:
    fmt_version = fields[0]
    with_seeks = float(fmt_version.rstrip("abcdefghijklmnopqrstuvwxyz")) >= 1.98
    fields = _fit(fields, (50,) if with_seeks else (48,), number, source)
    spec = io_spec(fields[5] + (":" + fields[6] if fields[6] else ""))
    numbers = {"concurrency": fields[3], "seed": fields[4]}
    if with_seeks:
        numbers |= {"seeks": fields[7], "seeker_processes": fields[8]}
    spec |= {key: int(value) for key, value in numbers.items() if value.isdigit()}
    at = 9 if with_seeks else 7
    io = fields[at : at + 12]
    files_at = at + 12
    count, largest, smallest, dirs, chunk = fields[files_at : files_at + 5]
    described = f"{count}:{largest}:{smallest}/{dirs}:{chunk}" if count else ""
    cells = fields[files_at + 5 : files_at + 17]
    latencies = fields[files_at + 17 : files_at + 29]
    has_files = bool(count) or any(cells)
    return BonnieRow(
        line=number,
        fmt=f"bonnie++ csv {fmt_version}",
        version=fields[1],
        name=fields[2],
        size=fields[5],
        io=_cells(io),
        io_latency=_cells(latencies[:6]),
        file_spec=described,
        files=_cells(cells) if has_files else None,
        file_latency=_cells(latencies[6:]) if has_files else None,
        spec=spec,
        lines=[number],
    )


def _old_row(fields: list[str], number: int, source: str) -> BonnieRow:
    name, colon, size = fields[0].rpartition(":")
    if colon and _OLD_SIZE.fullmatch(size) and _FIGURE.fullmatch(fields[1]):
        # Some 1.0x builds join machine name and size with a colon: `host:4000M,47455,...`.
        fields = [name, size, *_fit(fields, (13, 26), number, source)[1:]]
    fields = _fit(fields, (14, 27), number, source)
    has_files = len(fields) == 27 and any(fields[14:])
    return BonnieRow(
        line=number,
        fmt="bonnie++ csv 1.0x",
        version="",
        name=fields[0],
        size=fields[1],
        io=_cells(fields[2:14]),
        file_spec=fields[14] if has_files else "",
        files=_cells(fields[15:27]) if has_files else None,
        spec=io_spec(fields[1]),
        lines=[number],
    )


def _cells(fields: list[str]) -> list[str | None]:
    return [f or None for f in fields]


def _run(row: BonnieRow, source: str, *, suffixed: bool) -> ImportedRun:
    results, missing = results_of(row, source, suffixed=suffixed)
    spec = dict(row.spec)
    if row.file_spec:
        spec["file_test"] = file_spec(row.file_spec)
    size = spec.get("file_size", row.size)
    target = f"{row.name} {size}".strip()
    context: dict[str, object] = {
        "format": row.fmt,
        "line": row.line,
        "lines": row.lines,
        "machine": row.name,
        "file_size_bytes": spec.get("file_size_bytes"),
        **{key: names for key, names in missing.items() if names},
    }
    return ImportedRun(
        name=clip(f"bonnie++ {target}", NAME_MAX),
        host=row.name or None,
        engine=ENGINE,
        engine_version=row.version,
        target=target,
        started_at=None,
        spec=spec,
        context=context,
        results=results,
    )
