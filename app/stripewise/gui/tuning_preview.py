"""The Tuning page's preview: current -> new per device and setting, with units, the New cell
editable; and the line under it that says what Apply would do, or why it cannot."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLineEdit,
    QStyledItemDelegate,
    QTableWidgetItem,
    QWidget,
)

from stripewise.gui.tables import Table
from stripewise.model.presets import SkippedChange
from stripewise.model.tunable_values import bare
from stripewise.model.tunables import Change, tunable
from stripewise.model.wording import count_noun

COLUMNS = ("Device", "Setting", "Current", "New", "Unit", "Note")
NEW = COLUMNS.index("New")
_NOTE = COLUMNS.index("Note")
PREVIEW_MIN_ROWS = 4
NOTE_MIN_WIDTH = 160  # "kept: already larger" in a line or two
_VALUE = Qt.ItemDataRole.UserRole  # the New cell's value as text, what its editor starts from


class _ValueEditor(QStyledItemDelegate):
    """Edits the value itself, not the "unchanged" shown for a value that stays."""

    def setEditorData(self, editor: QWidget, index: QModelIndex | QPersistentModelIndex) -> None:
        if isinstance(editor, QLineEdit):
            editor.setText(str(index.data(_VALUE) or ""))


def unwrap(text: str) -> str:
    """Preset descriptions are wrapped for the TOML file; let the widget wrap them instead.
    Indented lines (quoted settings) keep their own lines."""
    paragraphs = []
    for paragraph in text.split("\n\n"):
        lines = paragraph.splitlines()
        if any(line.startswith(" ") for line in lines):
            paragraphs.append(paragraph)
        else:
            paragraphs.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs)


def _shown(key: str, value: object) -> str:
    """A cell's value: the Unit column names the unit, bytes also say what they come to."""
    return "-" if value is None else bare(key, value)


def gone_text(names: Sequence[str], replaced: Sequence[str] = ()) -> str:
    """Checked devices the hardware map no longer has (a loop device detached, a disk pulled),
    and those another device now has the name of (attached again, swapped)."""
    said = []
    if names:
        which = ", ".join(names)
        said.append(f"{which} {'is' if len(names) == 1 else 'are'} gone (detached or unplugged)")
    if replaced:
        which = ", ".join(replaced)
        now = "is another device" if len(replaced) == 1 else "are other devices"
        said.append(f"{which} {now} now (attached again or swapped)")
    return "; ".join(said)


def change_summary(changing: int, total: int) -> str:
    """ "4 of 5 values change", "1 of 1 value changes"."""
    verb = "changes" if changing == 1 else "change"
    return f"{changing} of {count_noun(total, 'value')} {verb}"


class PreviewTable(Table):
    """One row per change; the New cell of a change that can take a value is editable (the
    page checks what is typed: `itemChanged`)."""

    def __init__(self) -> None:
        super().__init__(0, len(COLUMNS))
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.verticalHeader().hide()
        self.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
        )
        self.setItemDelegateForColumn(NEW, _ValueEditor(self))
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # the Note takes the width left and wraps; each row grows to show all of it
        header.setSectionResizeMode(_NOTE, QHeaderView.ResizeMode.Stretch)
        self.setWordWrap(True)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # a few rows in sight however short the window: at 800x600 it had its header and one
        rows = PREVIEW_MIN_ROWS * (self.fontMetrics().lineSpacing() + 6)
        bars = header.sizeHint().height() + self.horizontalScrollBar().sizeHint().height()
        self.setMinimumHeight(rows + bars + 2 * self.frameWidth())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_note()

    def _fit_note(self) -> None:
        """The Note takes the width left, never less than NOTE_MIN_WIDTH: narrower (800x600),
        it wrapped a letter a line and one row filled the table; it scrolls into view."""
        header = self.horizontalHeader()
        left = self.viewport().width() - sum(self.columnWidth(c) for c in range(_NOTE))
        narrow = left < NOTE_MIN_WIDTH
        mode = QHeaderView.ResizeMode.Fixed if narrow else QHeaderView.ResizeMode.Stretch
        if header.sectionResizeMode(_NOTE) != mode:
            header.setSectionResizeMode(_NOTE, mode)
        if narrow and self.columnWidth(_NOTE) != NOTE_MIN_WIDTH:
            self.setColumnWidth(_NOTE, NOTE_MIN_WIDTH)

    def show_changes(self, changes: Sequence[Change]) -> None:
        self.blockSignals(True)  # filling the cells is not the user typing
        self.setRowCount(len(changes))
        for row, change in enumerate(changes):
            knob = tunable(change.setting.key)
            cells = (
                change.setting.device or "all (global)",
                knob.key,
                _shown(knob.key, change.current),
                _shown(knob.key, change.setting.value) if change.changes_anything else "unchanged",
                knob.shown_unit,
                # as `tune preview` gives it: it names the ratio/bytes half the kernel zeroes
                # only when that half is in force (its side_effects list it even at 0)
                change.note,
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column == _NOTE:
                    item.setToolTip(text)
                if column == NEW and not isinstance(change, SkippedChange):
                    item.setData(_VALUE, str(change.setting.value))  # the number, to edit
                    unit = f" ({knob.shown_unit})" if knob.shown_unit else ""
                    item.setToolTip(f"Double-click to type another value{unit}")
                else:
                    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.setItem(row, column, item)
        self.blockSignals(False)
        self._fit_note()  # the other columns took their new contents' width
