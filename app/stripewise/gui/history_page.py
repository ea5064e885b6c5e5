"""History page: the recorded runs, newest first; a selected run's results and context below."""

from __future__ import annotations

from typing import Any

import shiboken6
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui.bench_results import ResultsTable
from stripewise.gui.pages import page_title
from stripewise.model.run import RunDetail, RunSummary
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

    def row_of(self, run_id: int) -> int | None:
        return next((row for row, run in enumerate(self._runs) if run.id == run_id), None)

    def run_at(self, row: int) -> RunSummary:
        return self._runs[row]

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
        self.filter = QLineEdit()
        self.filter.setAccessibleName("Filter runs")
        self.filter.setPlaceholderText(
            "Filter by what was in force: read_ahead_kb=4096 scheduler=mq-deadline "
            "filesystem=xfs dirty_ratio_pct=40, or any word"
        )
        self.filter.setClearButtonEnabled(True)
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(300)  # typing does not query on every key
        self._filter_timer.timeout.connect(self._apply_filter)
        self.filter.textChanged.connect(lambda _text: self._filter_timer.start())
        layout.addWidget(self.filter)

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
        self.detail_title = QLabel()
        self.detail_title.setWordWrap(True)
        self.detail_title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail_results = ResultsTable()
        detail = QWidget()
        detail_layout = QVBoxLayout(detail)
        detail_layout.setContentsMargins(0, 6, 0, 0)
        detail_layout.addWidget(self.detail_title)
        detail_layout.addWidget(self.detail_results, 1)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.table)
        self.split.addWidget(detail)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.split)
        layout.addWidget(self.stack, 1)
        self.shown_run: RunDetail | None = None
        self._all_runs: list[RunSummary] = []
        self._wanted: int | None = None
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        history.runsLoaded.connect(self._show_runs)
        history.failed.connect(self.caption.setText)

    def _show_runs(self, runs: list[RunSummary]) -> None:
        self._all_runs = runs
        if self.filter.text().strip():
            self._apply_filter()
            return
        self._list(runs, f"{len(runs)} runs in {self._history.display_url}")

    def _list(self, runs: list[RunSummary], caption: str) -> None:
        self.model.set_runs(runs)
        self.caption.setText(caption)
        self.stack.setCurrentWidget(self.split if runs or self.filter.text() else self.empty)
        if self._wanted is not None:
            self.show_run(self._wanted)

    def _apply_filter(self) -> None:
        text = self.filter.text().strip()
        if not text:
            self._list(self._all_runs, f"{len(self._all_runs)} runs in {self._history.display_url}")
            return
        self._history.filter_runs(text, lambda runs: self._on_filtered(text, runs))

    def _on_filtered(self, text: str, runs: list[RunSummary]) -> None:
        if not shiboken6.isValid(self):
            return  # the window closed while the history was searched
        if text == self.filter.text().strip():  # not overtaken by more typing
            self._list(runs, f"{len(runs)} of {len(self._all_runs)} runs match {text!r}")

    def show_run(self, run_id: int) -> None:
        """Select a run (once listed: a just-saved run arrives with the next reload)."""
        row = self.model.row_of(run_id)
        if row is None:
            self._wanted = run_id
            return
        self._wanted = None
        self.table.selectRow(row)
        self.table.scrollTo(self.model.index(row, 0))

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            run = self.model.run_at(current.row())
            self._history.get_run(run.id, self._show_detail)

    def _show_detail(self, detail: RunDetail) -> None:
        self.shown_run = detail
        run, context = detail.summary, detail.context
        facts = [
            f"<b>Run {run.id}</b>: {run.name}, {run.status.value}",
            f"{context.get('filesystem', '')} {context.get('mount_options', '')}".strip(),
            ", ".join(d.get("name", "") for d in context.get("disks", []) if isinstance(d, dict)),
            f"{detail.sample_count} samples",
        ]
        self.detail_title.setText(" &middot; ".join(f for f in facts if f))
        self.detail_results.show_stored(detail.results)
