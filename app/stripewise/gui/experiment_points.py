"""The Experiment page's table of points: each combination's passes, mean with its 95 %
interval, p99 latency and runs, filled in as passes are recorded. The parameters' names head
the first column, so its cells hold the values alone (`1, 64k`): they fit at 1024 px."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidgetItem

from stripewise.gui.tables import Table
from stripewise.model.experiment import Values, shown_value
from stripewise.model.experiment_result import Point
from stripewise.model.guards import describe

START = "  (start)"
COLUMNS = ("Point", "Passes", "Mean", "95 % interval", "p99 latency (\u00b5s)", "Runs")


def _number(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.1f}" if abs(value) < 100 else f"{value:,.0f}"


class PointsTable(Table):
    def __init__(self) -> None:
        super().__init__(0, len(COLUMNS))
        self.setAccessibleName("Experiment points")
        self.setHorizontalHeaderLabels(COLUMNS)
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.horizontalHeader()
        for column in range(len(COLUMNS) - 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        # the runs take what is left (elided, whole in the tooltip)
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.setWordWrap(False)  # one line a point: elided, whole in its tooltip
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        rows = self.verticalHeader().defaultSectionSize()
        self.setMinimumHeight(header.sizeHint().height() + 3 * rows + 2 * self.frameWidth())
        self._rows: dict[Values, int] = {}

    def set_names(self, names: Sequence[str]) -> None:
        """The varied parameters, in the design's order: the first column's heading."""
        heading = ",\n".join(names) or COLUMNS[0]  # a grid's two names on two lines
        self.setHorizontalHeaderItem(0, QTableWidgetItem(heading))

    def set_figure(self, figure: str) -> None:
        """What the means are of, with its unit: the Mean column's heading ("Mean MB/s")."""
        self.setHorizontalHeaderItem(COLUMNS.index("Mean"), QTableWidgetItem(f"Mean {figure}"))

    def set_points(self, points: Sequence[Point]) -> None:
        self.setRowCount(0)
        self._rows = {}
        for point in points:
            self.update_point(point)

    def update_point(self, point: Point) -> None:
        row = self._rows.get(point.values)
        if row is None:
            row = self.rowCount()
            self.insertRow(row)
            self._rows[point.values] = row
        ci = point.ci95
        p99 = point.p99_mean
        values = ", ".join(shown_value(name, value) for name, value in point.values)
        guarded = " \u26a0" if point.guards else ""  # ⚠: a guard tripped, said in the tooltip
        cells = (
            values + (START if point.baseline else "") + guarded,
            str(len(point.passes)),
            _number(point.mean),
            "" if ci is None else f"{_number(ci[0])} \u2013 {_number(ci[1])}",
            _number(p99),
            ", ".join(map(str, point.runs)),
        )
        for column, text in enumerate(cells):
            item = QTableWidgetItem(text)
            tip = text if column else point.label + (START if point.baseline else "")
            if point.guards and not column:
                tip += "\n" + "\n".join(describe(point.guards))
            item.setToolTip(tip)
            item.setData(Qt.ItemDataRole.UserRole, point.label)
            if column:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.setItem(row, column, item)

    def passes_shown(self) -> dict[str, int]:
        """Point label (`queue_depth=4`) -> passes, as shown (for tests)."""
        found = {}
        for row in range(self.rowCount()):
            name, passes = self.item(row, 0), self.item(row, 1)
            if name is not None and passes is not None:
                found[str(name.data(Qt.ItemDataRole.UserRole))] = int(passes.text())
        return found
