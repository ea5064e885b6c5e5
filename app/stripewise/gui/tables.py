"""Tables that Tab leaves, as every other control does.

Qt's table views take Tab for themselves: it moves to the next cell and wraps from the last
cell to the first, so once a cell is current, Tab never reaches the buttons after the table.
Ours leave that to the arrow keys, which still move between cells; Tab and Shift+Tab go to
the next or previous control, as the manual says. Every table of the GUI is one of these (a
test reads the code for any other).
"""

from __future__ import annotations

from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHeaderView, QTableView, QTableWidget, QWidget


class Table(QTableWidget):
    def __init__(self, rows: int = 0, columns: int = 0, parent: QWidget | None = None) -> None:
        super().__init__(rows, columns, parent)
        self.setTabKeyNavigation(False)
        self._filling: int | None = None

    def fill_with(self, column: int) -> None:
        """Every column as wide as its contents, `column` also the room the others leave: a
        stretched one was squeezed below its contents when the table was narrow, and Qt's
        last-section stretch gives the room to whichever column is last shown."""
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
        header.sectionResized.connect(lambda *_args: self.refill())
        self._filling = column
        self.refill()

    def refill(self) -> None:
        """The filling column resized to what its contents and the others now leave."""
        column = self._filling
        if column is None:
            return
        header = self.horizontalHeader()
        others = sum(
            header.sectionSize(c)
            for c in range(self.columnCount())
            if c != column and not self.isColumnHidden(c)
        )
        whole = max(self.sizeHintForColumn(column), header.sectionSizeHint(column))
        width = max(whole, self.viewport().width() - others)
        if header.sectionSize(column) != width:
            header.resizeSection(column, width)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.refill()


class TableView(QTableView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTabKeyNavigation(False)
