"""What the comparison window's results table says in each cell and its tooltip: the figure,
the change with its interval, and the verdict in words (`model.verdict`). Throughput is shown
in MB/s or, with the app's MiB/s toggle, MiB/s; changes are percentages either way."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QPalette
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem, QWidget

from stripewise.gui.screen_fit import widen_within_screen
from stripewise.model.compare import (
    IMPORTED_PASSES,
    UNKNOWN,
    Comparison,
    MetricRow,
    count_tested,
    short_of_passes,
)
from stripewise.model.compare_caveats import CAUSES
from stripewise.model.metric_words import metric_words
from stripewise.model.units import MIB_PER_MB
from stripewise.model.verdict import CONFIDENCE, MIN_PASSES
from stripewise.model.wording import count_noun

_VERDICT_COLOURS = {"better": QColor(46, 160, 67), "worse": QColor(218, 54, 51)}


def shown_unit(unit: str, mib: bool) -> tuple[float, str]:
    """What a figure stored in `unit` is multiplied by to be shown, and the unit shown: MB/s
    become MiB/s (2^20 B/s) when the toggle says so; every other unit stays."""
    if mib and unit == "MB/s":
        return MIB_PER_MB, "MiB/s"
    return 1.0, "µs" if unit == "us" else unit


def figure_name(metric: str, unit: str, mib: bool = False) -> str:
    name = metric_words(metric)
    unit = shown_unit(unit, mib)[1]
    said = bool(unit) and name.split()[-1].lower() == unit.lower()  # "IOPS", not "IOPS (IOPS)"
    return name if not unit or said else f"{name} ({unit})"


def number(value: float | None, scale: float = 1.0) -> str:
    if value is None:
        return "-"
    value *= scale
    return f"{value:,.1f}" if abs(value) < 1000 else f"{value:,.0f}"


def cell_text(row: MetricRow, index: int, baseline: int, mib: bool = False) -> str:
    """`1,830.7  (+18.1 % ± 4.0 % (95 %))`: the mean of the passes and its change, as the
    verdict tests them; ≈ marks noise, ? a change nobody can judge; a figure a differing
    parameter makes incomparable says so beside it."""
    value = number(row.shown_values[index], shown_unit(row.unit, mib)[0])
    if row.shown_values[index] is None:  # a phase cancelled or failed says so
        value = row.missing_text(index, value)
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


def cell_tip(row: MetricRow, index: int, baseline: int, mib: bool = False) -> str:
    passes = _passes_text(row, index, mib)
    if index == baseline:
        return f"baseline; {passes}"
    if row.changes_pct[index] is None:
        return "nothing to compare"
    said, evidence = row.verdict_text(index, baseline), row.evidence[index]
    if row.caveat(index):
        return (
            f"{said}: the runs differ in a parameter that changes what this figure means, so "
            f"its change is shown but not judged; {passes}"
        )
    if evidence is None:
        return f"{said}; {passes}"
    p = evidence.p_adjusted if evidence.p_adjusted is not None else evidence.p_value
    return (
        f"{said}: the means of the passes changed {evidence.interval_text()}; "
        f"p = {p:.3g} after Holm (beyond noise when at most {1 - CONFIDENCE:.2g}); "
        f"{passes}"
    )


def _passes_text(row: MetricRow, index: int, mib: bool) -> str:
    count, spread = row.pass_counts[index], row.spreads[index]
    if count == 0:
        return "the median filed with the result; passes not recorded"
    if spread is None:
        return count_noun(count, "pass")
    scale, unit = shown_unit(row.unit, mib)
    low, high = number(spread.low, scale), number(spread.high, scale)
    return f"mean of {count_noun(count, 'pass')}, {low} .. {high} {unit}".rstrip()


def fill_results(
    table: QTableWidget, c: Comparison, run_label: Callable[[int], str], mib: bool
) -> None:
    """One row per phase and figure, one column per run; a verdict beyond noise in colour and
    bold, noise and can't-tell muted."""
    # the statistic the verdict tests, said where the values are read
    # a name's details in brackets on a line of their own: narrower columns
    runs = [
        f"{run_label(i).replace(' (', chr(10) + '(', 1)}\nmean of passes"
        for i in range(len(c.runs))
    ]
    headers = ["Phase", "Figure", *runs]
    table.clear()
    table.setColumnCount(len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.setRowCount(len(c.rows))
    text = table.palette().color(QPalette.ColorRole.Text)
    noise = QColor(text.red(), text.green(), text.blue(), 140)  # muted, still readable
    for r, row in enumerate(c.rows):
        table.setItem(r, 0, QTableWidgetItem(row.phase))
        table.setItem(r, 1, QTableWidgetItem(figure_name(row.metric, row.unit, mib)))
        for i in range(len(c.runs)):
            item = QTableWidgetItem(cell_text(row, i, c.baseline_index, mib))
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            verdict = row.verdicts[i]
            item.setToolTip(cell_tip(row, i, c.baseline_index, mib))
            colour = _VERDICT_COLOURS.get(verdict)
            if colour is not None:
                item.setForeground(QBrush(colour))
                font = item.font()
                font.setBold(True)
                item.setFont(font)
            elif verdict in ("noise", UNKNOWN):
                item.setForeground(QBrush(noise))
            table.setItem(r, 2 + i, item)
        if any(row.caveats):  # the note of what is not compared: a second line
            table.resizeRowToContents(r)


def legend_text(c: Comparison) -> str:
    """What the results table's values, changes and marks are; for an imported run short of
    passes, how it gets them (a measured one has its button to run it again)."""
    tests = count_tested(c)
    imported = f"; {IMPORTED_PASSES}" if short_of_passes(c, "imported") else ""
    confidence = f"{CONFIDENCE * 100:g} %"
    tested = (
        f"the {count_noun(tests, 'figure')} tested" if tests else "the figures tested (none here)"
    )
    return (
        "Values are the mean of each run's passes (median: passes not recorded). Changes "
        f"are of those means, ± their {confidence} interval (Welch's t). Coloured only "
        f"when beyond noise at {confidence} after Holm's correction for {tested}; "
        f"\u2248 noise; ? can't tell (a verdict needs {count_noun(MIN_PASSES, 'pass')} of "
        f"each run{imported}); not comparable: the runs differ in a parameter that changes "
        f"what the figure means ({CAUSES})."
    )


def fit_width(window: QWidget, table: QTableWidget, margin: int = 60) -> None:
    """Widen the window so the table shows every column, within the screen and kept on it:
    verdicts in the last column read by scrolling sideways are missed. Never narrower."""
    wanted = sum(table.columnWidth(c) for c in range(table.columnCount())) + margin
    wanted += 2 * table.frameWidth() + table.verticalScrollBar().sizeHint().width()
    if wanted > window.width():
        widen_within_screen(window, wanted)
