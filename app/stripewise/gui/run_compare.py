"""Two stored runs side by side: figures with their change, and what differed around them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from stripewise.model.compare import compare_results, context_changes
from stripewise.model.run import RunDetail

_METRIC_NAMES = {
    "throughput": "Throughput",
    "iops": "IOPS",
    "cpu": "CPU",
    "latency_p50": "Latency p50",
    "latency_p99": "Latency p99",
    "efficiency": "Efficiency",
}
_VERDICT_COLOURS = {"better": QColor(46, 160, 67), "worse": QColor(218, 54, 51)}


def _figure_name(metric: str, unit: str) -> str:
    name = _METRIC_NAMES.get(metric, metric)
    unit = "µs" if unit == "us" else unit
    return name if unit.lower() == name.lower() else f"{name} ({unit})"


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.1f}" if abs(value) < 1000 else f"{value:,.0f}"


def _table(headers: list[str], rows: list[list[str]]) -> QTableWidget:
    table = QTableWidget(len(rows), len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.verticalHeader().hide()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = QTableWidgetItem(text)
            if c >= 2:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(r, c, item)
    return table


class CompareDialog(QDialog):
    def __init__(self, before: RunDetail, after: RunDetail, parent: QWidget | None = None):
        super().__init__(parent)
        a, b = before.summary, after.summary
        self.setWindowTitle(f"Run {a.id} vs run {b.id}")
        self.resize(760, 560)
        layout = QVBoxLayout(self)
        heading = QLabel(
            f"<b>A</b>: run {a.id}, {a.name}, {a.started_at.astimezone():%Y-%m-%d %H:%M}, "
            f"{a.status.value}<br><b>B</b>: run {b.id}, {b.name}, "
            f"{b.started_at.astimezone():%Y-%m-%d %H:%M}, {b.status.value}"
        )
        heading.setWordWrap(True)
        layout.addWidget(heading)

        self.figures = compare_results(before, after)
        rows = []
        for figure in self.figures:
            change = figure.change_pct
            rows.append(
                [
                    figure.phase,
                    _figure_name(figure.metric, figure.unit),
                    _number(figure.before),
                    _number(figure.after),
                    "-" if change is None else f"{change:+.1f} %",
                    figure.verdict,
                ]
            )
        self.results = _table(["Phase", "Figure", "A", "B", "Change", ""], rows)
        for row, figure in enumerate(self.figures):
            colour = _VERDICT_COLOURS.get(figure.verdict)
            if colour is not None:
                for column in (4, 5):
                    item = self.results.item(row, column)
                    if item is not None:
                        item.setForeground(QBrush(colour))
        layout.addWidget(self.results, 3)

        self.changes = context_changes(before.context, after.context)
        caption = QLabel(
            "What differed around the runs (tuning, filesystem, spec):"
            if self.changes
            else "Nothing recorded about the runs' context differs."
        )
        layout.addWidget(caption)
        self.context_table = _table(
            ["Setting", "A", "B"],
            [[key, str(old), str(new)] for key, old, new in self.changes],
        )
        layout.addWidget(self.context_table, 2)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
