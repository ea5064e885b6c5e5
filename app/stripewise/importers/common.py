"""What every importer hands back, and the one error they raise for input they cannot read.

Importers only parse text: they never touch the database, Qt or other processes, so they can
be tested on recorded output alone and reused by the CLI and the GUI alike.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from stripewise.model.run import ResultValue

# Columns of the history tables the names end up in (String(64) / String(255)).
PHASE_MAX = 64
NAME_MAX = 255

_QUOTED = re.compile(r"^[ \t]*(?:>[ \t]?)+")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


class ImportFormatError(ValueError):
    """Input that is not (or no longer) what its format promises; names the file and line."""

    def __init__(self, source: str, line: int, message: str) -> None:
        self.source = source
        self.line = line
        self.message = message
        super().__init__(f"{source} line {line}: {message}")


@dataclass(frozen=True)
class ImportedRun:
    """One run read from a results file, ready to be stored as a history run.

    `host` is the machine name the file gives (None when it gives none); `started_at` is
    timezone-aware or None when the file holds no unambiguous time. Missing figures are
    `ResultValue(value=None)`, never 0.
    """

    name: str
    host: str | None
    engine: str
    engine_version: str
    target: str
    started_at: datetime | None
    spec: dict[str, Any]
    context: dict[str, Any]
    results: list[ResultValue]


def decode(data: bytes) -> str:
    """A file's text: UTF-16 when it starts with its byte-order mark (PowerShell's `>`),
    else UTF-8 with undecodable bytes replaced (old logs are often Latin-1)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8", errors="replace")


def text_lines(text: str) -> list[str]:
    """Lines without their endings: CRLF, CR and a leading byte-order mark are tolerated,
    and e-mail quoting (`> `) is removed, the same width from each line of a quoted table."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return [_QUOTED.sub("", line) for line in text.split("\n")]


def is_number(token: str) -> bool:
    return _NUMBER.fullmatch(token) is not None


def number(token: str) -> float:
    """A plain decimal figure; raises ValueError for anything else (no inf/nan words)."""
    if not is_number(token):
        raise ValueError(token)
    return float(token)


def clip(text: str, limit: int = PHASE_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Token:
    """A whitespace-separated word with its column span (tabs already expanded)."""

    start: int
    end: int
    text: str


def tokens(line: str) -> list[Token]:
    return [Token(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", line)]


def by_column(values: list[Token], edges: list[int], *, source: str, line: int) -> list[str | None]:
    """Right-aligned figures to the columns whose right edges are `edges`.

    Fixed-width tables leave blank cells for tests that did not run, so a figure belongs to
    the column whose edge is nearest its end. A figure wider than its column pushes the rest
    of the row right (bonnie++ 1.0x prints `271440` in a 5-wide cell), so the overflow is
    carried along as a shift.
    """
    cells: list[str | None] = [None] * len(edges)
    shift = 0
    column = 0
    for token in values:
        if column >= len(edges):
            raise ImportFormatError(source, line, f"more figures than columns at {token.text!r}")
        best = min(range(column, len(edges)), key=lambda j: abs(token.end - edges[j] - shift))
        cells[best] = token.text
        shift = token.end - edges[best]
        column = best + 1
    return cells
