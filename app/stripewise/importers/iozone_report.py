"""iozone `-R` reports ("Excel output is below:"): a block per test, file sizes by record sizes.

iozone's dump_excel prints each test's block as dump_report lays it out (iozone.c, 3.4xx):

    "Writer report"
            "16"  "32"  "64"  "128"  "256"
    "16384"   612034  654210  701233  698412  702113
    "32768"   689950  701002  707761

The header row is every record size (kB) from the smallest to the largest asked for; each row
is a file size (kB) and, one figure per record size it was tested at, in increasing order,
with nothing for the others. iozone never tests a record larger than the file, and `-a`
skips the small records of files of 32 MB and more: a row's figures are therefore those of
the largest record sizes up to its file size. Figures are iozone's kB/sec (KiB/s), or ops/sec
with `-O`, as the -a table's. `-+u` adds CPU utilization blocks: not read, and said so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stripewise.importers.common import is_number, tokens
from stripewise.importers.iozone_auto import AUTO_TESTS, Made, metric_name
from stripewise.model.imported_run import ImportFormatError, clip, digits
from stripewise.model.run import ResultValue

REPORT_START = "Excel output is below"
# dump_excel's block titles (before " report"), lower case, as the -a table names the tests.
TESTS = {
    "writer": "write",
    "re-writer": "rewrite",
    "reader": "read",
    "re-reader": "reread",
    "random read": "random_read",
    "random write": "random_write",
    "backward read": "bkwd_read",
    "record rewrite": "record_rewrite",
    "stride read": "stride_read",
    "fwrite": "fwrite",
    "re-fwrite": "frewrite",
    "fread": "fread",
    "re-fread": "freread",
    "pwrite": "pwrite",
    "re-pwrite": "repwrite",
    "pread": "pread",
    "re-pread": "repread",
    "pwritev": "pwritev",
    "re-pwritev": "repwritev",
    "preadv": "preadv",
    "re-preadv": "repreadv",
}
_CPU_BLOCK = "cpu utilization report"
# What one report can hold: iozone tests records of 4 kB to 16 MB (13 sizes) and has 21 tests.
# Bounds keep the work per row, and the figures of a run (tests x rows), in proportion to the
# text: a block past the last test starts another report, as a repeated one does.
_MOST_RECORD_SIZES = 64
_MOST_TESTS = 64


@dataclass
class _Report:
    """The blocks of one -R report: per test, (file kB, record kB) -> figure."""

    line: int
    last_line: int = 0
    cells: dict[str, dict[tuple[int, int], str]] = field(default_factory=dict)


def block_title(line: str) -> str | None:
    """`"Writer report"` -> "writer"; None for any other line."""
    text = line.strip()
    if len(text) < 3 or text[0] != '"' or text[-1] != '"':
        return None
    inner = " ".join(text[1:-1].lower().split())
    return inner.removesuffix(" report") if inner.endswith(" report") else None


def looks_like(line: str) -> bool:
    return line.strip().startswith(REPORT_START) or block_title(line) in TESTS


def report_runs(
    lines: list[str], start: int, end: int, source: str, *, ops: bool, warnings: list[str]
) -> list[Made]:
    """One run per report; a test's block seen again starts another report."""
    reports: list[_Report] = []
    report: _Report | None = None
    begins = 0  # the line of "Excel output is below:" before the first block
    test: str | None = None  # the block being read; None between blocks
    sizes: list[int] | None = None  # its header row's record sizes
    skipped: list[ImportFormatError] = []
    cpu_line = 0
    for index in range(start, end):
        line, number = lines[index], index + 1
        text = line.strip()
        if not text:
            continue  # iozone's blank line before each block, or a paste's between lines
        if text.startswith(REPORT_START):
            report, test, begins = None, None, number
            continue
        title = block_title(line)
        if title is None and text[0] == '"' and _CPU_BLOCK in text.lower():
            test, cpu_line = None, cpu_line or number  # its rows are CPU %, skipped
        elif title is not None:
            test, sizes = None, None
            if report is None or _test(title) in report.cells or len(report.cells) >= _MOST_TESTS:
                report = _Report(begins or number)
                reports.append(report)
                begins = 0
            test = _test(title)
            report.cells[test] = {}
        elif test is not None and report is not None and sizes is None:
            sizes = _header(line)
            if sizes is None:
                message = f"iozone -R {test} block without its header row of record sizes"
                skipped.append(ImportFormatError(source, number, message))
                test = None
        elif test is not None and report is not None and sizes is not None:
            try:
                if _row(line, sizes, report.cells[test], source, number):
                    report.last_line = number
                else:
                    test = None  # not a row: the block has ended
            except ImportFormatError as exc:
                skipped.append(exc)
    made = [_made(r, ops) for r in reports if any(r.cells.values())]
    if skipped and not made:
        raise skipped[0]  # nothing of the report could be read: the file's error
    if skipped:
        first, more = skipped[0], len(skipped) - 1
        also = f" (and {more} more rows, the last at line {skipped[-1].line})" if more else ""
        warnings.append(f"{first}{also}; the row was skipped, the rest of the report read")
    if cpu_line and made:
        warnings.append(
            f"{source} line {cpu_line}: iozone -R CPU utilization reports (-+u) are not read; "
            "their figures are left out"
        )
    return made


