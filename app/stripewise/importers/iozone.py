"""iozone output: `-a` tables (file size x record size), `-R` reports and `-t` summaries.

A file may hold several iozone invocations (each opens with the "Iozone: Performance Test"
banner and a long preamble). Each `-a` table becomes one run whose phases are the tests and
whose metrics are `<file kB>k_file_<record kB>k_records`; so does each `-R` report of an
invocation without a table (the report repeats the table's figures); each series of `-t`
summaries becomes one run with a phase per test.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from stripewise.importers.iozone_auto import AUTO_HEADER, Made, auto_runs
from stripewise.importers.iozone_report import looks_like as is_report_line
from stripewise.importers.iozone_report import report_runs
from stripewise.importers.iozone_throughput import CHILDREN, throughput_runs
from stripewise.model.imported_run import NAME_MAX, ImportedRun, ImportFormatError, clip, text_lines

ENGINE = "iozone"
BANNER = "Iozone: Performance Test of File I/O"


def looks_like(lines: list[str]) -> bool:
    return any(
        BANNER in line or AUTO_HEADER.match(line) or CHILDREN.search(line) or is_report_line(line)
        for line in lines
    )


def parse(text: str, source: str) -> list[ImportedRun]:
    lines = text_lines(text)
    runs: list[ImportedRun] = []
    warnings: list[str] = []
    for start, end in _invocations(lines):
        preamble = _preamble(lines[start:end])
        if "output_unit" in preamble:
            ops = "operations" in str(preamble["output_unit"]).lower()
        else:  # the line cut off: the command line says it as well
            ops = _ops_option(str(preamble.get("command_line", "")))
            if ops:
                preamble["output_unit"] = "operations per second (-O on the command line)"
        tables = auto_runs(lines, start, end, source, ops=ops, warnings=warnings)
        if not tables:  # a report alone: what -R printed, without the table
            tables = report_runs(lines, start, end, source, ops=ops, warnings=warnings)
            if tables and "output_unit" not in preamble:
                warnings.append(_unit_warning(source, tables[0][2]["line"]))
        for made in tables:
            runs.append(_finish(made, preamble))
        for host, made in throughput_runs(lines, start, end, source, ops=ops, warnings=warnings):
            run = _finish(made, preamble)
            if host is not None:  # one of several hosts a parallel shell ran it on
                run = replace(run, host=host, name=clip(f"{run.name} on {host}", NAME_MAX))
            runs.append(run)
    if not runs:
        raise ImportFormatError(
            source, 1, "no iozone -a table or -t throughput summary found, nor an -R report"
        )
    return [replace(run, warnings=tuple(warnings)) for run in runs]


# iozone 3.4xx's getopt string: a letter before ":" takes an argument (the rest of its word,
# or the next word); "-+X" options are all "+:"
_TAKES_ARGUMENT = set("JjkVrtsfFdluUSLH+PibXYgnyq")


def _ops_option(command: str) -> bool:
    """Whether an iozone command line has -O (results in operations per second), alone or in
    a cluster of flags (getopt: `-aO`); never a letter inside an option's argument."""
    words = command.split()[1:]
    skip_next = False
    for word in words:
        if skip_next or not word.startswith("-") or word == "-":
            skip_next = False
            continue
        for index, letter in enumerate(word[1:], start=1):
            if letter == "O":
                return True
            if letter in _TAKES_ARGUMENT:
                skip_next = index == len(word) - 1  # its argument is the next word
                break
    return False


def _unit_warning(source: str, line: int) -> str:
    return (
        f"{source} line {line}: the iozone -R report states no unit and the file holds no "
        '"Output is in" line from iozone: its figures are read in iozone\'s default kB/sec '
        "(KiB/s), wrong if the run used -O (ops/sec)"
    )


def _invocations(lines: list[str]) -> list[tuple[int, int]]:
    """Line ranges of each invocation; text before the first banner belongs to the first."""
    starts = [i for i, line in enumerate(lines) if BANNER in line] or [0]
    starts[0] = 0
    return list(zip(starts, [*starts[1:], len(lines)], strict=True))


def _preamble(lines: list[str]) -> dict[str, Any]:
    """What the banner block says about the run: version, command, options, unit."""
    found: dict[str, Any] = {"options": []}
    in_options = False
    for line in lines:
        text = line.strip()
        if m := re.search(r"Version \$Revision:\s*([0-9.]+)", text):
            found["version"] = m.group(1)
        elif m := re.match(r"Run began:\s*(.+)", text):
            found["run_began"] = m.group(1)
            in_options = True
        elif m := re.match(r"Command line used:\s*(.+)", text):
            found["command_line"] = m.group(1)
            in_options = False
        elif m := re.search(r"Output is in\s+(.+)", text):
            found["output_unit"] = m.group(1)
        elif in_options and text:
            found["options"].append(text)
        elif AUTO_HEADER.match(line) or CHILDREN.search(line):
            break
    return found


def _finish(made: Made, pre: dict[str, Any]) -> ImportedRun:
    kind, spec, context, results = made
    command = str(pre.get("command_line") or "")
    spec = {"command_line": command, "options": pre["options"], **spec} if command else spec
    context = {
        "format": kind,
        **context,
        **{k: pre[k] for k in ("run_began", "output_unit") if k in pre},
    }
    target = ""
    if m := re.search(r"(?:^|\s)-f\s*(\S+)", command):
        target = m.group(1)
    elif m := re.search(r"(?:^|\s)-F\s+(\S+(?:\s+[^\s-]\S*)*)", command):  # to the next -option
        target = ", ".join(m.group(1).split())
    default = {"iozone -a table": "iozone -a", "iozone -R report": "iozone -R"}.get(
        kind, f"iozone -t {spec.get('processes')}"
    )
    return ImportedRun(
        name=clip(command or default, NAME_MAX),
        host=None,
        engine=ENGINE,
        engine_version=str(pre.get("version") or ""),
        target=target,
        started_at=None,  # "Run began" is local time of an unknown zone: kept in context
        spec=spec,
        context=context,
        results=results,
    )
