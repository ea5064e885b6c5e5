"""An import's figures in the history's vocabulary (`model.vocabulary`), and back.

The parsers read each tool's figures under the tool's own names and units (bonnie++'s
`seq_write_block_kBps` in KiB/s, fio's job names as phases, iozone's file-by-record cells);
`to_vocabulary` renames and converts them so they line up with measured runs, keeping the
tool's unit in `source_unit`. Migration 0008 converts runs imported before with the same
function, so an old import reads exactly as importing its file today; `to_tool_names` is its
downgrade. Rows neither recognises are kept as they are, so both are safe to apply twice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from stripewise.fio import mapping as fio_mapping
from stripewise.model.run import ResultValue
from stripewise.model.vocabulary import (
    BONNIE_TESTS,
    CPU,
    EFFICIENCY,
    IOPS,
    IOZONE_TESTS,
    LATENCY_MAX,
    THROUGHPUT,
    Quantity,
    efficiency,
    from_stored,
    qualified,
    split_qualified,
    to_stored,
)

# raw bonnie++ phase of each test (importers.bonnie_fields.IO_FIGURES)
_BONNIE_PHASES = {
    "seq_write_char_kBps": "seq_write",
    "seq_write_block_kBps": "seq_write",
    "rewrite_kBps": "rewrite",
    "seq_read_char_kBps": "seq_read",
    "seq_read_block_kBps": "seq_read",
    "random_seeks_per_s": "random_seeks",
}
_BONNIE_UNITS = {THROUGHPUT.metric: "KiB/s", IOPS.metric: "/s"}
_IOZONE_CELL = re.compile(r"^([0-9]+)k_file_([0-9]+)k_records$")
_IOZONE_CHILDREN = {"children_kBps": ("KiB/s", THROUGHPUT), "children_ops_per_s": ("ops/s", IOPS)}
_IOZONE_RAW_TESTS = {phase: test for test, phase in IOZONE_TESTS.items()}


def to_vocabulary(
    engine: str, spec: Mapping[str, Any], results: Sequence[ResultValue]
) -> list[ResultValue]:
    """The figures of one imported run in the vocabulary; unknown engines and rows as they
    are. Efficiency (KB/s per CPU %) is added where a phase has throughput and CPU, as
    measured runs have it."""
    if engine == "bonnie++":
        return _with_efficiency(_bonnie(results))
    if engine == "fio":
        return _with_efficiency(fio_mapping.to_vocabulary(spec, results))
    if engine == "iozone":
        return _iozone(spec, results)  # iozone reports no CPU
    return list(results)


def to_tool_names(
    engine: str, spec: Mapping[str, Any], results: Sequence[ResultValue]
) -> list[ResultValue]:
    """`to_vocabulary` undone: the tool's names and units, the added efficiency dropped."""
    if engine not in ("bonnie++", "fio", "iozone"):
        return list(results)
    kept = [r for r in results if not (r.metric == EFFICIENCY.metric and _derived(r, results))]
    if engine == "bonnie++":
        return _bonnie_back(kept)
    if engine == "fio":
        return fio_mapping.to_tool_names(spec, kept)
    return _iozone_back(spec, kept)


def _derived(row: ResultValue, results: Sequence[ResultValue]) -> bool:
    """An efficiency `_with_efficiency` added: its phase has throughput and CPU."""
    metrics = {r.metric for r in results if r.phase == row.phase}
    return {THROUGHPUT.metric, CPU.metric} <= metrics


def _with_efficiency(results: list[ResultValue]) -> list[ResultValue]:
    by_phase: dict[str, dict[str, ResultValue]] = {}
    for row in results:
        by_phase.setdefault(row.phase, {})[row.metric] = row
    out: list[ResultValue] = []
    for row in results:
        out.append(row)
        figures = by_phase[row.phase]
        if row.metric != CPU.metric or EFFICIENCY.metric in figures:
            continue
        throughput = figures.get(THROUGHPUT.metric)
        if throughput is not None:
            value = efficiency(throughput.value, row.value)
            done = 0 if value is None else 1  # of a figure not measured: none measured either
            out.append(ResultValue(row.phase, EFFICIENCY.metric, EFFICIENCY.unit, value, None,
                                   None, done))  # fmt: skip
    return out


def _stored(phase: str, quantity: Quantity, row: ResultValue) -> ResultValue:
    """`row` as (phase, quantity), its figure in the stored unit, its own unit kept."""
    value, unit = to_stored(row.value, row.unit)
    low = to_stored(row.min_value, row.unit)[0] if row.min_value is not None else None
    high = to_stored(row.max_value, row.unit)[0] if row.max_value is not None else None
    source = row.unit if unit != row.unit else ""
    # Not dataclasses.replace, which looks the fields up on every call (a file of 20,000
    # bonnie++ runs converts 1.7 million figures); the other fields are passed on as they are.
    changed = {"phase": phase, "metric": quantity.metric, "unit": unit, "value": value}
    changed |= {"min_value": low, "max_value": high, "source_unit": source}
    if value is None and not row.passes:  # nothing measured: no repetition (here, as it is
        changed["repetitions"] = 0  # built anyway: the importers' own pass would build it again)
    return ResultValue(**(vars(row) | changed))