def _test(title: str) -> str:
    return TESTS.get(title) or clip("_".join(title.replace("-", " ").split()))


def _header(line: str) -> list[int] | None:
    """The record sizes of a header row (`"4"  "8"  "16"`), or None."""
    words = line.split()
    if (
        not words
        or len(words) > _MOST_RECORD_SIZES
        or not all(len(w) > 2 and w[0] == w[-1] == '"' and digits(w[1:-1]) for w in words)
    ):
        return None
    return [int(w[1:-1]) for w in words]


def _row(
    line: str, sizes: list[int], cells: dict[tuple[int, int], str], source: str, number: int
) -> bool:
    """Read one row into `cells`; False when the line is no row (the block has ended)."""
    words = [t.text for t in tokens(line)]
    if not words or not (len(words[0]) > 2 and words[0][0] == words[0][-1] == '"'):
        return False
    file_kb = words[0][1:-1]
    figures = words[1:]
    if not digits(file_kb) or not figures or not all(is_number(f) for f in figures):
        raise ImportFormatError(
            source, number, f"{line.strip()[:40]!r} is not a row of an iozone -R report"
        )
    fits = [size for size in sizes if size <= int(file_kb)]
    if len(figures) > len(fits):
        raise ImportFormatError(
            source,
            number,
            f"{len(figures)} figures for a {file_kb} kB file, tested at {len(fits)} record sizes "
            "at most",
        )
    for record_kb, figure in zip(fits[len(fits) - len(figures) :], figures, strict=True):
        cells[int(file_kb), record_kb] = figure
    return True


def _made(report: _Report, ops: bool) -> Made:
    unit = "ops/s" if ops else "KiB/s"
    keys = sorted({key for cells in report.cells.values() for key in cells})
    order = {test: i for i, test in enumerate(AUTO_TESTS)}
    tests = sorted(report.cells, key=lambda t: order.get(t, len(order)))
    results: list[ResultValue] = []
    for test in tests:
        for file_kb, record_kb in keys:
            cell = report.cells[test].get((file_kb, record_kb))
            value = float(cell) if cell is not None else None
            results.append(ResultValue(test, metric_name(file_kb, record_kb), unit, value))
    file_sizes = sorted({f for f, _ in keys})
    spec: dict[str, Any] = {
        "file_sizes_kB": file_sizes,
        "record_sizes_kB": sorted({r for _, r in keys}),
        "tests": tests,
    }
    context: dict[str, Any] = {
        "line": report.line,
        "lines": [report.line, report.last_line or report.line],
        "rows": len(keys),
        "tests_not_run": [t for t in AUTO_TESTS if t not in report.cells],
    }
    if len(file_sizes) == 1:
        context["file_size_bytes"] = file_sizes[0] * 1024
    return "iozone -R report", spec, context, results
