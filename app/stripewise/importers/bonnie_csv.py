"""bonnie++ CSV lines: 1.0x (`name,size,...`), 1.96/1.97 (48 fields) and 1.98 (50 fields).

A CSV line pasted from a terminal or a web page is often wrapped at 80 columns; the pieces of a
line are joined again when together they make the fields of its format. A line that still has
the wrong number of fields is skipped and reported; the others are read. So is a line that has
the shape of a CSV line but a garbled size, figure or version (`fileserver,2xG,10862,...`):
it is named in a warning, never dropped in silence nor joined to the line before it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from stripewise.importers.bonnie_fields import BonnieRow, io_spec, size_bytes
from stripewise.model.imported_run import ImportFormatError, digits

# 1.96/1.97 write 48 fields; 1.98 (bonnie++ 2.00a) adds seeks and seeker processes after
# the chunk size. Their header line (printed with -x) still names only 48: it is skipped.
_NEW_VERSION = re.compile(r"(1\.9[0-9]|[2-9]\.[0-9][0-9])[a-z]?")
_OLD_SIZE = re.compile(r"[0-9]+(\.[0-9]+)?[kmgt]?(:[\w]*)*", re.IGNORECASE)
_FIGURE = re.compile(r"([0-9]+(\.[0-9]+)?|\++)?")
_HEADER_STARTS = ("format_version,", "name,")
_PIECE = re.compile(r"[\w.+:/,\"-]+")  # what a wrapped CSV line's next piece may hold
_MOST_PIECES = 4  # a 50-field line of about 250 characters wrapped at 80 columns
_MOST_GARBLED = 4  # of the 12 I/O fields of a 1.0x line: more and it is no bonnie++ line

Skip = Callable[[ImportFormatError], None]


def csv_kind(line: str) -> str | None:
    """'new' (1.9x), 'old' (1.0x) or None for lines that are not bonnie++ CSV."""
    text = line.strip()
    if "," not in text or text.startswith(_HEADER_STARTS):
        return None
    fields = _fields(text)
    if len(fields) > 1 and _NEW_VERSION.fullmatch(fields[0]) and _NEW_VERSION.fullmatch(fields[1]):
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


def damaged(line: str) -> str | None:
    """Why a line shaped like a bonnie++ CSV line (its field count, a machine name, mostly
    figures) cannot be read, or None: `csv_kind` refuses it, yet skipping it silently would
    drop a run."""
    text = line.strip()
    if "," not in text or text.startswith(_HEADER_STARTS) or csv_kind(text):
        return None
    fields = _fields(text)
    versions = [bool(_NEW_VERSION.fullmatch(f)) for f in fields[:2]]
    if any(versions) and len(_untrailed(fields, 50)) in (48, 50):
        bad = fields[versions.index(False)]
        return f"version field {bad!r} is not a bonnie++ CSV version such as 1.98"
    fields = _untrailed(fields, 27)
    name, size, io = fields[0], fields[1], fields[2:14]
    garbled = [f for f in io if not _FIGURE.fullmatch(f)]
    if (
        len(fields) not in (13, 14, 26, 27)
        or not name
        or any(c.isspace() for c in name)
        or _FIGURE.fullmatch(name)  # the rest of a wrapped line starts mid-figure
        or len(garbled) > _MOST_GARBLED
        or not any(io)
    ):
        return None
    if not _OLD_SIZE.fullmatch(size):
        return f"size field {size!r} is not a bonnie++ size such as 2G or 4000M"
    return f"{garbled[0]!r} is not a bonnie++ figure"


def _fields(line: str) -> list[str]:
    """bonnie++ never quotes; a spreadsheet saving the file again may."""
    if '"' not in line:
        return [f.strip() for f in line.strip().split(",")]
    return [f.strip().strip('"').strip() for f in line.strip().split(",")]


def csv_rows(lines: list[str], source: str, skip: Skip) -> Iterator[BonnieRow]:
    """The CSV lines' rows in file order, one at a time (a file of 100,000 runs is never
    held as rows); what cannot be read goes to `skip`."""
    used: set[int] = set()  # lines joined to the line before them
    kinds: dict[int, str | None] = {}  # of the next line, found while joining a wrapped one
    header = False  # since the last row: `-x` writes one at the start of its series
    for index, line in enumerate(lines):
        kind = kinds.pop(index) if index in kinds else csv_kind(line)
        if index in used:  # forgotten once passed: the set holds a line's pieces at most
            used.discard(index)
            continue
        number = index + 1
        if kind is None:
            header = header or line.strip().startswith(_HEADER_STARTS)
            if (why := damaged(line)) is not None:
                skip(ImportFormatError(source, number, why))
            continue
        read = _new_row if kind == "new" else _old_row
        try:
            fields, pieces = _whole(lines, index, kind, kinds)
            row = read(fields, number, source)
        except ImportFormatError as error:
            skip(error)
            continue
        used.update(range(index + 1, index + pieces))
        row.lines = list(range(number, number + pieces))
        row.after_header, header = header, False
        yield row


def _expected(kind: str, fields: list[str]) -> tuple[int, ...]:
    if kind == "old":
        return (13, 14, 26, 27)
    version = fields[0].rstrip("abcdefghijklmnopqrstuvwxyz")
    return (50,) if float(version) >= 1.98 else (48,)


def _fits(kind: str, fields: list[str]) -> bool:
    expected = _expected(kind, fields)
    return len(_untrailed(fields, max(expected))) in expected


def _complete(line: str, kind: str | None) -> bool:
    """A CSV line of its own, not the rest of the line before (which may look like one); a
    damaged one too: joined on, its fields would be read as the file tests of the line before."""
    if kind is None:
        return damaged(line) is not None
    return _fits(kind, _fields(line))


def _whole(
    lines: list[str], index: int, kind: str, kinds: dict[int, str | None]
) -> tuple[list[str], int]:
    """The fields of the CSV line at `index` and how many lines it spans (1 unless wrapped).

    The lines after it are its rest when joined on they make its format's fields and are not
    CSV lines of their own. The line alone is taken when it fits, unless a join fits with more
    fields: a 1.0x line cut after its 14th field would pass for a run without file tests.
    """
    text = lines[index].strip()
    alone = _fields(text)
    joined = text
    for pieces in range(2, _MOST_PIECES + 1):
        at = index + pieces - 1
        piece = lines[at].strip() if at < len(lines) else ""
        if not piece or not _PIECE.fullmatch(piece):
            break
        if at not in kinds:
            kinds[at] = csv_kind(piece)
        if _complete(piece, kinds[at]):
            break
        joined += piece
        fields = _fields(joined)
        if _fits(kind, fields) and not (_fits(kind, alone) and len(fields) <= len(alone)):
            return fields, pieces
    return alone, 1


def _fit(fields: list[str], expected: tuple[int, ...], number: int, source: str) -> list[str]:
    """Trailing empty fields beyond the format's count are tolerated; anything else is not."""
    fields = _untrailed(fields, max(expected))
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
    if fields[5] and size_bytes(fields[5], "m") is None:
        raise ImportFormatError(
            source, number, f"size field {fields[5]!r} is not a bonnie++ size such as 1G or 256M"
        )
    spec = io_spec(fields[5] + (":" + fields[6] if fields[6] else ""))
    numbers = {"concurrency": fields[3], "seed": fields[4]}
    if with_seeks:
        numbers |= {"seeks": fields[7], "seeker_processes": fields[8]}
    spec |= {key: int(value) for key, value in numbers.items() if digits(value)}
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


def _untrailed(fields: list[str], most: int) -> list[str]:
    """`fields` without the empty ones at its end past the first `most`, cut once (a copy
    per field dropped is quadratic on a line of commas)."""
    end = len(fields)
    while end > most and fields[end - 1] == "":
        end -= 1
    return fields[:end]


def _cells(fields: list[str]) -> list[str | None]:
    return [f or None for f in fields]
