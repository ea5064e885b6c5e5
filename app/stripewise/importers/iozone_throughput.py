"""iozone `-t N` throughput summaries, one block of lines per test:

    Children see throughput for  4 initial writers  = 1234567.89 kB/sec
    Parent sees throughput for  4 initial writers   =  987654.32 kB/sec
    Min throughput per process                      =  301234.56 kB/sec
    Max throughput per process                      =  318765.43 kB/sec
    Avg throughput per process                      =  308641.97 kB/sec
    Min xfer                                        =  499712.00 kB

Older versions write KB/sec, `-O` writes ops/sec, `-T` says "per thread".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from stripewise.importers.common import ImportFormatError, clip, is_number
from stripewise.model.run import ResultValue

CHILDREN = re.compile(r"Children see throughput for\s+(\d+)\s+(.+?)\s*=\s*(\S*)\s*(\S*)", re.I)
_PARENT = re.compile(r"Parent sees throughput for\s+(\d+)\s+(.+?)\s*=\s*(\S*)\s*(\S*)", re.I)
_PER_PROCESS = re.compile(
    r"(Min|Max|Avg) throughput per (?:process|thread)\s*=\s*(\S*)\s*(\S*)", re.I
)
_MIN_XFER = re.compile(r"Min xfer\s*=\s*(\S*)\s*(\S*)", re.I)
_WORKERS = re.compile(r"Throughput test with (\d+) (processes|process|threads|thread)", re.I)
_EACH = re.compile(
    r"Each (?:process|thread) writes a (\d+) kByte file in (\d+) kByte records", re.I
)

# iozone's names of its throughput tests, as the -a table names the same tests.
TESTS = {
    "initial writers": "write",
    "rewriters": "rewrite",
    "readers": "read",
    "re-readers": "reread",
    "reverse readers": "bkwd_read",
    "stride readers": "stride_read",
    "random readers": "random_read",
    "mixed workload": "mixed",
    "random writers": "random_write",
    "pwrite writers": "pwrite",
    "re-pwrite writers": "repwrite",
    "pread readers": "pread",
    "re-pread readers": "repread",
    "fwriters": "fwrite",
    "freaders": "fread",
}
_REQUIRED = ("children", "parent", "min", "max", "avg")

Made = tuple[str, dict[str, Any], dict[str, Any], list[ResultValue]]


@dataclass
class _Summary:
    test: str
    phase: str
    workers: int
    line: int
    unit: str
    figures: dict[str, float] = field(default_factory=dict)


def phase_of(test: str) -> str:
    words = " ".join(test.lower().split())
    return TESTS.get(words) or clip(re.sub(r"[^a-z0-9]+", "_", words).strip("_"))


def throughput_runs(
    lines: list[str], start: int, end: int, source: str, *, ops: bool
) -> list[Made]:
    groups: list[list[_Summary]] = []
    current: _Summary | None = None
    spec: dict[str, Any] = {}
    for index in range(start, end):
        line, number = lines[index], index + 1
        if m := _WORKERS.search(line):
            spec["workers"] = "threads" if m.group(2).lower().startswith("thread") else "processes"
        elif m := _EACH.search(line):
            spec["file_size_kB"], spec["record_size_kB"] = int(m.group(1)), int(m.group(2))
        elif m := CHILDREN.search(line):
            _check(current, source)
            current = _Summary(
                m.group(2), phase_of(m.group(2)), int(m.group(1)), number, m.group(4)
            )
            current.figures["children"] = _value(m.group(3), source, number)
            group = groups[-1] if groups else None
            if (
                group is None
                or current.phase in {s.phase for s in group}
                or group[0].workers != current.workers
            ):
                groups.append([])  # a repeated test: the next run pasted below this one
            groups[-1].append(current)
        elif m := _PARENT.search(line):
            _need(current, source, number, "Parent sees throughput").figures["parent"] = _value(
                m.group(3), source, number
            )
        elif m := _PER_PROCESS.search(line):
            _need(current, source, number, m.group(0)).figures[m.group(1).lower()] = _value(
                m.group(2), source, number
            )
        elif m := _MIN_XFER.search(line):
            _need(current, source, number, "Min xfer").figures["min_xfer"] = _value(
                m.group(1), source, number
            )
    _check(current, source)
    return [_made(group, spec, ops) for group in groups]


def _value(token: str, source: str, number: int) -> float:
    if not is_number(token):
        raise ImportFormatError(source, number, f"expected a figure after '=', found {token!r}")
    return float(token)


def _need(current: _Summary | None, source: str, number: int, what: str) -> _Summary:
    if current is None:
        raise ImportFormatError(
            source, number, f"'{what}' line before any 'Children see throughput' line"
        )
    return current


def _check(summary: _Summary | None, source: str) -> None:
    """Each block has all five figures; a missing one means a cut-off file."""
    if summary is None:
        return
    missing = [k for k in _REQUIRED if k not in summary.figures]
    if missing:
        raise ImportFormatError(
            source,
            summary.line,
            f"throughput summary for {summary.workers} {summary.test} lacks its "
            f"{', '.join(missing)} figure(s): truncated?",
        )


def _made(group: list[_Summary], spec: dict[str, Any], ops: bool) -> Made:
    ops = ops or any("ops" in s.unit.lower() for s in group)
    suffix, unit = ("ops_per_s", "ops/s") if ops else ("kBps", "KiB/s")
    names = {
        "children": f"children_{suffix}",
        "parent": f"parent_{suffix}",
        "min": f"min_per_process_{suffix}",
        "max": f"max_per_process_{suffix}",
        "avg": f"avg_per_process_{suffix}",
    }
    results: list[ResultValue] = []
    for summary in group:
        for key, metric in names.items():
            results.append(ResultValue(summary.phase, metric, unit, summary.figures.get(key)))
        if "min_xfer" in summary.figures:
            xfer_metric, xfer_unit = ("min_xfer_ops", "ops") if ops else ("min_xfer_kB", "KiB")
            results.append(
                ResultValue(summary.phase, xfer_metric, xfer_unit, summary.figures["min_xfer"])
            )
    run_spec = {"processes": group[0].workers, "tests": [s.phase for s in group], **spec}
    context: dict[str, Any] = {
        "line": group[0].line,
        "lines": [s.line for s in group],
        "test_names": {s.phase: s.test for s in group},
    }
    if "file_size_kB" in spec:
        context["file_size_bytes"] = spec["file_size_kB"] * 1024
    return "iozone -t throughput", run_spec, context, results
