"""The Experiment page's "Kept experiments": every experiment the history keeps, newest first,
with what it varied and what it found; one selected opens below (chart, points, card, Apply);
Export, Delete (to the trash with its runs; Restore from the trash's view) and Compare two of
the same parameters. The history is read and written by `ExperimentHistory`, never here."""

from __future__ import annotations

import math
from pathlib import Path

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QStyle,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui import file_places
from stripewise.gui import help_dialogs as says
from stripewise.gui.experiment_kept_compare import KeptComparisonDialog
from stripewise.gui.experiment_kept_detail import KeptDetail
from stripewise.gui.history_io import EXPORT_KINDS, export_kind
from stripewise.gui.tables import Table
from stripewise.model.run import RunStatus
from stripewise.model.wording import count_noun
from stripewise.services.experiment_history import (
    ExperimentHistory,
    ExperimentSummary,
    KeptComparison,
    KeptExperiment,
)
from stripewise.services.tuning import TuningService

COLUMNS = (
    "ID", "Name", "Started", "Target", "Varied", "Verdict", "Recommended", "Points", "Runs",
    "Status",
)  # fmt: skip
NUMERIC = frozenset({"ID", "Points", "Runs"})
# the columns of text that give way when the list is narrower than its contents (elided,
# whole in their tooltips), each down to a least width; the others keep theirs
WIDEST_PX = {"Name": 220, "Target": 160, "Varied": 180, "Recommended": 220, "Verdict": 220}
# a list narrower than its columns tries these in turn, the first that fits wins: lines each
# column's words may wrap to (1 unless named), and the columns hidden; the answer (verdict,
# what to keep) wraps last, and only Varied (the recommendation names the parameters) and
# Points (the opened experiment's table lists them) are hidden, never what tells them apart
TAGS = {"Name": 2, "Started": 2, "Target": 2}  # what tells the experiments apart
ANSWER = ("Verdict", "Recommended")
SAID_ELSEWHERE = frozenset({"Varied", "Points"})
WRAPPINGS: tuple[tuple[dict[str, int], frozenset[str]], ...] = (
    ({**TAGS, "Varied": 2}, frozenset()),
    ({**TAGS, "Varied": 2, **dict.fromkeys(ANSWER, 2)}, frozenset()),
    ({**TAGS, **dict.fromkeys(ANSWER, 2)}, SAID_ELSEWHERE),
    ({**TAGS, "Name": 3, **dict.fromkeys(ANSWER, 3)}, SAID_ELSEWHERE),
)
UNWRAPPED_FIRST = (*ANSWER, "Started", "Target", "Varied")
# narrower still (below about 700 px), these are elided after all
GIVING_FIRST = (("Name", "Target", "Varied"), ("Recommended", "Verdict"))
NARROWEST_PX = 60
LIST_PX = 210  # the listing's share when the page first shows: the opened one gets the rest
SCOPES = {"kept": "Kept experiments", "trash": "Trash (deleted experiments)"}
DELETE_TIP = "Move the experiment and its runs to the trash (Restore brings them back)"
DELETE_RUNNING = "Still running: its runs are being written. Delete it once it has ended"
NONE_KEPT = "No experiment kept yet: each one run on the Design and Run tab is kept here."
EMPTY_TRASH = "The trash holds no experiment."
HINT = "Select one to open it; select two of the same parameters (Ctrl+click) to compare them."


def _least_width(advances: list[int], space: int, lines: int) -> int:
    """The narrowest line width that fits words of these advances, in order, greedily
    into at most `lines` lines (a word longer than the width gets a line of its own)."""

    def fits(width: int) -> bool:
        used, line = 1, 0
        for advance in advances:
            wanted = advance if line == 0 else line + space + advance
            if wanted <= width or line == 0:
                line = wanted
            else:
                used, line = used + 1, advance
        return used <= lines

    low, high = max(advances), sum(advances) + space * (len(advances) - 1)
    while low < high:  # the least width that fits, by halving
        middle = (low + high) // 2
        low, high = (low, middle) if fits(middle) else (middle + 1, high)
    return low


