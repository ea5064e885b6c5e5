"""Importers of results recorded by other tools: bonnie++, fio and iozone output as runs.

Pure parsing (no Qt, no database, no processes): `parse` turns a file's text into
`ImportedRun` values whose figures are in the history's vocabulary (`importers.mapping`);
`parse_raw` gives them under the tools' own names; `ParsedFile` gives them one at a time,
as `stripewise.history.imports` stores them. A bonnie++ `-x N` series is one run whose passes
are its lines (`importers.series`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from stripewise.fio import importer as fio
from stripewise.importers import bonnie, iozone
from stripewise.importers.common import SharedNames, check_digits, check_run
from stripewise.importers.mapping import to_vocabulary
from stripewise.importers.series import one_run_per_series
from stripewise.model.imported_run import ImportedRun, ImportFormatError, text_lines
from stripewise.model.run import ResultValue

__all__ = [
    "FORMATS",
    "ImportFormatError",
    "ImportedRun",
    "ParsedFile",
    "detect_format",
    "parse",
    "parse_raw",
]

FORMATS = ("auto", "bonnie", "fio", "iozone")


def detect_format(text: str, source_name: str = "input") -> str:
    """'fio', 'iozone' or 'bonnie'; fio first (its JSON is unmistakable), bonnie++ last
    (its CSV lines are the least distinctive)."""
    if fio.looks_like(text):
        return "fio"
    lines = text_lines(text)
    if iozone.looks_like(lines):
        return "iozone"
    if bonnie.looks_like(lines):
        return "bonnie"
    raise ImportFormatError(
        source_name, 1, "not bonnie++, fio or iozone output (no CSV line, table or JSON found)"
    )


class ParsedFile:
    """The runs of one results file, parsed as they are read (`runs`, `raw_runs`): a file of
    100,000 bonnie++ CSV lines is never held as runs, only its text. Names are the tools'
    own, not yet numbered (`common.SharedNames`); `warnings` (what was skipped, one line each)
    are complete once the runs are.

    Made, it has checked what can be checked before parsing (a run of digits no figure has,
    what tool wrote the file) and raises ImportFormatError naming the line; the runs raise it
    too, for the first line that cannot be read or holds a figure no run can have.
    """

    def __init__(self, text: str, source_name: str, fmt: str = "auto") -> None:
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
        check_digits(text, source_name)
        self.format = detect_format(text, source_name) if fmt == "auto" else fmt
        self.source_name = source_name
        self._text = text
        self._warnings: dict[str, None] = {}

    @property
    def warnings(self) -> list[str]:
        return list(self._warnings)

    def raw_runs(self) -> Iterator[ImportedRun]:
        """The runs under the tools' own names and units, in file order, each checked; they
        are taken once (this or `runs`), the file's text let go as it is parsed."""
        return map(_unmeasured_unrepeated, one_run_per_series(self._passes()))

    def runs(self) -> Iterator[ImportedRun]:
        """The runs with their figures in the history's vocabulary (MB/s, IOPS...; each
        tool's unit kept as `source_unit`)."""
        series = one_run_per_series(
            replace(run, results=to_vocabulary(run.engine, run.spec, run.results))
            for run in self._passes()
        )
        return map(_unmeasured_unrepeated, series)

    def _passes(self) -> Iterator[ImportedRun]:
        """The runs as the file holds them, a series' passes each a run (marked as such)."""
        text, source = self._text, self.source_name
        self._text = ""  # the parse holds what it needs of it
        if self.format == "bonnie":
            skipped = bonnie.Skipped()
            runs: Iterable[ImportedRun] = bonnie.parse_runs(text, source, skipped)
        else:  # fio's JSON and iozone's reports are read whole: one document, few runs
            skipped = None
            runs = {"fio": fio.parse, "iozone": iozone.parse}[self.format](text, source)
        del text
        for run in runs:
            check_run(run, source)
            self._warnings.update(dict.fromkeys(run.warnings))
            yield run
        if skipped is not None:
            self._warnings.update(dict.fromkeys(skipped.warning()))


def _unmeasured_unrepeated(run: ImportedRun) -> ImportedRun:
    """A figure the tool left out (`+++++`, a phase not run) has no repetition, as a measured
    figure nothing measured has none (docs/history.md): 0, not the 1 of a figure read once."""
    if all(r.value is not None or r.repetitions == 0 or r.passes for r in run.results):
        return run  # bonnie++'s in the vocabulary: set so as they were converted
    results = [
        ResultValue(**(vars(r) | {"repetitions": 0})) if r.value is None and not r.passes else r
        for r in run.results
    ]
    return replace(run, results=results)


def parse(text: str, source_name: str, fmt: str = "auto") -> list[ImportedRun]:
    """The runs of one results file, their figures in the history's vocabulary (MB/s,
    IOPS...; each tool's unit kept as `source_unit`); raises as `parse_raw`."""
    parsed = ParsedFile(text, source_name, fmt)
    return _numbered(parsed, parsed.runs())


def parse_raw(text: str, source_name: str, fmt: str = "auto") -> list[ImportedRun]:
    """The runs of one results file under the tools' own names and units, numbered, each
    carrying the file's warnings; raises ImportFormatError naming the offending line, and
    the field when a figure is one no run can have (checked as the tool printed it:
    `seq_write_block_kBps: 1e+25 KiB/s`)."""
    parsed = ParsedFile(text, source_name, fmt)
    return _numbered(parsed, parsed.raw_runs())


def _numbered(parsed: ParsedFile, found: Iterable[ImportedRun]) -> list[ImportedRun]:
    """The runs, those sharing a name numbered, bonnie++'s carrying the file's warnings."""
    names = SharedNames[int]()
    runs = [replace(run, name=names.name(run.name, index)) for index, run in enumerate(found)]
    for index, name in names.renamed:
        runs[index] = replace(runs[index], name=name)
    if parsed.format != "bonnie":  # its runs carry their warnings as they are made
        return runs
    warnings = tuple(parsed.warnings)
    return [replace(run, warnings=warnings) for run in runs]
