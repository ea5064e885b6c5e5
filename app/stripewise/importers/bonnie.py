"""bonnie++ results: CSV lines (1.0x, 1.96/1.97, 1.98 of 2.00a) and the tables it prints.

Both are read. A table and the CSV line of the same run (bonnie++ without `-q` prints both)
become one run, read from the CSV, which keeps full precision (`bonnie_pairing`); tables and
CSV lines without a partner are runs too. Each machine-and-size row is one run. Other text
(progress lines, shell prompts, notes, Markdown around a pasted table) is skipped.

A `-x N` series (consecutive CSV lines of one machine, size, chunk, options and version, no
header line between them) is marked as one (`importers.series`), to become one run whose passes
are its lines.

Real files vary: a block that cannot be read (a truncated CSV line, a garbled row) is skipped
and the rest of the file is read; the runs carry one warning naming the first such line. Only
a file with nothing readable is refused, with the first error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import replace

from stripewise.importers.bonnie_csv import csv_kind, csv_rows, damaged
from stripewise.importers.bonnie_fields import BonnieRow, file_spec, results_of
from stripewise.importers.bonnie_markdown import plain_lines
from stripewise.importers.bonnie_pairing import paired
from stripewise.importers.bonnie_tables import TABLE_HEADER, parse_tables
from stripewise.importers.series import SERIES
from stripewise.model.imported_run import NAME_MAX, ImportedRun, ImportFormatError, clip

ENGINE = "bonnie++"


def looks_like(lines: list[str]) -> bool:
    """A table or CSV line, or a damaged CSV line (so its file is refused naming it)."""
    return any(TABLE_HEADER.search(line) or csv_kind(line) or damaged(line) for line in lines)


class Skipped:
    """The blocks left out of one file, for one warning."""

    def __init__(self) -> None:
        self.errors: list[ImportFormatError] = []

    def __call__(self, error: ImportFormatError) -> None:
        self.errors.append(error)

    def warning(self) -> tuple[str, ...]:
        if not self.errors:
            return ()
        first, *rest = sorted(self.errors, key=lambda error: error.line)
        others = sorted({error.line for error in rest} - {first.line})
        more = ""
        if others:
            plural = "s" if len(others) > 1 else ""
            more = f" and {len(others)} more block{plural} (line{plural} "
            more += ", ".join(str(n) for n in others) + ")"
        return (f"{first}; skipped it{more}, read the rest",)


def parse(text: str, source: str) -> list[ImportedRun]:
    """The runs of a file, each carrying the file's warning."""
    skipped = Skipped()
    runs = list(parse_runs(text, source, skipped))
    return [replace(run, warnings=skipped.warning()) for run in runs]


def parse_runs(text: str, source: str, skipped: Skipped) -> Iterator[ImportedRun]:
    """The runs of a file one at a time, in file order, without warnings: what was left out
    is in `skipped` once they are all read. A file of CSV lines alone is read line by line;
    tables (pasted output, a few runs) are read first, to pair each with its CSV line."""
    lines = plain_lines(text)
    del text  # held as its lines from here: a 60 MiB file is not held twice
    rows: Iterable[BonnieRow] = csv_rows(lines, source, skipped)
    if any(TABLE_HEADER.search(line) for line in lines):
        from_csv = list(rows)
        rows = paired(from_csv, parse_tables(lines, source, skipped))
    found = False
    series: tuple[object, int] | None = None  # the last CSV run's settings, its series' line
    for row in rows:
        try:
            run = _run(row, source, suffixed=row.fmt.startswith("bonnie++ table"))
        except ImportFormatError as error:
            skipped(error)
            continue
        found = True
        if row.fmt.startswith("bonnie++ csv"):  # -x prints no tables: a series is CSV lines
            settings = _settings(run)
            if series is None or row.after_header or series[0] != settings:
                series = (settings, row.line)
            run.context[SERIES] = series[1]
        else:
            series = None
        yield run
    if not found:
        if skipped.errors:
            raise min(skipped.errors, key=lambda e: e.line)
        raise ImportFormatError(source, 1, "no bonnie++ CSV line or result table found")


def _settings(run: ImportedRun) -> tuple[object, ...]:
    """What the lines of one `-x` series share: machine, format and version, size, chunk and
    the other options (1.9x and later: the seed, drawn once per bonnie++), the tests run."""
    spec = json.dumps(run.spec, sort_keys=True, default=str)
    return (run.host, run.context["format"], run.engine_version, spec, run.context.get("not_run"))


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
