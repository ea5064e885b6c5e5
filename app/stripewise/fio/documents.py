"""The fio JSON documents in a file, read leniently: what is whole is read, the rest named.

A saved fio log may hold text around the JSON (client mode prefixes server lines with
`<host>`), several documents one after the other (runs appended to one file, or the reports of
`--status-interval`) and one cut short or damaged among them (fio killed mid-report, a paste
that lost lines). Each document starts with `{` at the start of a line; one that does not parse
is skipped and named by its line, and reading resumes at the next `{` no deeper than its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stripewise.fio.report import entries
from stripewise.input_files import MAX_DEPTH
from stripewise.json_stream import JsonStream, JsonValueError, NestedTooDeep
from stripewise.model.imported_run import ImportFormatError, text_lines


@dataclass(frozen=True)
class Report:
    """One fio JSON document: the line it starts on, and how many cumulative
    `--status-interval` reports of the same run were folded into it (the last is kept)."""

    line: int
    obj: dict[str, Any]
    reports: int = 1
    last_line: int = 0


def fio_documents(text: str, source: str) -> tuple[list[Report], list[ImportFormatError]]:
    """The whole fio documents of `text`, interval reports folded, and what was skipped."""
    found, skipped = _documents(text, source)
    return _fold_interval_reports(found), skipped


def _documents(
    text: str, source: str
) -> tuple[list[tuple[int, dict[str, Any]]], list[ImportFormatError]]:
    lines = text_lines(text)
    joined = "\n".join(lines)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    stream = JsonStream(joined)  # linear however many documents are broken
    found: list[tuple[int, dict[str, Any]]] = []
    skipped: list[ImportFormatError] = []
    index = 0
    while index < len(lines):
        stripped = lines[index].lstrip()
        if not stripped.startswith("{"):
            index += 1
            continue
        indent = len(lines[index]) - len(stripped)
        start = offsets[index] + indent
        try:
            obj, end = stream.decode(start)
        except NestedTooDeep:
            skipped.append(
                ImportFormatError(source, index + 1, f"JSON nested deeper than {MAX_DEPTH} levels")
            )
            index = _next_start(lines, index, indent)
            continue
        except JsonValueError as exc:
            message = f"malformed or truncated fio JSON: {exc.message}"
            skipped.append(ImportFormatError(source, exc.line, message))
            index = _next_start(lines, index, indent)
            continue
        if isinstance(obj, dict) and ("jobs" in obj or "client_stats" in obj):
            found.append((index + 1, obj))
        else:
            skipped.append(
                ImportFormatError(
                    source, index + 1, "JSON object without fio's jobs or client_stats"
                )
            )
        index = stream.line_at(end)  # the line after the document's (0-based)
    return found, skipped


def _next_start(lines: list[str], index: int, indent: int) -> int:
    """The next line that can open a document after a broken one: a `{` no more indented than
    the broken document's own (its inner objects are indented deeper)."""
    for following in range(index + 1, len(lines)):
        stripped = lines[following].lstrip()
        if stripped.startswith("{") and len(lines[following]) - len(stripped) <= indent:
            return following
    return len(lines)


def _fold_interval_reports(found: list[tuple[int, dict[str, Any]]]) -> list[Report]:
    """`--status-interval` repeats the same jobs with growing elapsed time: keep the last,
    with the line of the first and the number of reports."""
    kept: list[Report] = []
    for line, obj in found:
        if kept and _continues(kept[-1].obj, obj):
            earlier = kept[-1]
            kept[-1] = Report(earlier.line, obj, earlier.reports + 1, line)
        else:
            kept.append(Report(line, obj, 1, line))
    return kept


def _continues(earlier: dict[str, Any], later: dict[str, Any]) -> bool:
    def identity(obj: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(e.get("jobname"), e.get("groupid"), e.get("hostname")) for e in entries(obj)]

    def elapsed(obj: dict[str, Any]) -> float | None:
        times = [e.get("elapsed") for e in entries(obj)]
        numbers = [t for t in times if isinstance(t, int | float) and not isinstance(t, bool)]
        return max(numbers) if numbers else None

    before, after = elapsed(earlier), elapsed(later)
    t0, t1 = earlier.get("timestamp"), later.get("timestamp")
    if before is None or after is None or not isinstance(t0, int) or not isinstance(t1, int):
        return False
    # A new run appended later started after the earlier one ended: its report comes more
    # wall-clock seconds later than its elapsed time grew.
    return (
        identity(earlier) == identity(later)
        and after > before
        and 0 <= t1 - t0 <= after - before + 2
    )
