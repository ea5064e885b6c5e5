"""What the comparison window's results table says in each cell and its tooltip: the figure,
the change with its interval, and the verdict in words (`model.verdict`)."""

from __future__ import annotations

from stripewise.model.compare import MetricRow
from stripewise.model.verdict import CONFIDENCE
from stripewise.model.wording import count_noun

_METRIC_NAMES = {
    "throughput": "Throughput",
    "iops": "IOPS",
    "cpu": "CPU",
    "latency_p50": "Latency p50",
    "latency_p99": "Latency p99",
    "efficiency": "Efficiency",
}


def figure_name(metric: str, unit: str) -> str:
    name = _METRIC_NAMES.get(metric, metric)
    unit = "µs" if unit == "us" else unit
    return name if not unit or unit.lower() == name.lower() else f"{name} ({unit})"


def number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.1f}" if abs(value) < 1000 else f"{value:,.0f}"


def cell_text(row: MetricRow, index: int, baseline: int) -> str:
    """`1,830.7  (+18.1 % ± 4.0 % (95 %))`; ≈ marks noise, ? a change nobody can judge."""
    value = number(row.values[index])
    change, evidence = row.changes_pct[index], row.evidence[index]
    if index == baseline or change is None:
        return value
    if evidence is None:
        return f"{value}  ({change:+.1f} % ?)"
    mark = "" if row.verdicts[index] in ("better", "worse") else " \u2248"  # ≈: noise
    if evidence.held_alone:
        mark += " Holm"  # noise only once the other figures tested are allowed for
    return f"{value}  ({evidence.interval_text()}{mark})"


def cell_tip(row: MetricRow, index: int, baseline: int) -> str:
    if index == baseline:
        return f"baseline; {_passes_text(row, index)}"
    if row.changes_pct[index] is None:
        return "nothing to compare"
    said, evidence = row.verdict_text(index, baseline), row.evidence[index]
    if evidence is None:
        return f"{said}; the change of the medians; {_passes_text(row, index)}"
    p = evidence.p_adjusted if evidence.p_adjusted is not None else evidence.p_value
    return (
        f"{said}: the means of the passes changed {evidence.interval_text()}; "
        f"p = {p:.3g} after Holm (beyond noise when at most {1 - CONFIDENCE:.2g}); "
        f"{_passes_text(row, index)}"
    )


def _passes_text(row: MetricRow, index: int) -> str:
    count, spread = row.pass_counts[index], row.spreads[index]
    if count == 0:
        return "passes not recorded"
    if spread is None:
        return count_noun(count, "pass")
    return f"{count_noun(count, 'pass')}, {number(spread.low)} .. {number(spread.high)}"
