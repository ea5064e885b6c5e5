"""bonnie++ figures as history results: names, units, and the conversions of its cells.

Names: six sequential/seek figures, each with a `_cpu_pct` companion and (1.9x and later) a
`<test>_latency_us`; with file tests, six create/stat/delete rates likewise. The "Read" column
of the file tests is a stat() of each file (a read too when the files hold data); the CSV
header calls it `seq_stat`, hence `*_stat_per_s`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from stripewise.model.imported_run import ImportFormatError, digits
from stripewise.model.run import ResultValue

KIB_S = "KiB/s"
PER_S = "/s"

# (phase, metric, unit) in CSV and table column order.
IO_FIGURES = (
    ("seq_write", "seq_write_char_kBps", KIB_S),
    ("seq_write", "seq_write_block_kBps", KIB_S),
    ("rewrite", "rewrite_kBps", KIB_S),
    ("seq_read", "seq_read_char_kBps", KIB_S),
    ("seq_read", "seq_read_block_kBps", KIB_S),
    ("random_seeks", "random_seeks_per_s", PER_S),
)
FILE_FIGURES = (
    ("seq_create", "seq_create_per_s", PER_S),
    ("seq_create", "seq_stat_per_s", PER_S),
    ("seq_create", "seq_delete_per_s", PER_S),
    ("random_create", "random_create_per_s", PER_S),
    ("random_create", "random_stat_per_s", PER_S),
    ("random_create", "random_delete_per_s", PER_S),
)

# Each figure's %CPU and latency names, made once: a file may hold 20,000 runs, and one string
# per name rather than one per run keeps their memory flat.
_COMPANIONS = {
    metric: (f"{metric}_cpu_pct", test, f"{test}_latency_us")
    for _, metric, _ in IO_FIGURES + FILE_FIGURES
    for test in [metric.removesuffix("_kBps").removesuffix("_per_s")]
}

# bonnie++ 2.00a prints speeds of 10000 K/s and more as `564m` or `1.6g`. What this relies on:
# the bonnie++(8) man page (OUTPUT: "K" is KiB, 1024 bytes; "M" MiB, 1048576; "G" GiB), its
# BonTimer::print_stat (bon_time.cpp: " %4dk" below 10000, else stat/1024 as " %4.1fm" or
# " %4dm", else stat/1024/1024 as " %4.1fg") and bon_csv2txt's convSpd doing the same. So k is
# the CSV's K/s itself (KiB/s), m is x1024 and g x1024*1024 of it; the recorded 2.00a fixtures
# agree (577865 K/s is printed `564m`). A figure keeps its unit: KiB/s, never MB/s here.
_SUFFIX = {"": 1, "k": 1, "m": 1024, "g": 1024 * 1024}
_SPEED = re.compile(r"([0-9]+(?:\.[0-9]+)?)([kmg]?)", re.IGNORECASE)
_LATENCY = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s)")
_LATENCY_US = {"ns": 0.001, "us": 1.0, "ms": 1000.0, "s": 1_000_000.0}
_BYTES = re.compile(r"([0-9]+(?:\.[0-9]+)?)([kmgt]?)", re.IGNORECASE)
_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}


@dataclass
class BonnieRow:
    """One machine-and-size row as read, before its cells become figures.

    Cells are raw text (None = blank: the test did not run). `io` holds 12 cells (speed and
    %CPU for each of IO_FIGURES) or is None for a file-test-only row; likewise `files`.
    """

    line: int
    fmt: str
    version: str
    name: str
    size: str
    io: list[str | None] | None
    io_latency: list[str | None] | None = None
    file_spec: str = ""
    files: list[str | None] | None = None
    file_latency: list[str | None] | None = None
    spec: dict[str, Any] = field(default_factory=dict)
    lines: list[int] = field(default_factory=list)
    after_header: bool = False  # a CSV header line came before it: bonnie++ started again


def is_plus(cell: str) -> bool:
    """`+++++` / `+++`: the test ran under 0.5 s and bonnie++ refuses to print a figure."""
    return cell[:1] == "+" and not cell.strip("+")


def is_figure(cell: str) -> bool:
    """A table cell of a speed, rate or %CP (latencies have their own line)."""
    return is_plus(cell) or _SPEED.fullmatch(cell) is not None


def speed(cell: str | None, *, suffixed: bool) -> float | None:
    if cell is None or is_plus(cell):
        return None
    m = _SPEED.fullmatch(cell)
    if m is None or (m.group(2) and not suffixed):
        raise ValueError(cell)
    return float(m.group(1)) * _SUFFIX[m.group(2).lower()]


def latency_us(cell: str | None) -> float | None:
    if cell is None or is_plus(cell):
        return None
    m = _LATENCY.fullmatch(cell)
    if m is None:
        raise ValueError(cell)
    return float(m.group(1)) * _LATENCY_US[m.group(2)]


def size_bytes(text: str, default_unit: str) -> int | None:
    """`256M`, `2G`, `64k`; plain numbers are in `default_unit` (bonnie's -s is in MiB)."""
    m = _BYTES.fullmatch(text.strip())
    if m is None:
        return None
    unit = (m.group(2) or default_unit).lower()
    return int(Decimal(m.group(1)) * 1024 ** _POWER[unit])  # exact; a float could overflow


def results_of(
    row: BonnieRow, source: str, *, suffixed: bool
) -> tuple[list[ResultValue], dict[str, list[str]]]:
    """Figures of a row, each a number or None, and which were `+++++` or never ran."""
    results: list[ResultValue] = []
    missing: dict[str, list[str]] = {"too_fast": [], "not_run": []}
    groups = [(IO_FIGURES, row.io, row.io_latency), (FILE_FIGURES, row.files, row.file_latency)]
    for figures, cells, latencies in groups:
        if cells is None:
            continue
        for index, (phase, metric, unit) in enumerate(figures):
            value_cell, cpu_cell = cells[2 * index], cells[2 * index + 1]
            cpu_metric, test, latency_metric = _COMPANIONS[metric]
            value = _figure(value_cell, row, source, metric, suffixed=suffixed)
            cpu = _figure(cpu_cell, row, source, cpu_metric, suffixed=False)
            if cpu_cell is not None and is_plus(cpu_cell):
                # bon_csv2txt (2.00a) turns a `+++++` speed into `0k` but keeps the `+++`.
                value = None
            if value_cell is None:
                missing["not_run"].append(metric)
            elif value is None:
                missing["too_fast"].append(metric)
            results.append(_read(phase, metric, unit, value))
            results.append(_read(phase, cpu_metric, "%", cpu))
            if latencies is not None:
                lat = _latency(latencies[index], row, source, test)
                results.append(_read(phase, latency_metric, "us", lat))
    return results, missing


def _figure(
    cell: str | None, row: BonnieRow, source: str, metric: str, *, suffixed: bool
) -> float | None:
    try:
        return speed(cell, suffixed=suffixed)
    except ValueError:
        raise ImportFormatError(
            source, row.line, f"{metric}: {cell!r} is not a bonnie++ figure"
        ) from None


def _latency(cell: str | None, row: BonnieRow, source: str, test: str) -> float | None:
    try:
        return latency_us(cell)
    except ValueError:
        raise ImportFormatError(
            source, row.line, f"{test} latency: {cell!r} is not a time such as 1386us or 27ms"
        ) from None


def io_spec(size_field: str) -> dict[str, Any]:
    """The size field of a row or CSV line: size, chunk and what follows.

    bonnie++ 2.00a prints `size:chunk:concurrency:seeks:seekers` in its table, leaving out
    defaults from the end (`256M::4` is concurrency 4); bon_csv2txt (2.00a) joins the CSV's
    `size:chunk:seeks:seekers` (`1G::8192:5`). Two fields after the chunk are therefore seeks
    and seekers when the first is not smaller (8192 seeks by 5 processes), else concurrency and
    seeks (a concurrency of 2 with 100 seeks).
    """
    size, _, rest = size_field.partition(":")
    chunk, *after = rest.split(":") if rest else [""]
    spec: dict[str, Any] = {"file_size": size}
    if (whole := size_bytes(size, "m")) is not None:
        spec["file_size_bytes"] = whole
    if chunk and (chunk_bytes := size_bytes(chunk, "")) is not None:
        spec["chunk_size_bytes"] = chunk_bytes
    numbers = [int(a) if digits(a) else None for a in after[:3]]
    keys: tuple[str, ...] = ("concurrency", "seeks", "seeker_processes")
    if len(numbers) == 2:
        first, second = numbers
        if first is not None and second is not None and first >= second:
            keys = ("seeks", "seeker_processes")
    spec |= {key: n for key, n in zip(keys, numbers, strict=False) if n is not None}
    return spec


# `-n num:max:min:dirs:chunk` (bonnie++(8)); tables print `num:max:min/dirs`. 2.00a's CSV puts
# the directories in its file_chunk_size field, leaving num_dirs empty: chunk sizes are powers
# of two from 256 bytes to 1 MiB, so a smaller number there is the directory count.
_SMALLEST_CHUNK = 256
_LINKS = {"link": "hard", "symlink": "symbolic"}  # what -n num:-1 / num:-2 print as max size


def file_spec(text: str) -> dict[str, Any]:
    """`16`, `16:100000:16/64`, `16:100000:16:64:8k`, `16:link`, or the CSV's fields joined as
    `num:max:min/dirs:chunk`."""
    m = re.fullmatch(
        r"([0-9]+)(?::([^:/]*))?(?::([^:/]*))?(?:[:/]([0-9]*))?(?::(\S*))?", text.strip()
    )
    if m is None:
        return {"files": text}
    count, largest, smallest, dirs, chunk = m.groups()
    if not dirs and chunk and digits(chunk) and int(chunk) < _SMALLEST_CHUNK:
        dirs, chunk = chunk, None
    spec: dict[str, Any] = {"files_x1024": int(count)}
    if largest in _LINKS:
        spec["links"] = _LINKS[largest]
    for key, value in (("max_size_bytes", largest), ("min_size_bytes", smallest)):
        if value and (size := size_bytes(value, "")) is not None:
            spec[key] = size
    if dirs:
        spec["directories"] = int(dirs)
    if chunk and (size := size_bytes(chunk, "")) is not None:
        spec["chunk_size_bytes"] = size
    return spec


def _read(phase: str, metric: str, unit: str, value: float | None) -> ResultValue:
    """A figure read once from the file; one bonnie++ left out (`+++++`, a test not run) was
    not measured at all: no repetition (docs/history.md)."""
    return ResultValue(phase, metric, unit, value, repetitions=0 if value is None else 1)
