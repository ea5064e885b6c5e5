"""History page: the recorded runs, newest first (comparison and import come with their release)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui.pages import page_title
from stripewise.model.run import RunSummary
from stripewise.services.history import HistoryService

_COLUMNS = ("ID", "Started", "Status", "Host", "Target", "Engine", "Name")
_AnyIndex = QModelIndex | QPersistentModelIndex


class RunTableModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self._runs: list[RunSummary] = []

    def set_runs(self, runs: list[RunSummary]) -> None:
        self.beginResetModel()
        self._runs = list(runs)
        self.endResetModel()

    def rowCount(self, parent: _AnyIndex = QModelIndex()) -> int:  # noqa: B008 (Qt signature)
        return 0 if parent.isValid() else len(self._runs)

    def columnCount(self, parent: _AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return _COLUMNS[section]
        return None

    def data(self, index: _AnyIndex, role: int = 0) -> Any:
        if not index.isValid() or role != Qt.ItemDataRole.DisplayRole:
            return None
        run = self._runs[index.row()]
        values = (
            str(run.id),
            run.started_at.astimezone().strftime("%Y-%m-%d %H:%M"),
            run.status.value,
            run.host,
            run.target,
            f"{run.engine} {run.engine_version}".strip(),
            run.name,
        )
        return values[index.column()]


class HistoryPage(QWidget):
    def __init__(self, history: HistoryService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._history = history
        self.model = RunTableModel()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(32, 28, 32, 28)
        layout.setSpacing(10)
        layout.addWidget(page_title("History"))
        self.caption = QLabel("Reading the history...")
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)

        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.empty = QLabel(
            "No runs recorded yet. Benchmarks you run and results you import will be listed "
            "here, with side-by-side comparison of saved runs."
        )
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.table)
        layout.addWidget(self.stack, 1)
        history.runsLoaded.connect(self._show_runs)
        history.failed.connect(self.caption.setText)

    def _show_runs(self, runs: list[RunSummary]) -> None:
        self.model.set_runs(runs)
        self.caption.setText(f"{len(runs)} runs in {self._history.display_url}")
        self.stack.setCurrentWidget(self.table if runs else self.empty)
