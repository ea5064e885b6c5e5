"""Planner dialogs: the proposed Spread swaps, generated commands, comparing plans."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui import help_dialogs as says
from stripewise.gui.screen_fit import resize_within_screen, scrolling_down
from stripewise.gui.tables import Table
from stripewise.model.ceilings import MeasuredCeiling
from stripewise.model.evaluate import evaluate
from stripewise.model.placement import Swap
from stripewise.model.plan import Plan
from stripewise.model.units import human_size
from stripewise.model.wording import count_noun
from stripewise.planner.costs import cost_per_tb_text, cost_text
from stripewise.planner.sizes import plan_usable_bytes

SPREAD_WIDTH = 720  # px: within an 800x600 console; each swap's reason wraps to it
REASON_CHARS = 30  # the reason column's least width, in characters: a few words a line


class SpreadDialog(QDialog):
    """Shows each swap and the score before and after; nothing changes until Apply."""

    def __init__(
        self,
        array: str,
        swaps: tuple[Swap, ...],
        before: int,
        after: int,
        plan: Plan,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Spread {array}")
        layout = QVBoxLayout(self)
        if not swaps:
            layout.addWidget(
                QLabel(f"{array} is as well spread as the free disks allow (score {before}).")
            )
        else:
            layout.addWidget(says.purpose_label(says.SPREAD_SWAPS))
            score = QLabel(
                f"Spread score {before} &rarr; <b>{after}</b> with "
                f"{count_noun(len(swaps), 'swap')}:"
            )
            score.setTextFormat(Qt.TextFormat.RichText)
            layout.addWidget(score)
            listing = _swap_rows(swaps, plan)
            layout.addWidget(listing, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        if swaps:
            self.apply = buttons.addButton("Apply Swaps", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        if swaps:  # an 800x600 console holds it: the reasons wrap, and many swaps scroll
            margins = layout.contentsMargins()
            rows = listing.widget()
            assert rows is not None  # _swap_rows sets it
            shown = rows.heightForWidth(SPREAD_WIDTH - margins.left() - margins.right())
            height = self.sizeHint().height() - listing.sizeHint().height() + shown
            resize_within_screen(self, QSize(SPREAD_WIDTH, height))


def _swap_rows(swaps: tuple[Swap, ...], plan: Plan) -> QScrollArea:
    """One row per swap: the disk out, the disk in, and why, wrapped to the dialog's width."""

    def where(disk_id: str) -> str:
        disk = plan.disk(disk_id)
        return f"{disk_id} ({disk.controller})" if disk else disk_id

    rows = QWidget()
    grid = QGridLayout(rows)
    grid.setContentsMargins(0, 0, 0, 0)
    for row, swap in enumerate(swaps):
        why = _plain(swap.reason)  # wrapped, never narrower than a few words
        why.setWordWrap(True)
        why.setMinimumWidth(why.fontMetrics().averageCharWidth() * REASON_CHARS)
        out, into = _plain(where(swap.out_disk)), _plain(where(swap.in_disk))
        for column, cell in enumerate((out, _plain("\N{RIGHTWARDS ARROW}"), into, why)):
            grid.addWidget(cell, row, column, Qt.AlignmentFlag.AlignTop)
    grid.setColumnStretch(3, 1)
    grid.setRowStretch(len(swaps), 1)  # room to spare goes below the rows, not between them
    area = scrolling_down(rows)
    area.setMinimumHeight(min(rows.sizeHint().height(), 4 * area.fontMetrics().lineSpacing()))
    return area


def _plain(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


class CommandsDialog(QDialog):
    """The commands to build the array: copy them, or save them as a commented script."""

    def __init__(
        self, title: str, script: str, parent: QWidget | None = None, purpose: str = ""
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        resize_within_screen(self, QSize(820, 520))
        self.create_button: QPushButton | None = None  # Create on This Machine, when offered
        layout = QVBoxLayout(self)
        if purpose:
            layout.addWidget(says.purpose_label(purpose))
        note = QLabel(
            "These commands destroy data on the listed disks. Check every serial "
            "number against the label on the drive before running them."
        )
        note.setWordWrap(True)
        layout.addWidget(note)
        self.text = QPlainTextEdit(script)
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = self.text.font()
        font.setFamily("monospace")
        self.text.setFont(font)
        layout.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        copy = QPushButton("&Copy")
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(script))
        self.save = QPushButton("&Save Script…")
        buttons.addButton(copy, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.save, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


def comparison_rows(
    plans: list[tuple[str, Plan]], measured: Iterable[MeasuredCeiling] = ()
) -> tuple[list[str], list[list[str]]]:
    """Per plan: capacity, worst tolerance, predicted speeds, cost, cost per TB. `measured`:
    the ceilings the planner's cards predict with, so a plan reads the same range here as on
    its card (evaluate uses only those of the plan's own host)."""
    measured = tuple(measured)
    header = [
        "Plan",
        "Arrays",
        "Usable",
        "Tolerates",
        "Read MB/s",
        "Write MB/s",
        "Cost",
        "Cost / usable TB",
    ]
    rows = []
    for name, plan in plans:
        report = evaluate(plan, measured)
        arrays = [a for a in report.arrays if a.array.members]
        tolerance = min((a.geometry.fault_tolerance for a in arrays), default=0)
        predicted = [a.prediction for a in arrays if a.prediction is not None]
        read = sum(p.read_mb_s.low for p in predicted), sum(p.read_mb_s.high for p in predicted)
        write = sum(p.write_mb_s.low for p in predicted), sum(p.write_mb_s.high for p in predicted)
        known = len(predicted) == len(arrays) and arrays
        usable = plan_usable_bytes(plan, report)  # None: a disk's size was not recorded
        rows.append(
            [
                name,
                str(len(arrays)),
                "unknown" if usable is None else human_size(usable),
                f"{count_noun(tolerance, 'disk')} (worst array)",
                f"{read[0]:,.0f} – {read[1]:,.0f}" if known else "unknown",
                f"{write[0]:,.0f} – {write[1]:,.0f}" if known else "unknown",
                cost_text(plan, report),
                cost_per_tb_text(plan, report),
            ]
        )
    return header, rows


class CompareDialog(QDialog):
    def __init__(
        self,
        plans: list[tuple[str, Plan]],
        parent: QWidget | None = None,
        measured: Iterable[MeasuredCeiling] = (),
    ) -> None:
        super().__init__(parent)
        self.measured = tuple(measured)  # the planner's, as its cards use them
        self.setWindowTitle("Compare Plans")
        resize_within_screen(self, QSize(900, 300))
        layout = QVBoxLayout(self)
        layout.addWidget(says.purpose_label(says.COMPARE_PLANS))
        self.table = Table()
        self.table.verticalHeader().hide()
        layout.addWidget(self.table)
        self.set_plans(plans)
        note = QLabel("Speeds are summed over a plan's arrays, each read or written alone.")
        layout.addWidget(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.add_file = QPushButton("Add Plan &File…")
        buttons.addButton(self.add_file, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def set_plans(self, plans: list[tuple[str, Plan]]) -> None:
        header, rows = comparison_rows(plans, self.measured)
        self.table.setColumnCount(len(header))
        self.table.setRowCount(len(rows))
        self.table.setHorizontalHeaderLabels(header)
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(value))
        self.table.resizeColumnsToContents()
