"""The window's list of pages: each page's icon and name, or its icon alone in a narrow window.

At 800x600, the console's smallest mode, the names' column took 170 of the 800 px, and the
Benchmark page's plots got 28 px each during a run. Below `COMPACT_BELOW_PX` the list shows the
icons alone in a column about a quarter as wide; each item keeps its name as its text (the
accessible name and what tests and the keyboard search see) and shows it as a tooltip.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QIcon, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemDelegate,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from stripewise.gui.icons import line_icon

COMPACT_BELOW_PX = 1000  # window widths below this show the icons alone
ICON_PX = 22
WIDE_PX = (150, 220)  # the least and most the column takes beside the names
_ITEM_PAD_PX = 12  # beside the icon, each side, in the compact column

_Index = QModelIndex | QPersistentModelIndex


class _IconOnly(QStyledItemDelegate):
    """Paints an item as the style would, without its text."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        shown = QStyleOptionViewItem(option)
        self.initStyleOption(shown, index)
        icon = QIcon(shown.icon)  # a copy: the option's own is emptied next
        shown.icon, shown.text = QIcon(), ""
        style = shown.widget.style() if shown.widget is not None else None
        if style is not None:  # the item's background, selection and focus, as the style has them
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, shown, painter, shown.widget)
        selected = bool(shown.state & QStyle.StateFlag.State_Selected)
        mode = QIcon.Mode.Selected if selected else QIcon.Mode.Normal
        box = QRect(QPoint(0, 0), QSize(ICON_PX, ICON_PX))
        box.moveCenter(shown.rect.center())
        icon.paint(painter, box, Qt.AlignmentFlag.AlignCenter, mode)

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        height = super().sizeHint(option, index).height()
        return QSize(ICON_PX + 2 * _ITEM_PAD_PX, max(height, ICON_PX + 8))


class Navigation(QListWidget):
    """One item per page, in `views` order; its data is the view's name."""

    def __init__(self, views: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("navigation")
        self.setAccessibleName("Navigation")
        self.setIconSize(QSize(ICON_PX, ICON_PX))
        self._names = tuple(views)
        for name in self._names:
            item = QListWidgetItem(name.capitalize())
            item.setData(Qt.ItemDataRole.UserRole, name)
            self.addItem(item)
        self._wide_delegate: QAbstractItemDelegate = self.itemDelegate()
        self._icon_only = _IconOnly(self)
        self.compact = True  # so that the first call sets the wide column up
        self.set_compact(False)
        self.paint_icons()

    def fit_window(self, window_width: int) -> bool:
        """The icons alone when the window is narrower than COMPACT_BELOW_PX; -> whether that
        changed."""
        return self.set_compact(window_width < COMPACT_BELOW_PX)

    def set_compact(self, compact: bool) -> bool:
        """-> whether the column changed."""
        if compact == self.compact:
            return False
        self.compact = compact
        self.setItemDelegate(self._icon_only if compact else self._wide_delegate)
        for row in range(self.count()):
            item = self.item(row)
            item.setToolTip(item.text() if compact else "")
        if compact:
            width = ICON_PX + 2 * _ITEM_PAD_PX + 2 * self.frameWidth()
            self.setFixedWidth(width)
        else:
            self.setMinimumWidth(WIDE_PX[0])
            self.setMaximumWidth(WIDE_PX[1])
        self.doItemsLayout()
        return True

    def paint_icons(self, palette: QPalette | None = None) -> None:
        """Each page's icon in the text's colour (light and dark themes alike)."""
        for row, name in enumerate(self._names):
            self.item(row).setIcon(line_icon(f"nav-{name}", palette or self.palette()))
