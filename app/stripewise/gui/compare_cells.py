"""What the comparison window's results table says in each cell and its tooltip: the figure,
the change with its interval, and the verdict in words (`model.verdict`)."""

from __future__ import annotations

from PySide6.QtWidgets import QTableWidget, QWidget

from stripewise.model.compare import MetricRow
from stripewise.model.verdict import CONFIDENCE
from stripewise.model.wording import count_noun

_METRIC_NAMES = {
    "throughput": "Throughput",
    "iops": "IOPS",
    "cpu": "CPU",
    "latency_p50": "Completion latency p50",
    "latency_p99": "Completion latency p99",
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
    """`1,830.7  (+18.1 % ± 4.0 % (95 %))`: the mean of the passes and its change, as the
    verdict tests them; ≈ marks noise, ? a change nobody can judge; a figure a differing
    parameter makes incomparable says so beside it."""
    value = number(row.shown_values[index])
    if row.statistic(index) == "median":  # passes not recorded: all there is
        value += " median"
    change, evidence = row.shown_changes_pct[index], row.evidence[index]
    if index == baseline or change is None:
        return value
    if row.caveat(index):  # on lines of their own: the column stays readable at 1024 px
        return f"{value}  ({change:+.1f} %)\n{row.caveat(index).replace(': ', ':' + chr(10), 1)}"
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
    if row.caveat(index):
        return (
            f"{said}: the runs differ in a parameter that changes what this figure means, so "
            f"its change is shown but not judged; {_passes_text(row, index)}"
        )
    if evidence is None:
        return f"{said}; {_passes_text(row, index)}"
    p = evidence.p_adjusted if evidence.p_adjusted is not None else evidence.p_value
    return (
        f"{said}: the means of the passes changed {evidence.interval_text()}; "
        f"p = {p:.3g} after Holm (beyond noise when at most {1 - CONFIDENCE:.2g}); "
        f"{_passes_text(row, index)}"
    )


def _passes_text(row: MetricRow, index: int) -> str:
    count, spread = row.pass_counts[index], row.spreads[index]
    if count == 0:
        return "the median filed with the result; passes not recorded"
    if spread is None:
        return count_noun(count, "pass")
    return f"mean of {count_noun(count, 'pass')}, {number(spread.low)} .. {number(spread.high)}"


def fit_width(window: QWidget, table: QTableWidget, margin: int = 60) -> None:
    """Widen the window so the table shows every column, within the screen: verdicts in the
    last column read by scrolling sideways are missed. Never narrower than it is."""
    wanted = sum(table.columnWidth(c) for c in range(table.columnCount())) + margin
    wanted += 2 * table.frameWidth() + table.verticalScrollBar().sizeHint().width()
    screen = window.screen()
    room = screen.availableGeometry().width() * 95 // 100 if screen is not None else wanted
    if min(wanted, room) > window.width():
        window.resize(min(wanted, room), window.height())
