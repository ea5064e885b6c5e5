"""The History page's table: one row per run, sortable through a proxy (by any column once
every row is here, gui.history_listing); rows arrive a page at a time as the table scrolls to
its end (canFetchMore/fetchMore: the page's listing, gui.history_listing, reads the next page
off the GUI thread)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QApplication

from stripewise.model.run import RunStatus, RunSummary
from stripewise.model.run_headline import figures_in_units

COLUMNS = (
    "ID",  # what `stripewise history compare ID ID` takes
    "Started",
    "Name",
    "Results",
    "Array",
    "Tuning",
    "Target",
    "Host",
    "Engine",
    "Status",
    "Tags",
    "Notes",
)
SORT_ROLE = Qt.ItemDataRole.UserRole + 1  # what a column sorts by (time, not its text)
# the columns the listing's query orders (history.run_pages); the others sort only a list
# fetched whole, as the rows fetched so far are not the whole list's first
SORTED_TEXT = ("Name", "Host", "Target", "Engine", "Status")  # by the query's text, any case
SORTED_IN_QUERY = ("ID", "Started", *SORTED_TEXT)
UNSORTABLE_PARTIAL = (
    "Sorts a list read whole: this one is read a page at a time as it scrolls, so its "
    "whole list is read first (ID, Started, Name, Host, Target, Engine and Status sort at once)"
)
_AnyIndex = QModelIndex | QPersistentModelIndex
# an imported run's Array and Tuning when its file did not say: unknown, not "none"
NOT_RECORDED = "not recorded"
_FACTS = (COLUMNS.index("Array"), COLUMNS.index("Tuning"))


def _cells(run: RunSummary, mib: bool) -> tuple[str, ...]:
    name = f"\u2605 {run.name}" if run.baseline else run.name  # the star marks a baseline
    engine = f"{run.engine} {run.engine_version}".strip()
    if run.source == "imported":
        engine = f"{engine} (imported)"
    first_note_line = run.notes.strip().splitlines()[0] if run.notes.strip() else ""
    return (
        str(run.id),
        run.started_at.astimezone().strftime("%Y-%m-%d %H:%M"),
        name,
        figures_in_units(run.headline.figures, mib=mib),  # one unit, the toggle's
        run.headline.array or (NOT_RECORDED if run.source == "imported" else ""),
        run.headline.tuning or (NOT_RECORDED if run.source == "imported" else ""),
        run.target,
        run.host,
        engine,
        f"{run.status.value} (partial)" if run.partial else run.status.value,  # as the CLI's
        ", ".join(run.tags),
        first_note_line,
    )


class RunTableModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self._runs: list[RunSummary] = []
        self._cells: list[tuple[str, ...]] = []
        self._mib = False
        # asks for the next page; None: every run the query lists is here
        self._fetch_next: Callable[[], None] | None = None
        self._fetching = False

    def set_runs(
        self, runs: list[RunSummary], fetch_next: Callable[[], None] | None = None
    ) -> None:
        """The listing from its first row; `fetch_next` reads the rows after them."""
        self.beginResetModel()
        self._runs = list(runs)
        self._cells = [_cells(run, self._mib) for run in self._runs]  # once, not per paint
        self._fetch_next, self._fetching = fetch_next, False
        self.endResetModel()

    def add_runs(
        self, runs: list[RunSummary], fetch_next: Callable[[], None] | None = None
    ) -> None:
        """The next page, after the rows already here."""
        self._fetch_next, self._fetching = fetch_next, False
        if runs:
            first = len(self._runs)
            self.beginInsertRows(QModelIndex(), first, first + len(runs) - 1)
            self._runs += runs
            self._cells += [_cells(run, self._mib) for run in runs]
            self.endInsertRows()

    def canFetchMore(self, parent: _AnyIndex = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and self._fetch_next is not None and not self._fetching

    def fetchMore(self, parent: _AnyIndex = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent) and self._fetch_next is not None:
            self._fetching = True  # until add_runs: one page asked at a time
            self._fetch_next()

    @property
    def complete(self) -> bool:
        """Every run the listing's query lists is here."""
        return self._fetch_next is None

    def set_binary_units(self, mib: bool) -> None:
        """Throughput in the Results column in MiB/s (2^20 B/s) instead of MB/s (10^6 B/s)."""
        if mib == self._mib:
            return
        self._mib = mib
        self._cells = [_cells(run, mib) for run in self._runs]
        if self._runs:  # only the figures change: the selection stays
            column = COLUMNS.index("Results")
            self.dataChanged.emit(self.index(0, column), self.index(len(self._runs) - 1, column))

    @property
    def binary_units(self) -> bool:
        return self._mib

    def row_of(self, run_id: int) -> int | None:
        return next((row for row, run in enumerate(self._runs) if run.id == run_id), None)

    def run_at(self, row: int) -> RunSummary:
        return self._runs[row]

    @property
    def runs(self) -> list[RunSummary]:
        return list(self._runs)

    def rowCount(self, parent: _AnyIndex = QModelIndex()) -> int:  # noqa: B008 (Qt signature)
        return 0 if parent.isValid() else len(self._runs)

    def columnCount(self, parent: _AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole and not self.complete:
            return None if COLUMNS[section] in SORTED_IN_QUERY else UNSORTABLE_PARTIAL
        return None

    def data(self, index: _AnyIndex, role: int = 0) -> Any:
        if not index.isValid():
            return None
        run, column = self._runs[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells[index.row()][column]
        if role == Qt.ItemDataRole.ToolTipRole:
            if COLUMNS[column] == "Notes":
                return run.notes or None
            if column in _FACTS and self._cells[index.row()][column] == NOT_RECORDED:
                return "Imported from a file that does not say what was in force"
            return self._cells[index.row()][column] or None
        if role == SORT_ROLE:
            if column == 0:
                return run.id
            if column == 1:
                return run.started_at.timestamp()
            if COLUMNS[column] in SORTED_TEXT:  # as the query orders it (no star, no version)
                title = COLUMNS[column]
                return (
                    run.status.value if title == "Status" else getattr(run, title.lower())
                ).lower()
            return self._cells[index.row()][column].lower()
        if role == Qt.ItemDataRole.FontRole and run.baseline:
            font = QFont()
            font.setBold(True)
            return font
        muted = column in _FACTS and self._cells[index.row()][column] == NOT_RECORDED
        if role == Qt.ItemDataRole.ForegroundRole and (
            muted or run.status is not RunStatus.COMPLETE
        ):
            return QApplication.palette().color(
                QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text
            )
        return None