def _in_source_unit(row: ResultValue, phase: str, metric: str) -> ResultValue:
    """A stored row back under the tool's names, in the unit the tool printed."""
    unit = row.source_unit or row.unit
    return replace(
        row,
        phase=phase,
        metric=metric,
        unit=unit,
        value=from_stored(row.value, unit),
        min_value=from_stored(row.min_value, unit),
        max_value=from_stored(row.max_value, unit),
        source_unit="",
    )


# --- bonnie++ ---------------------------------------------------------------------------------


def _bonnie(results: Iterable[ResultValue]) -> list[ResultValue]:
    out = []
    for row in results:
        test, kind = _bonnie_test(row.metric)
        if test is None or row.phase != _BONNIE_PHASES[test]:
            out.append(row)  # file tests and anything unknown: the tool's names
            continue
        phase, quantity = BONNIE_TESTS[test]
        if kind == "cpu":
            quantity = CPU
        elif kind == "latency":
            quantity = LATENCY_MAX  # bonnie++'s latency is its slowest single operation
        out.append(_stored(phase, quantity, row))
    return out


def _bonnie_test(metric: str) -> tuple[str | None, str]:
    return _BONNIE_METRICS.get(metric, (None, ""))


# Each bonnie++ test's raw metrics -> (test, kind), looked up once per figure.
_BONNIE_METRICS: dict[str, tuple[str | None, str]] = {
    name: (test, kind)
    for test in BONNIE_TESTS
    for name, kind in (
        (test, "figure"),
        (f"{test}_cpu_pct", "cpu"),
        (f"{test.removesuffix('_kBps').removesuffix('_per_s')}_latency_us", "latency"),
    )
}


def _bonnie_back(results: Iterable[ResultValue]) -> list[ResultValue]:
    tests = {phase: (test, quantity) for test, (phase, quantity) in BONNIE_TESTS.items()}
    out = []
    for row in results:
        test, quantity = tests.get(row.phase, (None, None))
        if test is None or quantity is None:
            out.append(row)
            continue
        if row.metric == quantity.metric:
            raw = test
            row = replace(row, source_unit=row.source_unit or _BONNIE_UNITS[row.metric])
        elif row.metric == CPU.metric:
            raw = f"{test}_cpu_pct"
        elif row.metric == LATENCY_MAX.metric:
            raw = f"{test.removesuffix('_kBps').removesuffix('_per_s')}_latency_us"
        else:
            out.append(row)
            continue
        out.append(_in_source_unit(row, _BONNIE_PHASES[test], raw))
    return out


# --- iozone -----------------------------------------------------------------------------------


def _iozone_single_cell(spec: Mapping[str, Any]) -> str | None:
    """The cell of an `-a` table of one file size and one record size, else None."""
    files, records = spec.get("file_sizes_kB"), spec.get("record_sizes_kB")
    if isinstance(files, list) and isinstance(records, list) and len(files) == len(records) == 1:
        return f"{files[0]}k_file_{records[0]}k_records"
    return None


def _iozone(spec: Mapping[str, Any], results: Iterable[ResultValue]) -> list[ResultValue]:
    single = _iozone_single_cell(spec)
    out = []
    for row in results:
        phase = IOZONE_TESTS.get(row.phase, row.phase)
        cell = _IOZONE_CELL.match(row.metric)
        if cell is not None and row.unit in ("KiB/s", "ops/s"):
            quantity = THROUGHPUT if row.unit == "KiB/s" else IOPS
            if row.metric != single:  # a table of many: each cell its own phase
                phase = qualified(phase, f"{cell.group(1)}k file, {cell.group(2)}k records")
            out.append(_stored(phase, quantity, row))
        elif row.metric in _IOZONE_CHILDREN and row.unit == _IOZONE_CHILDREN[row.metric][0]:
            # "Children see throughput": all processes together, as measured runs count
            out.append(_stored(phase, _IOZONE_CHILDREN[row.metric][1], row))
        elif row.phase in IOZONE_TESTS and _IOZONE_CELL.match(row.metric) is None:
            out.append(replace(row, phase=phase))  # -t's parent, per-process and xfer figures
        else:
            out.append(row)
    return out


def _iozone_back(spec: Mapping[str, Any], results: Iterable[ResultValue]) -> list[ResultValue]:
    single = _iozone_single_cell(spec)
    cells = "file_sizes_kB" in spec
    out = []
    for row in results:
        base, qualifier = split_qualified(row.phase)
        test = _IOZONE_RAW_TESTS.get(base, base)
        quantity = row.metric in (THROUGHPUT.metric, IOPS.metric) and bool(row.source_unit)
        cell = re.fullmatch(r"([0-9]+)k file, ([0-9]+)k records", qualifier or "")
        if quantity and cell is not None:
            metric = f"{cell.group(1)}k_file_{cell.group(2)}k_records"
            out.append(_in_source_unit(row, test, metric))
        elif quantity and qualifier is None and cells and single is not None:
            out.append(_in_source_unit(row, test, single))
        elif quantity and qualifier is None and not cells:
            metric = "children_kBps" if row.metric == THROUGHPUT.metric else "children_ops_per_s"
            out.append(_in_source_unit(row, test, metric))
        elif qualifier is None and base in _IOZONE_RAW_TESTS and not cells:
            out.append(replace(row, phase=test))
        else:
            out.append(row)
    return out
