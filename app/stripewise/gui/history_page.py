"""History page: every recorded or imported run, sortable and filterable; a selected run's
results below (laid out as bonnie++'s report, figures it has no row for in a second table);
rename, tag, annotate, mark a baseline, delete (with undo) and compare 2 to 8. Throughput
shows in MB/s, or MiB/s with the toggle, in the list and the results alike. Double-click or
Enter opens a run (its detail in full view); F2 renames it."""

from __future__ import annotations

from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QFont, QFontMetrics, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui.flow_layout import FlowLayout
from stripewise.gui.history_detail import OtherFigures, RunDetailPane
from stripewise.gui.history_listing import SCOPES, RunListing
from stripewise.gui.history_model import COLUMNS, SORT_ROLE, RunTableModel
from stripewise.gui.history_questions import ask_name, ask_notes, ask_tags, confirm_delete
from stripewise.gui.pages import page_title
from stripewise.gui.tables import TableView
from stripewise.model.run import RunSummary
from stripewise.model.run_detail import RunDetail
from stripewise.model.wording import count_noun
from stripewise.services.history import HistoryService

MAX_COMPARED = 8
_MEASURED_ROWS = 50
_WIDEST = {"Name": 240, "Results": 300, "Tuning": 240, "Target": 160, "Array": 200}
UNDO_SHOWN_MS = 30_000
# the detail pane takes what a full run needs, but never more than this share of the page:
# the list keeps room for several runs (at 1024x768: a header and seven rows)
DETAIL_SHARE_MAX = 0.6


