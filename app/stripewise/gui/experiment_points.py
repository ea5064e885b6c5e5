"""The Experiment page's table of points: each combination's passes, mean with its 95 %
interval, p99 latency and runs, filled in as passes are recorded. The parameters' names head
the first column, so its cells hold the values alone (`1, 64k`): they fit at 1024 px."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QTableWidgetItem

from stripewise.gui.tables import Table
from stripewise.model.experiment import Values, shown_value
from stripewise.model.experiment_result import Point
from stripewise.model.guards import describe

START = "  (start)"
COLUMNS = ("Point", "Passes", "Mean", "95 % interval", "p99 latency (\u00b5s)", "Runs")
# headings on two lines where the table is narrow (800x600): about 90 px less
TWO_LINES = {"95 % interval": "95 %\ninterval", "p99 latency (\u00b5s)": "p99 latency\n(\u00b5s)"}


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
        # the runs whole and what is left: stretched they were squeezed to 26 px ("22, 23" cut)
        self.fill_with(len(COLUMNS) - 1)
        self.setWordWrap(False)  # one line a point
        # narrower than its columns (the Design and Run page at 800x600, a run list that grows
        # as the experiment runs): it scrolls, the runs never past an edge out of reach
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self._figure = ""
        self.compact = False
        rows = self.verticalHeader().defaultSectionSize()
        self.setMinimumHeight(header.sizeHint().height() + 3 * rows + 2 * self.frameWidth())
        self._rows: dict[Values, int] = {}

    def whole_width(self) -> int:
        """The width that shows every column whole: what its parent should give it."""
        header = self.horizontalHeader()
        columns = range(self.columnCount())
        widths = (max(self.sizeHintForColumn(c), header.sectionSizeHint(c)) for c in columns)
        bar = self.verticalScrollBar().sizeHint().width()  # a grid's many points scroll
        return sum(widths) + 2 * self.frameWidth() + bar + 1

    def set_names(self, names: Sequence[str]) -> None:
        """The varied parameters, in the design's order: the first column's heading."""
        heading = ",\n".join(names) or COLUMNS[0]  # a grid's two names on two lines
        self.setHorizontalHeaderItem(0, QTableWidgetItem(heading))

    def set_figure(self, figure: str) -> None:
        """What the means are of, with its unit: the Mean column's heading ("Mean MB/s")."""
        self._figure = figure
        self._set_headings()

    def set_compact(self, compact: bool) -> None:
        """Headings on two lines (True) or one."""
        if compact != self.compact:
            self.compact = compact
            self._set_headings()

    def _set_headings(self) -> None:
        compact = self.compact
        mean = f"Mean\n{self._figure}" if compact else f"Mean {self._figure}"
        headings = {"Mean": mean.rstrip()}
        for heading, folded in TWO_LINES.items():
            headings[heading] = folded if compact else heading
        for heading, text in headings.items():
            self.setHorizontalHeaderItem(COLUMNS.index(heading), QTableWidgetItem(text))

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
        self.refill()

    def passes_shown(self) -> dict[str, int]:
        """Point label (`queue_depth=4`) -> passes, as shown (for tests)."""
        found = {}
        for row in range(self.rowCount()):
            name, passes = self.item(row, 0), self.item(row, 1)
            if name is not None and passes is not None:
                found[str(name.data(Qt.ItemDataRole.UserRole))] = int(passes.text())
        return found
