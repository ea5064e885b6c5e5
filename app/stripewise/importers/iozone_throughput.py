"""iozone `-t N` throughput summaries, one block of lines per test (iozone 3.2xx to 3.5xx):

    Children see throughput for  4 initial writers  = 1234567.89 kB/sec
    Parent sees throughput for  4 initial writers   =  987654.32 kB/sec
    Min throughput per process                      =  301234.56 kB/sec
    Max throughput per process                      =  318765.43 kB/sec
    Avg throughput per process                      =  308641.97 kB/sec
    Min xfer                                        =  499712.00 kB
    CPU Utilization: Wall time    2.671    CPU time    1.974    CPU utilization  73.89 %

Before 3.4 the unit is KB/sec, `-O` writes ops/sec (and Min xfer in ops), `-T` says "per
thread", `-+u` adds the CPU line. iozone's kB is 1024 bytes. The preamble's `Record Size 4 kB`
and `File size set to 102400 kB` give the sizes when "Each process writes..." is missing. Lines
a parallel shell prefixed with a host (`node1: Children see...`, pdsh/clush) are runs of that
host. A summary cut short or holding a figure iozone could not compute (`inf`, `-nan`) is read
with what it has, the rest missing, and named in one warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from stripewise.importers.common import is_number
from stripewise.model.imported_run import clip
from stripewise.model.run import ResultValue
from stripewise.model.wording import noun_for

_FIGURE = r"=\s*(\S*)\s*(\S*)"
# The test's name runs to the blanks before the first "=". Written so nothing is scanned twice:
# the first phrase followed by a count is taken for good (atomic), and the name ends at its
# last non-blank (a lazy name before `\s*=` rescanned a run of blanks from each blank in it).
_WORKERS_AND_TEST = r"\s++([0-9]++)\s)\s*+(.(?:[^=]*[^=\s])?)\s*"
CHILDREN = re.compile(rf"^(?>.*?Children see throughput for{_WORKERS_AND_TEST}{_FIGURE}", re.I)
_PARENT = re.compile(rf"^(?>.*?Parent sees throughput for{_WORKERS_AND_TEST}{_FIGURE}", re.I)
_PER_WORKER = re.compile(rf"(Min|Max|Avg) throughput per (?:process|thread)\s*{_FIGURE}", re.I)
_MIN_XFER = re.compile(rf"Min xfer\s*{_FIGURE}", re.I)
_ORPHAN = re.compile(r"Parent sees throughput|throughput per (?:process|thread)|Min xfer", re.I)
_CPU = re.compile(
    r"CPU Utilization:\s*Wall time\s+(\S+)\s+CPU time\s+(\S+)\s+CPU utilization\s+(\S+?)\s*%", re.I
)
_WORKERS = re.compile(r"Throughput test with ([0-9]+) (processes|process|threads|thread)", re.I)
_EACH = re.compile(
    r"Each (?:process|thread) writes a ([0-9]+) kByte file in ([0-9]+) kByte records", re.I
)
_RECORD_SIZE = re.compile(r"^\s*Record Size ([0-9]+) kB\b", re.I)
_FILE_SIZE = re.compile(r"^\s*File size set to ([0-9]+) kB\b", re.I)
# `node1: Children see...` as pdsh and clush print each host's lines
_HOST_PREFIX = re.compile(
    r"^\s*([A-Za-z0-9][\w.\-]*):\s+(?=(?:Children|Parent|Min|Max|Avg|Throughput test|Each|CPU)\b)"
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
    "record rewriters": "record_rewrite",
    "pwrite writers": "pwrite",
    "re-pwrite writers": "repwrite",
    "pread readers": "pread",
    "re-pread readers": "repread",
    "fwriters": "fwrite",
    "re-fwriters": "frewrite",
    "freaders": "fread",
    "re-freaders": "freread",
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
    figures: dict[str, float | None] = field(default_factory=dict)


@dataclass
class _Series:
    """The summaries of one throughput test run (one process count), with its sizes."""

    host: str
    spec: dict[str, Any]
    summaries: list[_Summary] = field(default_factory=list)
    phases: set[str] = field(default_factory=set)  # of the summaries, looked up per line


@dataclass
class _Problems:
    """What could not be read, by kind: (line, what) for one warning per kind."""

    found: dict[str, list[tuple[int, str]]] = field(default_factory=dict)

    def add(self, kind: str, line: int, what: str) -> None:
        self.found.setdefault(kind, []).append((line, what))

    def warnings(self, source: str) -> list[str]:
        out = []
        for kind, cases in self.found.items():
            (line, what), more = cases[0], len(cases) - 1
            also = f" (and {more} more, the last at line {cases[-1][0]})" if more else ""
            out.append(f"{source} line {line}: {what}{also}; {kind}")
        return out


def phase_of(test: str) -> str:
    words = " ".join(test.lower().split())
    return TESTS.get(words) or clip(re.sub(r"[^a-z0-9]+", "_", words).strip("_"))


def throughput_runs(
    lines: list[str], start: int, end: int, source: str, *, ops: bool, warnings: list[str]
) -> list[tuple[str | None, Made]]:
    """Each series of summaries as (host a parallel shell named, or None; what it made)."""
    sizes: dict[str, Any] = {}  # the preamble's, for series that do not state their own
    state: dict[str, dict[str, Any]] = {}  # per host: the sizes and workers stated so far
    current: dict[str, _Summary] = {}
    series: list[_Series] = []
    open_series: dict[str, _Series] = {}
    problems = _Problems()
    for index in range(start, end):
        number = index + 1
        host, line = _split_host(lines[index])
        said = state.setdefault(host, {})
        if m := _RECORD_SIZE.match(line):
            sizes["record_size_kB"] = int(m.group(1))
        elif m := _FILE_SIZE.match(line):
            sizes["file_size_kB"] = int(m.group(1))
        elif m := _WORKERS.search(line):
            said["workers"] = "threads" if m.group(2).lower().startswith("thread") else "processes"
            open_series.pop(host, None)  # `-l 1 -u 4`: each process count is a run of its own
        elif m := _EACH.search(line):
            said["file_size_kB"], said["record_size_kB"] = int(m.group(1)), int(m.group(2))
        elif m := CHILDREN.search(line):
            _close(current.pop(host, None), problems)
            summary = _Summary(
                m.group(2), phase_of(m.group(2)), int(m.group(1)), number, m.group(4)
            )
            summary.figures["children"] = _value(m.group(3), summary, number, problems)
            current[host] = summary
            _join(summary, host, open_series, series, {**sizes, **said})
        elif (m := _PARENT.search(line)) and not _continues(current.get(host), m):
            if host not in current:
                problems.add(
                    "skipped", number, "a figure before any 'Children see throughput' line"
                )
                continue
            # The next block whose "Children see" line was garbled or lost: the Parent line
            # names its test; without it, its figures would overwrite the block before.
            _close(current.pop(host), problems)
            summary = _Summary(
                m.group(2), phase_of(m.group(2)), int(m.group(1)), number, m.group(4)
            )
            summary.figures["children"] = None
            problems.add(_HEADLESS, *_headless(summary, lines, index, host))
            summary.figures["parent"] = _value(m.group(3), summary, number, problems)
            current[host] = summary
            _join(summary, host, open_series, series, {**sizes, **said})
        elif host in current:
            if not _read_figure(line, current[host], number, problems):
                # a figure its block already has: the next block began on lines not read
                summary = current.pop(host)
                _close(summary, problems)
                problems.add(
                    "skipped",
                    number,
                    f"{_shown(line)!r} repeats a figure of the throughput summary for "
                    f"{summary.workers} {summary.test}: the summary after it lost its first lines",
                )
        elif _ORPHAN.search(line):
            problems.add("skipped", number, "a figure before any 'Children see throughput' line")
    for summary in current.values():
        _close(summary, problems)
    warnings.extend(problems.warnings(source))
    return [(s.host or None, _made(s, ops)) for s in series]


def _split_host(line: str) -> tuple[str, str]:
    m = _HOST_PREFIX.match(line)
    return (m.group(1), line[m.end() :]) if m else ("", line)


def _join(
    summary: _Summary,
    host: str,
    open_series: dict[str, _Series],
    series: list[_Series],
    spec: dict[str, Any],
) -> None:
    """Add a summary to its host's open series, or open the next (a repeated test, another
    process count)."""
    run = open_series.get(host)
    if run is None or summary.phase in run.phases or run.summaries[0].workers != summary.workers:
        run = _Series(host, spec)
        open_series[host] = run
        series.append(run)
    run.summaries.append(summary)
    run.phases.add(summary.phase)


def _continues(summary: _Summary | None, parent: re.Match[str]) -> bool:
    """A Parent line of the block being read: its test, and the block has none yet."""
    return (
        summary is not None
        and "parent" not in summary.figures
        and int(parent.group(1)) == summary.workers
        and phase_of(parent.group(2)) == summary.phase
    )


_HEADLESS = "its children figure read as missing, its other figures kept"


def _headless(summary: _Summary, lines: list[str], index: int, host: str) -> tuple[int, str]:
    """(line, what) for a block found by its Parent line: the line before, iozone's place for
    the "Children see" line, is named when it holds something else (a garbled header)."""
    about = f"the throughput summary for {summary.workers} {summary.test}"
    before_host, before = _split_host(lines[index - 1]) if index else ("", "")
    if before.strip() and before_host == host:
        return index, f"{_shown(before)!r} is not the 'Children see throughput' line of {about}"
    return index + 1, f"{about} has no 'Children see throughput' line"


def _shown(line: str) -> str:
    return clip(" ".join(line.split()), 120)


def _read_figure(line: str, summary: _Summary, number: int, problems: _Problems) -> bool:
    """Read a figure line into `summary`; False if it holds that figure already."""
    key: str | None = None
    if m := _PARENT.search(line):
        key, token = "parent", m.group(3)
    elif m := _PER_WORKER.search(line):
        key, token = m.group(1).lower(), m.group(2)
    elif m := _MIN_XFER.search(line):
        key, token = "min_xfer", m.group(1)
    if key is not None:
        if key in summary.figures:
            return False
        summary.figures[key] = _value(token, summary, number, problems)
    elif m := _CPU.search(line):
        if "wall_time" in summary.figures:
            return False
        for key, token in zip(
            ("wall_time", "cpu_time", "cpu_utilization"), m.groups(), strict=True
        ):
            summary.figures[key] = _value(token, summary, number, problems)
    return True


def _value(token: str, summary: _Summary, number: int, problems: _Problems) -> float | None:
    """A figure, or missing (named in a warning) for what iozone prints when it cannot
    compute one (`inf`, `-nan`) or a cell garbled in pasting."""
    if is_number(token):
        return float(token)
    problems.add(
        "read as missing figures",
        number,
        f"throughput summary for {summary.workers} {summary.test} has {token or 'nothing'!r} "
        "where a figure belongs",
    )
    return None


def _close(summary: _Summary | None, problems: _Problems) -> None:
    """Each block has all five figures; a missing one means a cut-off file or a partial paste:
    the block is kept, those figures missing."""
    if summary is None:
        return
    missing = [k for k in _REQUIRED if k not in summary.figures]
    if missing:
        problems.add(
            "read without them",
            summary.line,
            f"throughput summary for {summary.workers} {summary.test} lacks its "
            f"{', '.join(missing)} {noun_for(len(missing), 'figure')}: truncated?",
        )


def _made(run: _Series, ops: bool) -> Made:
    group = run.summaries
    ops = ops or any("ops" in s.unit.lower() for s in group)
    suffix, unit = ("ops_per_s", "ops/s") if ops else ("kBps", "KiB/s")
    names = {
        "children": f"children_{suffix}",
        "parent": f"parent_{suffix}",
        "min": f"min_per_process_{suffix}",
        "max": f"max_per_process_{suffix}",
        "avg": f"avg_per_process_{suffix}",
    }
    extras = {
        "min_xfer": ("min_xfer_ops", "ops") if ops else ("min_xfer_kB", "KiB"),
        "wall_time": ("wall_time_s", "s"),
        "cpu_time": ("cpu_time_s", "s"),
        "cpu_utilization": ("cpu_utilization_pct", "%"),
    }
    results: list[ResultValue] = []
    for summary in group:
        for key, metric in names.items():
            results.append(ResultValue(summary.phase, metric, unit, summary.figures.get(key)))
        for key, (metric, extra_unit) in extras.items():
            if key in summary.figures:
                results.append(ResultValue(summary.phase, metric, extra_unit, summary.figures[key]))
    run_spec = {"processes": group[0].workers, "tests": [s.phase for s in group], **run.spec}
    context: dict[str, Any] = {
        "line": group[0].line,
        "lines": [s.line for s in group],
        "test_names": {s.phase: s.test for s in group},
    }
    if "file_size_kB" in run.spec:
        context["file_size_bytes"] = run.spec["file_size_kB"] * 1024
    return "iozone -t throughput", run_spec, context, results