class HistoryPage(QWidget):
    compareRequested = Signal(list)  # run ids, 2 to 8, oldest first
    importRequested = Signal()
    exportRequested = Signal(list)  # run ids
    binaryUnitsChanged = Signal(bool)  # the MiB/s toggle: the Benchmark page's follows it

    def __init__(self, history: HistoryService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._history = history
        self.model = RunTableModel()
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.shown_run: RunDetail | None = None
        self.listing = RunListing(history, self.model, self)  # what is listed, page by page
        self._selected_before: set[int] = set()  # as a listing replaced the rows
        self._fitted = False  # the columns' widths, from the first rows listed
        self._failed_at = -1  # listings asked before a failure was said do not hide it
        self.model.modelAboutToBeReset.connect(
            lambda: setattr(self, "_selected_before", set(self.selected_ids()))
        )
        self._wanted: int | None = None
        self._undo_ids: list[int] = []

        self.caption = QLabel("Reading the history...")
        self.caption.setWordWrap(True)
        self.scope = QComboBox()
        self.scope.setAccessibleName("Which runs")
        for key, label in SCOPES.items():
            self.scope.addItem(label, key)
        self.scope.currentIndexChanged.connect(lambda _i: self._apply_filter())
        self.filter = QLineEdit()
        self.filter.setAccessibleName("Filter runs")
        self.filter.setPlaceholderText(
            "Filter: host=node1 tag=raid5 since=2026-03-01 read_ahead_kb=4096 "
            "filesystem=xfs, or any word (name, tag, note, host...)"
        )
        self.filter.setClearButtonEnabled(True)
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(300)  # typing does not query on every key
        self._filter_timer.timeout.connect(self._apply_filter)
        self.filter.textChanged.connect(lambda _text: self._filter_timer.start())

        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Select 2 to 8 runs (Ctrl+click) to set them side by side")
        self.compare_button.clicked.connect(self.compare_selected)
        self.import_button = QPushButton("&Import...")
        self.import_button.setToolTip("bonnie++ CSV or tables, fio JSON, iozone output")
        self.import_button.clicked.connect(self.importRequested.emit)
        self.export_button = QPushButton("E&xport...")
        self.export_button.clicked.connect(lambda: self.exportRequested.emit(self.selected_ids()))
        self.run_button = QPushButton("R&un")
        self.run_menu = self._make_run_menu()
        self.run_button.setMenu(self.run_menu)
        self.refresh_button = QPushButton("R&efresh")
        self.refresh_button.setToolTip(
            "Read the history again (F5): runs saved elsewhere appear by themselves within a "
            "few seconds, renames and tags made elsewhere with this"
        )
        self.refresh_button.clicked.connect(history.refresh)
        self.restore_button = QPushButton("Rest&ore")
        self.restore_button.clicked.connect(self.restore_selected)
        self.mib_toggle = QCheckBox("Mi&B/s")
        self.mib_toggle.setToolTip("Show throughput in MiB/s (2^20 B/s) instead of MB/s (10^6 B/s)")
        self.mib_toggle.toggled.connect(self.set_binary_units)

        self.undo_bar = QWidget()
        undo_layout = QHBoxLayout(self.undo_bar)
        undo_layout.setContentsMargins(0, 0, 0, 0)
        self.undo_label = QLabel()
        self.undo_button = QPushButton("Undo")
        self.undo_button.clicked.connect(self.undo_delete)
        undo_layout.addWidget(self.undo_label, 1)
        undo_layout.addWidget(self.undo_button)
        self.undo_bar.hide()
        self._undo_timer = QTimer(self)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.setInterval(UNDO_SHOWN_MS)
        self._undo_timer.timeout.connect(self.undo_bar.hide)

        self.table = TableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(1, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.sortIndicatorChanged.connect(self.listing.set_order)
        # the table sorts with it (through Python: PySide cannot connect to this C++ method)
        self.listing.orderReset.connect(
            lambda column, order: header.setSortIndicator(column, order)
        )
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(
            lambda pos: self.run_menu.exec(self.table.viewport().mapToGlobal(pos))
        )
        # Enter, and a double-click, open the run (F2 renames it, from the Run menu)
        self.table.activated.connect(self.open_run_at)
        self.empty = QLabel(
            "No runs recorded yet. Benchmarks you run and results you import (bonnie++, fio, "
            "iozone) are listed here, to compare side by side."
        )
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.detail = RunDetailPane()
        self.detail_title = self.detail.title
        self.detail_results = self.detail.results
        self.other_figures = self.detail.other_figures
        self._detail_fitted = True  # until the user drags the divider: then it is theirs
        self._build_layout()
        self.table.selectionModel().selectionChanged.connect(lambda *_a: self._selection_changed())
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        history.runsLoaded.connect(self.listing.show_newest)
        history.runsCounted.connect(self.listing.counted)
        self.listing.listed.connect(self._listed)
        self.listing.captionChanged.connect(self._say_listed)
        history.failed.connect(self._say_failed)
        self._selection_changed()

    def _make_run_menu(self) -> QMenu:
        menu = QMenu(self)
        entries: tuple[tuple[str, str | None, Callable[[], None]], ...] = (
            ("Rename...", "F2", self.rename_selected),
            ("Tags...", None, self.tag_selected),
            ("Notes...", None, self.annotate_selected),
            ("Mark as Baseline", None, self.toggle_baseline),
            ("Compare", None, self.compare_selected),
            ("Export...", None, lambda: self.exportRequested.emit(self.selected_ids())),
            ("Delete...", "Delete", self.delete_selected),
        )
        self.actions_by_name: dict[str, QAction] = {}
        for text, shortcut, slot in entries:
            action = QAction(text, self)
            if shortcut:
                action.setShortcut(QKeySequence(shortcut))
                action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
                self.addAction(action)
            action.triggered.connect(slot)
            menu.addAction(action)
            self.actions_by_name[text] = action
        return menu

    def _build_layout(self) -> None:
        search = QHBoxLayout()  # the filter on a row of its own: wide enough to read at 800 px
        search.addWidget(self.scope)
        search.addWidget(self.filter, 1)
        tools = FlowLayout()  # wraps rather than clipping on a small screen
        for button in (
            self.compare_button,
            self.run_button,
            self.restore_button,
            self.export_button,
            self.import_button,
            self.refresh_button,
        ):
            tools.addWidget(button)
        tools.addWidget(self.mib_toggle)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.table)
        self.split.addWidget(self.detail)
        self.split.setStretchFactor(0, 1)  # the list grows with the window; the detail is fitted
        self.split.setCollapsible(0, False)
        self.split.splitterMoved.connect(self._divider_dragged)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.split)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 10)
        layout.setSpacing(8)
        layout.addWidget(page_title("History"))
        layout.addWidget(self.caption)
        layout.addLayout(search)
        layout.addLayout(tools)
        layout.addWidget(self.undo_bar)
        layout.addWidget(self.stack, 1)

    # --- the detail pane's height ------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._detail_fitted:
            self.fit_detail()

    def fit_detail(self) -> None:
        """Give the detail pane the height a full run's figures need (FULL_RUN_ROWS), up to
        DETAIL_SHARE_MAX of the split; the run list keeps the rest and scrolls. Done as the
        window is sized, never as runs are picked, so the list does not move under a click."""
        total = sum(self.split.sizes()) or self.split.height()
        if total <= 0:
            return
        detail = min(self.detail.wanted_height(), int(total * DETAIL_SHARE_MAX))
        self.split.setSizes([total - detail, detail])

    def _divider_dragged(self, _position: int, _index: int) -> None:
        self._detail_fitted = False

    # --- listing ---------------------------------------------------------------------------
    @property
    def in_trash(self) -> bool:
        return bool(self.scope.currentData() == "trash")

    def set_binary_units(self, mib: bool) -> None:
        """Throughput in MiB/s (2^20 B/s) instead of MB/s (10^6 B/s): the Results column, the
        run's results and its other figures; the main window keeps the pages in step."""
        if self.mib_toggle.isChecked() != mib:
            self.mib_toggle.setChecked(mib)  # comes back here through `toggled`
            return
        self.model.set_binary_units(mib)
        self.detail.set_binary_units(mib)
        self.binaryUnitsChanged.emit(mib)

    def _listed(self) -> None:
        """A new listing is shown: what was selected stays selected where it is listed."""
        selected = self._selected_before
        if self.model.rowCount() and not self._fitted:
            self._fitted = True
            self._fit_columns()
        has_runs = self.model.rowCount() > 0
        self.stack.setCurrentWidget(self.split if has_runs or self.listing.filtered else self.empty)
        for run_id in selected:  # a reload after an edit keeps what was selected
            self._select(run_id, add=True)
        if self._wanted is not None:
            self.show_run(self._wanted)
        self._selection_changed()

    def _fit_columns(self) -> None:
        """Widths from the first rows' text (measuring every row of a long history costs
        hundreds of milliseconds), capped so long names and figures do not push the rest off
        screen; tooltips have the whole text."""
        header = self.table.horizontalHeader()
        bold = QFont(self.table.font())
        bold.setBold(True)  # the baseline's row is bold: measured so, its cells fit too
        metrics = QFontMetrics(bold)
        rows = range(min(self.proxy.rowCount(), _MEASURED_ROWS))
        for column, name in enumerate(COLUMNS[:-1]):  # the last one stretches
            texts = [str(self.proxy.index(row, column).data() or "") for row in rows]
            wanted = max(
                [header.sectionSizeHint(column)] + [metrics.horizontalAdvance(t) for t in texts]
            )
            header.resizeSection(column, min(wanted + 16, _WIDEST.get(name, 180)))

    def _say_failed(self, message: str) -> None:
        """Shown until a listing asked after it (a reload, a filter) is shown."""
        self._failed_at = self.listing.asked
        self.caption.setText(message)

    def _say_listed(self, caption: str) -> None:
        if self.listing.shown > self._failed_at:
            self.caption.setText(caption)

    def _apply_filter(self) -> None:
        """The scope and the typed filter, as one query (the trash ignores the filter)."""
        scope = str(self.scope.currentData())
        self.listing.set_filter(scope, "" if scope == "trash" else self.filter.text().strip())

    # --- selection -------------------------------------------------------------------------
    def selected_ids(self) -> list[int]:
        """Selected runs in the order they are listed."""
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [
            self.model.run_at(self.proxy.mapToSource(self.proxy.index(r, 0)).row()).id for r in rows
        ]

    def _selected_runs(self) -> list[RunSummary]:
        wanted = set(self.selected_ids())
        return [run for run in self.model.runs if run.id in wanted]

    def _select(self, run_id: int, *, add: bool = False) -> bool:
        row = self.model.row_of(run_id)
        if row is None:
            return False
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        flags = self.table.selectionModel().SelectionFlag
        mode = flags.Select | flags.Rows
        if not add:
            mode |= flags.Clear
            self.table.setCurrentIndex(index)
        self.table.selectionModel().select(index, mode)
        self.table.scrollTo(index)
        return True

    def select_runs(self, run_ids: list[int]) -> None:
        self.table.clearSelection()
        for position, run_id in enumerate(run_ids):
            self._select(run_id, add=position > 0)

    def show_run(self, run_id: int) -> None:
        """Select a run (once listed: a just-saved run arrives with the next reload)."""
        if not self._select(run_id):
            self._wanted = run_id
            return
        self._wanted = None

    def _selection_changed(self) -> None:
        count = len(self.table.selectionModel().selectedRows())
        trash = self.in_trash
        self.compare_button.setEnabled(2 <= count <= MAX_COMPARED and not trash)
        self.compare_button.setText(f"Compare {count}" if count >= 2 else "Compare")
        self.run_button.setEnabled(count >= 1 and not trash)
        self.export_button.setEnabled(1 <= count <= MAX_COMPARED and not trash)
        self.restore_button.setVisible(trash)
        self.restore_button.setEnabled(trash and count >= 1)
        single = count == 1
        for name in ("Rename...", "Notes...", "Mark as Baseline"):
            self.actions_by_name[name].setEnabled(single and not trash)
        self.actions_by_name["Compare"].setEnabled(self.compare_button.isEnabled())
        self.actions_by_name["Delete..."].setEnabled(count >= 1 and not trash)
        runs = self._selected_runs()
        baseline = bool(runs) and runs[0].baseline
        self.actions_by_name["Mark as Baseline"].setText(
            "Unmark as Baseline" if baseline else "Mark as Baseline"
        )

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            run = self.model.run_at(self.proxy.mapToSource(current).row())
            self._history.get_run(run.id, self._show_detail)

    def _show_detail(self, detail: RunDetail) -> None:
        if not shiboken6.isValid(self):
            return
        current = self.table.currentIndex()
        if current.isValid():  # reads finish in any order: an earlier row's must not win
            run = self.model.run_at(self.proxy.mapToSource(current).row())
            if run.id != detail.summary.id:
                return
        self.shown_run = detail
        self.detail.show_detail(detail)

    def open_run_at(self, index: QModelIndex) -> None:
        """Open the run of a row (Enter, double-click): it alone selected, its detail shown
        in full even where the divider was dragged down over it."""
        if not index.isValid():
            return
        run = self.model.run_at(self.proxy.mapToSource(index).row())
        self.show_run(run.id)
        if self.split.sizes()[1] < self.detail.wanted_height():
            self._detail_fitted = True
            self.fit_detail()

    # --- changes ---------------------------------------------------------------------------
    def rename(self, run_id: int, name: str) -> None:
        self._history.edit(lambda store: store.rename_run(run_id, name))

    def set_tags(self, run_id: int, tags: list[str]) -> None:
        self._history.edit(lambda store: store.set_tags(run_id, tags))

    def set_notes(self, run_id: int, text: str) -> None:
        self._history.edit(lambda store: store.set_notes(run_id, text))

    def rename_selected(self) -> None:
        runs = self._selected_runs()
        if len(runs) != 1 or self.in_trash:
            return
        if (name := ask_name(self, runs[0])) is not None:
            self.rename(runs[0].id, name)

    def tag_selected(self) -> None:
        """Tags for every selected run: the ones they all share are offered for editing."""
        runs = self._selected_runs()
        if runs and (tags := ask_tags(self, runs)) is not None:
            for run_id, wanted in tags.items():
                self.set_tags(run_id, wanted)

    def annotate_selected(self) -> None:
        runs = self._selected_runs()
        if len(runs) == 1 and (text := ask_notes(self, runs[0])) is not None:
            self.set_notes(runs[0].id, text)

    def toggle_baseline(self) -> None:
        runs = self._selected_runs()
        if len(runs) == 1:
            run_id, on = runs[0].id, not runs[0].baseline
            self._history.edit(lambda store: store.set_baseline(run_id, on))

    def delete_selected(self, *, confirm: bool = True) -> None:
        ids = self.selected_ids()
        if not ids or self.in_trash:
            return
        if confirm and not confirm_delete(self, ids):
            return
        self._history.edit(lambda store: store.delete_runs(ids), self._on_deleted)

    def _on_deleted(self, ids: object) -> None:
        if not shiboken6.isValid(self) or not isinstance(ids, list):
            return
        self._undo_ids = ids
        self.undo_label.setText(
            f"Deleted {count_noun(len(ids), 'run')} ({', '.join(map(str, ids))})."
        )
        self.undo_bar.show()
        self._undo_timer.start()

    def undo_delete(self) -> None:
        ids, self._undo_ids = self._undo_ids, []
        self.undo_bar.hide()
        if ids:
            self._history.edit(lambda store: store.restore_runs(ids))

    def restore_selected(self) -> None:
        ids = self.selected_ids()
        if ids and self.in_trash:
            self._history.edit(lambda store: store.restore_runs(ids))

    def compare_selected(self) -> None:
        """Oldest first: the first run is the baseline unless one of them is marked."""
        runs = sorted(self._selected_runs(), key=lambda run: (run.started_at, run.id))
        if 2 <= len(runs) <= MAX_COMPARED:
            self.compareRequested.emit([run.id for run in runs])


__all__ = ["COLUMNS", "HistoryPage", "OtherFigures"]
