"""Importers of results recorded by other tools: bonnie++, fio and iozone output as runs.

Pure parsing (no Qt, no database, no processes): `parse` turns a file's text into
`ImportedRun` values whose figures are in the history's vocabulary (`importers.mapping`);
`parse_raw` gives them under the tools' own names; `stripewise.history.imports` stores them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from stripewise.fio import importer as fio
from stripewise.importers import bonnie, iozone
from stripewise.importers.common import check_digits, check_run
from stripewise.importers.mapping import to_vocabulary
from stripewise.model.imported_run import ImportedRun, ImportFormatError, text_lines

__all__ = ["FORMATS", "ImportFormatError", "ImportedRun", "detect_format", "parse", "parse_raw"]

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


def parse(text: str, source_name: str, fmt: str = "auto") -> list[ImportedRun]:
    """The runs of one results file, their figures in the history's vocabulary (MB/s,
    IOPS...; each tool's unit kept as `source_unit`); raises as `parse_raw`."""
    runs = parse_raw(text, source_name, fmt)
    for index, run in enumerate(runs):  # in place: the raw figures go as their run is done
        runs[index] = replace(run, results=to_vocabulary(run.engine, run.spec, run.results))
    return runs


def parse_raw(text: str, source_name: str, fmt: str = "auto") -> list[ImportedRun]:
    """The runs of one results file under the tools' own names and units; raises
    ImportFormatError naming the offending line, and the field when a figure is one no run
    can have (checked as the tool printed it: `seq_write_block_kBps: 1e+25 KiB/s`)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    check_digits(text, source_name)
    if fmt == "auto":
        fmt = detect_format(text, source_name)
    parser = {"bonnie": bonnie.parse, "fio": fio.parse, "iozone": iozone.parse}[fmt]
    runs = _numbered(parser(text, source_name))
    for run in runs:
        check_run(run, source_name)
    return runs


def _numbered(runs: list[ImportedRun]) -> list[ImportedRun]:
    """Runs of one file sharing a name (bonnie++ -x 3) get `#1`, `#2`... to tell them apart."""
    counts = Counter(run.name for run in runs)
    seen: Counter[str] = Counter()
    numbered = []
    for run in runs:
        if counts[run.name] > 1:
            seen[run.name] += 1
            run = replace(run, name=f"{run.name} #{seen[run.name]}")
        numbered.append(run)
    return numbered
