"""Two kept experiments of the same parameters side by side: each value's two means with
their 95 % intervals, the second's change against the first with Welch's interval after
Holm's correction and its verdict, and both recommendations (history.experiment_compare's
comparison, the one `stripewise experiment compare` prints)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui.screen_fit import resize_within_screen
from stripewise.gui.tables import Table
from stripewise.model.experiment import label
from stripewise.model.experiment_result import Point
from stripewise.model.verdict import cant_tell
from stripewise.model.wording import count_noun
from stripewise.services.experiment_history import (
    ComparedValue,
    KeptComparison,
    StoredExperiment,
)

VERDICT_WORDS = {
    "better": "better",
    "worse": "worse",
    "noise": "within the noise",
    "unknown": "can't tell",
}


def mean_text(point: Point | None) -> str:
    if point is None:
        return "not measured"
    if point.mean is None:
        return "-"
    ci = point.ci95
    interval = f" ({ci[0]:,.1f} \u2013 {ci[1]:,.1f})" if ci else ""
    return f"{point.mean:,.1f}{interval}, {len(point.passes)} passes"


def change_cells(row: ComparedValue, minimised: bool) -> tuple[str, str]:
    """The change with its interval, and the verdict in words; empty where one of the two
    did not measure the value."""
    if row.first is None or row.second is None:
        return "", ""
    if row.evidence is None:
        first, second = len(row.first.passes), len(row.second.passes)
        said = cant_tell(first, second, here="in the first", there="in the second")
        return said, VERDICT_WORDS["unknown"]
    verdict = VERDICT_WORDS[row.verdict(minimised)]
    if row.evidence.held_alone:
        verdict += " (after Holm's correction)"
    return row.evidence.interval_text(), verdict


def _who(stored: StoredExperiment) -> str:
    s = stored.summary
    return f"#{s.id} {s.name} ({s.host}, {s.created_at.astimezone():%Y-%m-%d})"


class KeptComparisonDialog(QDialog):
    def __init__(self, comparison: KeptComparison, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        first, second = comparison.first, comparison.second
        a, b = first.summary.id, second.summary.id
        assert first.result is not None  # compared: both have a result
        result = first.result
        self.setWindowTitle(f"Experiments #{a} and #{b} compared")
        self.comparison = comparison
        tested = sum(1 for row in comparison.rows if row.evidence is not None)
        unit = "µs" if result.unit == "us" else result.unit
        heading = QLabel(
            f"Before: {_who(first)}. After: {_who(second)}.\n"
            f"{result.objective.words} ({unit}); the change is #{b} against #{a}, "
            f"Welch's 95 % interval, Holm's correction over {count_noun(tested, 'value')}."
        )
        self.differences = QLabel(comparison.differences)
        self.differences.setWordWrap(True)
        self.differences.setVisible(bool(self.differences.text()))
        heading.setWordWrap(True)
        heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        headings = (
            "Values", f"#{a} mean (95 %)", f"#{b} mean (95 %)", f"Change (#{b} against #{a})",
            "Verdict",
        )  # fmt: skip
        self.table = Table(len(comparison.rows), len(headings))
        self.table.setAccessibleName("Experiments compared")
        self.table.setHorizontalHeaderLabels(headings)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        for column in range(len(headings)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        minimised = comparison.minimised
        for row, compared in enumerate(comparison.rows):
            cells = (
                label(compared.values),
                mean_text(compared.first),
                mean_text(compared.second),
                *change_cells(compared, minimised),
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(row, column, item)

        lines = []
        for stored in (first, second):
            rec = stored.result.recommendation if stored.result is not None else None
            if rec is not None:
                lines.append(f"#{stored.summary.id} recommends ({rec.verdict.value}): {rec.reason}")
        self.recommendations = QLabel("\n".join(lines))
        self.recommendations.setWordWrap(True)
        self.recommendations.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(self.differences)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.recommendations)
        layout.addWidget(buttons)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.table.resizeColumnsToContents()
        wanted = header.length() + 2 * self.table.frameWidth() + 24  # and the margins
        resize_within_screen(self, QSize(max(640, min(wanted, 1000)), 380))

    def change_shown(self, values_label: str) -> tuple[str, str]:
        """The change and verdict cells of the row `read_ahead_kb=512` (for tests)."""
        for row in range(self.table.rowCount()):
            name = self.table.item(row, 0)
            if name is not None and name.text() == values_label:
                change, verdict = self.table.item(row, 3), self.table.item(row, 4)
                return (change.text() if change else "", verdict.text() if verdict else "")
        raise KeyError(values_label)
