"""What every importer hands back, and the one error they raise for input they cannot read
(`ImportedRun`, `ImportFormatError`, defined in model.imported_run so that the fio importer in
stripewise.fio builds them too), with the checks every importer's runs pass.

Importers only parse text: they never touch the database, Qt or other processes, so they can
be tested on recorded output alone and reused by the CLI and the GUI alike.
"""

from __future__ import annotations

import codecs
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from stripewise.model.imported_run import ImportedRun, ImportFormatError, text_lines

# The most any run can report, by unit (a petabyte per second, a trillion operations per
# second, 11 days of latency, CPU % summed over many processes): only garbage reaches them.
CEILINGS = {
    "MB/s": 1e9,
    "KiB/s": 1e12,
    "IOPS": 1e12,
    "ops/s": 1e12,
    "/s": 1e12,
    "us": 1e12,
    "%": 1e6,
}
OTHER_CEILING = 1e18  # KiB, ops
SIZE_SUFFIXES = {"_bytes": 2**60, "_kB": 2**50}  # sizes in a spec or context: an exbibyte
# No tool writes a longer run of digits; int() refuses 4,300 of them and float() turns 400
# into infinity.
MAX_DIGITS = 30
_LONG_NUMBER = re.compile(rf"[0-9]{{{MAX_DIGITS + 1},}}")

# `\d+(?:\.\d*)?`, not `\d+\.?\d*`: two runs of digits side by side split a long word of digits
# every way before refusing it (quadratic in the word).
_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def file_warnings(runs: Sequence[ImportedRun]) -> list[str]:
    """The warnings of one file's runs, each once, in file order."""
    return list(dict.fromkeys(w for run in runs for w in run.warnings))


def decode(data: bytes) -> str:
    """A file's text: UTF-16 when it starts with its byte-order mark (PowerShell's `>`),
    else UTF-8 with undecodable bytes replaced (old logs are often Latin-1)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8", errors="replace")


def is_number(token: str) -> bool:
    return _NUMBER.fullmatch(token) is not None


def number(token: str) -> float:
    """A plain decimal figure; raises ValueError for anything else (no inf/nan words)."""
    if not is_number(token):
        raise ValueError(token)
    return float(token)


def check_digits(text: str, source: str) -> None:
    """Refuse a file holding a number of more than MAX_DIGITS digits, naming its line."""
    found = _LONG_NUMBER.search(text)
    if found is not None:
        line = len(text_lines(text[: found.start()]))
        raise ImportFormatError(source, line, f"a number of {len(found.group())} digits")


def check_run(run: ImportedRun, source: str) -> None:
    """Refuse figures no run can have (NaN, infinite, negative, past their unit's ceiling) and
    sizes past an exbibyte in its spec and context; the error names the field."""
    line = run.context.get("line", 1)
    for result in run.results:
        ceiling = CEILINGS.get(result.unit, OTHER_CEILING)
        for value in (result.value, result.min_value, result.max_value):
            if value is not None and not 0 <= value <= ceiling:
                raise ImportFormatError(
                    source,
                    line,
                    f"{result.phase} {result.metric}: {value:g} {result.unit} is out of range "
                    f"(0 to {ceiling:g})",
                )
    _check_sizes(run.spec, source, line)
    _check_sizes(run.context, source, line)


@functools.lru_cache(maxsize=1024)
def _size_ceiling(key: str) -> int | None:
    """The ceiling of a size named `key` (None: not a size), once per key: a file of 100,000
    runs repeats a few dozen keys (bounded: a hostile file may name many)."""
    return next((c for end, c in SIZE_SUFFIXES.items() if key.endswith(end)), None)


def _check_sizes(values: Mapping[str, Any], source: str, line: int) -> None:
    for key, value in values.items():
        if isinstance(value, Mapping):
            _check_sizes(value, source, line)
        ceiling = _size_ceiling(key)
        if ceiling is None or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not 0 <= value <= ceiling:
            raise ImportFormatError(
                source, line, f"{key}: {value:g} is out of range (0 to an exbibyte)"
            )


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


Key = TypeVar("Key")


class SharedNames(Generic[Key]):
    """Runs of one file sharing a name (bonnie++ -x 3) get `#1`, `#2`... to tell them apart,
    numbered as they come: a run whose name came before gets its number at once, and the
    first of that name is named again when the second comes (in `renamed`, for the caller to
    apply and clear). Holds a count per distinct name, never the runs."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._firsts: dict[str, Key] = {}
        self.renamed: list[tuple[Key, str]] = []

    def name(self, name: str, key: Key) -> str:
        """The name of the run `key` (its index, its id) named `name` in the file."""
        count = self._counts.get(name, 0) + 1
        self._counts[name] = count
        if count == 1:
            self._firsts[name] = key
            return name
        if count == 2:
            self.renamed.append((self._firsts.pop(name), f"{name} #1"))
        return f"{name} #{count}"
