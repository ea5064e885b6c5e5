"""A layout of equal tiles in as many columns as fit, stretched to fill each row.

The hardware map's disk cards used to be 120 px whatever their text ("HITAC..." beside half a
pane of nothing): here a tile is at least as wide as its text asks (`sizeHint`), columns are as
many as fit at that width, and the row's spare width is shared out. A tile is narrower than its
text only when one column of it does not fit.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtWidgets import QLayoutItem, QWidget

from stripewise.gui.flow_layout import WrappingLayout


class TileGrid(WrappingLayout):
    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        # Qt asks a layout for its height at a width many times a pass, and each answer asked
        # every tile for its size: kept until the tiles or their sizes change (invalidate,
        # which the base class already calls: set first).
        self._heights: dict[int, int] = {}
        self._sizes: tuple[int, int, int] | None = None  # widest, narrowest, tallest tile
        self._tile_width: int | None = None
        # cells laid out before their tiles exist: (count, narrowest, height) of the tiles to
        # come, so a card box out of view takes its place without building its cards
        self._promised: tuple[int, int, int] | None = None
        super().__init__(parent, spacing)

    def promise(self, count: int, narrowest: int, height: int) -> None:
        """Lay out `count` cells of the shared `tile_width` (at least `narrowest`) and
        `height` whether or not their tiles are added yet; tiles added fill them in order."""
        self._promised = (count, narrowest, height)
        self.invalidate()

    @property
    def tile_width(self) -> int | None:
        """One width for the tiles of several grids (their columns line up), else theirs."""
        return self._tile_width

    @tile_width.setter
    def tile_width(self, width: int | None) -> None:
        self._tile_width = width
        self.invalidate()

    def invalidate(self) -> None:
        self._heights.clear()
        self._sizes = None
        super().invalidate()

    def addItem(self, item: QLayoutItem) -> None:
        super().addItem(item)
        self.invalidate()

    def takeAt(self, index: int) -> QLayoutItem | None:
        item = super().takeAt(index)
        self.invalidate()
        return item

    def heightForWidth(self, width: int) -> int:
        if width not in self._heights:
            self._heights[width] = super().heightForWidth(width)
        return self._heights[width]

    def _tile_sizes(self) -> tuple[int, int, int]:
        if self._promised is not None and self._tile_width is not None:
            return (self._tile_width, *self._promised[1:])
        if self._sizes is None:
            hints = [item.sizeHint() for item in self._items]
            narrowest = max((item.minimumSize().width() for item in self._items), default=0)
            widest = max((hint.width() for hint in hints), default=0)
            self._sizes = (widest, narrowest, max((hint.height() for hint in hints), default=0))
        return self._sizes

    def wanted_width(self) -> int:
        """The widest tile's text: every tile gets at least this when the row has room."""
        if self.tile_width is not None:
            return self.tile_width
        return self._tile_sizes()[0]

    def sizeHint(self) -> QSize:
        return self._framed(QSize(self.wanted_width(), self._tile_height()))

    def minimumSize(self) -> QSize:
        return self._framed(QSize(self._tile_sizes()[1], self._tile_height()))

    def _tile_height(self) -> int:
        return self._tile_sizes()[2]

    def columns(self, width: int) -> tuple[int, int]:
        """(columns, tile width) for a row `width` wide."""
        spacing = self.spacing()
        wanted = max(1, self.wanted_width())
        count = max(1, (width + spacing) // (wanted + spacing))
        return count, max(1, (width - (count - 1) * spacing) // count)

    def _arrange(self, rect: QRect, move: bool) -> int:
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        cells = max(len(self._items), self._promised[0] if self._promised else 0)
        if not cells:
            return margins.top() + margins.bottom()
        count, width = self.columns(area.width())
        height, spacing = self._tile_height(), self.spacing()
        for index, item in enumerate(self._items):
            row, column = divmod(index, count)
            if move:
                where = QPoint(
                    area.x() + column * (width + spacing), area.y() + row * (height + spacing)
                )
                item.setGeometry(QRect(where, QSize(width, height)))
        rows = (cells + count - 1) // count
        return margins.top() + rows * height + (rows - 1) * spacing + margins.bottom()
