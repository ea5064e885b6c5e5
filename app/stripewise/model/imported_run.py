"""What every importer hands back, and the one error they raise for input they cannot read:
values below the parsers (importers, and fio's in stripewise.fio), with the few text rules
they all follow (line endings and quoting, ASCII digits, names clipped to their columns)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from stripewise.model.run import ResultValue, RunStatus

# Columns of the history tables the names end up in (String(64) / String(255)).
PHASE_MAX = 64
NAME_MAX = 255

_QUOTED = re.compile(r"^[ \t]*(?:>[ \t]?)++")  # possessive: no state kept per marker


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
    # What the parser skipped in the file ("r.txt line 7: ..."), one line each, the same on
    # every run of the file: read them once with `file_warnings`.
    warnings: tuple[str, ...] = ()
    # `failed`: the tool says a job ended with an error (its figures are of a job cut short)
    status: RunStatus = RunStatus.COMPLETE


def text_lines(text: str) -> list[str]:
    """Lines without their endings: CRLF, CR and a leading byte-order mark are tolerated,
    and e-mail quoting (`> `) is removed, the same width from each line of a quoted table."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return [_QUOTED.sub("", line) for line in text.split("\n")]


def digits(text: str) -> bool:
    """ASCII digits only: str.isdigit() also takes "１２３" and "²", which int() reads or
    refuses, never what a tool printed."""
    return text.isascii() and text.isdigit()


def clip(text: str, limit: int = PHASE_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