def summary_cells(summary: ExperimentSummary) -> tuple[str, ...]:
    when = summary.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
    verdict = "" if summary.verdict is None else summary.verdict.words
    return (
        str(summary.id),
        summary.name,
        when,
        summary.target,
        ", ".join(summary.parameters),
        verdict,
        summary.recommended_text,
        str(summary.points),
        str(summary.runs),
        summary.status.value,
    )


class KeptExperiments(QWidget):
    statusMessage = Signal(str)

    def __init__(
        self, service: ExperimentHistory, tuning: TuningService, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.service = service
        self.summaries: list[ExperimentSummary] = []
        self.dialogs: list[KeptComparisonDialog] = []
        self._opening: int | None = None  # the experiment asked for, until it arrives

        self.scope = QComboBox()
        for key, text in SCOPES.items():
            self.scope.addItem(text, key)
        self.scope.setAccessibleName("Show")
        self.scope.currentIndexChanged.connect(lambda _i: self.reload())
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Two experiments of the same parameters, value by value")
        self.export_button = QPushButton("Export\u2026")
        self.export_button.setToolTip("As an HTML report with its charts, CSV or JSON")
        self.delete_button = QPushButton("Delete")
        self.delete_button.setToolTip(DELETE_TIP)
        self.restore_button = QPushButton("Restore")
        self.restore_button.setToolTip("Bring the experiment and its runs back from the trash")
        self.compare_button.clicked.connect(self.compare)
        self.export_button.clicked.connect(self.export)
        self.delete_button.clicked.connect(self.delete)
        self.restore_button.clicked.connect(self.restore)
        tools = QHBoxLayout()
        tools.addWidget(self.scope)
        for button in (
            self.compare_button, self.export_button, self.delete_button, self.restore_button
        ):  # fmt: skip
            tools.addWidget(button)
        tools.addStretch(1)

        self.count = QLabel()
        self.table = Table(0, len(COLUMNS))
        self.table.setAccessibleName("Kept experiments")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setWordWrap(True)  # only where the list is narrower than one line each
        # (and not once even that is too wide: fit_columns elides then)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        rows = self.table.verticalHeader().defaultSectionSize()
        self.table.setMinimumHeight(header.sizeHint().height() + 2 * rows + 4)
        self._sized = False
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.table.viewport().installEventFilter(self)
        self.note = QLabel(HINT)
        self.note.setObjectName("keptNote")
        self.note.setWordWrap(True)

        self.detail = KeptDetail(tuning)
        self.detail.told.connect(self._tell)
        listing = QWidget()
        listing_layout = QVBoxLayout(listing)
        listing_layout.setContentsMargins(0, 0, 0, 0)
        listing_layout.addLayout(tools)
        listing_layout.addWidget(self.count)
        listing_layout.addWidget(self.table, 1)
        listing_layout.addWidget(self.note)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(listing)
        self.split.addWidget(self.detail)
        self.split.setStretchFactor(0, 0)
        self.split.setStretchFactor(1, 1)
        self.split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.addWidget(self.split)

        service.listed.connect(self._on_listed)
        service.failed.connect(self._tell)
        self._selection_changed()

    def fit_columns(self) -> None:
        """Every column whole on one line when it fits the list's width (the name takes what
        is left); else the first of WRAPPINGS that fits: the name, start, target and values
        varied wrap first, then the verdict and what to keep (whole, on two lines); then
        Varied and Points hide. Only narrower than all that are the text columns elided."""
        table = self.table
        for column in range(table.columnCount()):
            table.setColumnHidden(column, False)
        table.resizeColumnsToContents()
        for heading, widest in WIDEST_PX.items():
            column = COLUMNS.index(heading)
            table.setColumnWidth(column, min(widest, table.columnWidth(column)))
        room = table.viewport().width()
        excess = table.horizontalHeader().length() - room
        if excess > 0:
            excess = self._wrap(room)
        if excess <= 0:  # room to spare: the name takes it
            name = COLUMNS.index("Name")
            table.setColumnWidth(name, table.columnWidth(name) - excess)
        else:
            self._elide(excess)
        # elided cells one line each: wrapped at NARROWEST_PX they grew six lines tall
        if table.wordWrap() != (excess <= 0):
            table.setWordWrap(excess <= 0)
        table.resizeRowsToContents()

    def _wrap(self, room: int) -> int:
        """Sets the first of WRAPPINGS that fits (else the last): what is still over."""
        table = self.table
        one_line = [table.columnWidth(c) for c in range(len(COLUMNS))]
        # Varied hides only where the recommendations name every parameter varied
        named = all(s.recommended_text for s in self.summaries)
        for lines, hidden in WRAPPINGS:
            hide = hidden if named else hidden - {"Varied"}
            widths = [
                0 if heading in hide else
                min(one_line[c], self._wrapped_px(c, lines[heading])) if heading in lines else
                one_line[c]
                for c, heading in enumerate(COLUMNS)
            ]  # fmt: skip
            if sum(widths) <= room:
                break
        for heading in UNWRAPPED_FIRST:  # room to spare: whole lines again, the answer first
            column = COLUMNS.index(heading)
            wider = one_line[column] - widths[column]
            if widths[column] and 0 < wider <= room - sum(widths):
                widths[column] = one_line[column]
        for column, width in enumerate(widths):
            table.setColumnHidden(column, COLUMNS[column] in hide)
            if width:
                table.setColumnWidth(column, width)
        return sum(widths) - room

    def _wrapped_px(self, column: int, lines: int) -> int:
        """The least width that holds each cell of the column (and its heading) in `lines`
        lines, broken between words as the table wraps them."""
        table = self.table
        metrics = table.fontMetrics()
        margin = 2 * (table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1) + 2
        header = table.horizontalHeader().sectionSizeHint(column)
        needed = [header]
        for row in range(table.rowCount()):
            item = table.item(row, column)
            words = item.text().split() if item is not None else []
            if words:
                advances = [metrics.horizontalAdvance(w) for w in words]
                needed.append(
                    margin + _least_width(advances, metrics.horizontalAdvance(" "), lines)
                )
        return max(needed)

    def _elide(self, excess: int) -> None:
        """The text columns narrowed alike, the name, target and values varied first, each
        down to NARROWEST_PX: elided, whole in their tooltips."""
        table = self.table
        for names in GIVING_FIRST:
            elastic = [
                COLUMNS.index(n) for n in names if not table.isColumnHidden(COLUMNS.index(n))
            ]
            room = sum(max(0, table.columnWidth(c) - NARROWEST_PX) for c in elastic)
            share = min(1.0, excess / room) if room else 0.0
            for column in elastic:
                width = table.columnWidth(column)
                give = math.ceil(max(0, width - NARROWEST_PX) * share)  # up: no pixel over
                table.setColumnWidth(column, width - give)
                excess -= give
            if excess <= 0:
                return

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self.fit_columns()  # the list's own width, once its layout has set it
        return super().eventFilter(watched, event)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._sized:  # the listing small, the opened experiment the rest
            self._sized = True
            total = sum(self.split.sizes())
            self.split.setSizes([LIST_PX, max(1, total - LIST_PX)])

    # --- the listing ------------------------------------------------------------------------
    @property
    def in_trash(self) -> bool:
        return bool(self.scope.currentData() == "trash")

    def reload(self) -> None:
        self.service.load(trash=self.in_trash)

    def _on_listed(self, summaries: list[ExperimentSummary], trash: bool) -> None:
        if trash != self.in_trash:
            return  # the other view's listing, overtaken by a change of view
        chosen = set(self.selected_ids())
        open_id = self.detail.kept.stored.summary.id if self.detail.kept else None
        self.summaries = summaries
        table = self.table
        table.blockSignals(True)
        table.setRowCount(len(summaries))
        for row, summary in enumerate(summaries):
            for column, text in enumerate(summary_cells(summary)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                item.setData(Qt.ItemDataRole.UserRole, summary.id)
                if COLUMNS[column] in NUMERIC:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                table.setItem(row, column, item)
            if summary.id in chosen:
                table.selectRow(row)
        table.blockSignals(False)
        self.fit_columns()
        where = "in the trash" if trash else "kept"
        self.count.setText(
            f"{count_noun(len(summaries), 'experiment')} {where}, newest first"
            if summaries
            else EMPTY_TRASH
            if trash
            else NONE_KEPT
        )
        if open_id not in {s.id for s in summaries}:
            self.detail.show_nothing()
        self._selection_changed(reopen=False)

    def selected_ids(self) -> list[int]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.summaries[row].id for row in rows if row < len(self.summaries)]

    def select(self, *experiment_ids: int) -> None:
        """Select these experiments in the listing (tests, and after a run ends)."""
        self.table.clearSelection()
        mode = self.table.selectionMode()
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        for row, summary in enumerate(self.summaries):
            if summary.id in experiment_ids:
                self.table.selectRow(row)
        self.table.setSelectionMode(mode)

    def _selection_changed(self, reopen: bool = True) -> None:
        chosen = self.selected_ids()
        trash = self.in_trash
        self.compare_button.setEnabled(len(chosen) == 2 and not trash)
        self.export_button.setEnabled(len(chosen) == 1)
        # a running experiment's runs are still being written: it is deleted once it ends
        running = any(s.status is RunStatus.RUNNING for s in self.summaries if s.id in chosen)
        self.delete_button.setVisible(not trash)
        self.delete_button.setEnabled(len(chosen) == 1 and not trash and not running)
        self.delete_button.setToolTip(DELETE_RUNNING if running else DELETE_TIP)
        self.restore_button.setVisible(trash)
        self.restore_button.setEnabled(len(chosen) == 1 and trash)
        if reopen and len(chosen) == 1:
            self.open(chosen[0])

    # --- one experiment ---------------------------------------------------------------------
    def open(self, experiment_id: int) -> None:
        self._opening = experiment_id
        self.service.get(experiment_id, self._on_opened)

    def _on_opened(self, kept: KeptExperiment) -> None:
        if shiboken6.isValid(self) and kept.stored.summary.id == self._opening:
            self.detail.show_experiment(kept)

    def export(self) -> None:
        chosen = self.selected_ids()
        if len(chosen) != 1:
            return
        experiment_id = chosen[0]
        path, picked = QFileDialog.getSaveFileName(
            self,
            says.export_experiment(experiment_id),
            file_places.suggested(f"experiment-{experiment_id}.html"),
            ";;".join(EXPORT_KINDS),
        )
        file_places.chosen(path)
        if not path:
            return
        fmt, target = export_kind(Path(path), picked)
        self.service.export(
            experiment_id, fmt, target, lambda said: self._tell(f"Experiment {said}.")
        )

    def delete(self) -> None:
        chosen = self.selected_ids()
        if len(chosen) == 1 and not self.in_trash:
            number = chosen[0]
            self.service.delete(
                number,
                lambda moved: self._tell(
                    f"Experiment {number} and its {count_noun(len(moved), 'run')} moved to the "
                    "trash: the trash's view restores them."
                ),
            )

    def restore(self) -> None:
        chosen = self.selected_ids()
        if len(chosen) == 1 and self.in_trash:
            number = chosen[0]
            self.service.restore(
                number,
                lambda moved: self._tell(
                    f"Experiment {number} and its {count_noun(len(moved), 'run')} restored."
                ),
            )

    def compare(self) -> None:
        chosen = self.selected_ids()
        if len(chosen) != 2:
            return
        by_id = {s.id: s for s in self.summaries}
        first, second = sorted(chosen, key=lambda i: (by_id[i].created_at, i))  # older first
        self.service.compare(first, second, self._on_compared, self._refused)

    def _on_compared(self, comparison: KeptComparison) -> None:
        if not shiboken6.isValid(self):
            return
        dialog = KeptComparisonDialog(comparison, self.window())
        self.dialogs = [d for d in self.dialogs if shiboken6.isValid(d)] + [dialog]
        dialog.show()

    def _refused(self, message: str) -> None:
        self._tell(f"Not compared: {message}.")

    def _tell(self, text: str) -> None:
        if shiboken6.isValid(self):
            self.note.setText(text)
            self.statusMessage.emit(text)
