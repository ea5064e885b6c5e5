"""Tables that Tab leaves, as every other control does.

Qt's table views take Tab for themselves: it moves to the next cell and wraps from the last
cell to the first, so once a cell is current, Tab never reaches the buttons after the table.
Ours leave that to the arrow keys, which still move between cells; Tab and Shift+Tab go to
the next or previous control, as the manual says. Every table of the GUI is one of these (a
test reads the code for any other).
"""

from __future__ import annotations

from PySide6.QtWidgets import QTableView, QTableWidget, QWidget


class Table(QTableWidget):
    def __init__(self, rows: int = 0, columns: int = 0, parent: QWidget | None = None) -> None:
        super().__init__(rows, columns, parent)
        self.setTabKeyNavigation(False)


class TableView(QTableView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTabKeyNavigation(False)
