"""One slot of the hardware map: a port or bay, and its disk's card.

Painted by hand (48 of these must draw in a few milliseconds). A card is as wide as its text
asks; the map's grid (`tile_grid`) gives it that much when the pane has room. A disk whose
SMART health is failing or warned carries a badge in its top right corner (docs/health.md).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import QWidget

from stripewise.gui.disk_colors import PLANNED, STATE_COLORS
from stripewise.model.health import HealthVerdict
from stripewise.model.topology import Controller, Slot
from stripewise.model.units import human_size

TILE_SIZE = QSize(120, 64)  # the least a tile is; its text may ask for more width
TILE_MIN_WIDTH = TILE_SIZE.width() // 2  # elided below its text's width when this narrow
TEXT_LEFT, TEXT_RIGHT = 13, 8  # the text's margins: the state bar is on the left
NAME_GAP = 10  # between a disk's name and its size on the line they share
BADGE_HEIGHT, BADGE_PAD = 14, 5  # the health badge, on the port's line
HEALTH_BADGES: dict[str, tuple[str, QColor]] = {  # a verdict's badge: its word and colour
    "failing": ("FAILING", QColor("#c62828")),
    "warn": ("WARN", QColor("#b7791f")),
}


def health_badge(health: HealthVerdict | None) -> tuple[str, QColor] | None:
    """The badge a disk's SMART verdict shows, its word and colour (FAILING, WARN); None when
    it shows none (ok, or not read). The map's tiles and the planner's chips alike."""
    return None if health is None else HEALTH_BADGES.get(health.level)


def draw_badge(painter: QPainter, rect: QRectF, word: str, colour: QColor, font: QFont) -> None:
    """A health badge: its word in white on its colour, in a rounded box (the map's tiles and
    the planner's chips alike)."""
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(colour)
    painter.drawRoundedRect(rect, 4, 4)
    painter.setFont(font)
    painter.setPen(QColor("white"))
    painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), word)


_REMEASURE = frozenset({QEvent.Type.FontChange, QEvent.Type.StyleChange})
_DIM = QPalette.ColorRole.PlaceholderText  # small and secondary lines
# a line as painted: where, its text elided to fit, bold, small, right-aligned, dimmed
_Line = tuple[QRect, str, bool, bool, bool, bool]
_FONTS: dict[tuple[str, bool, bool], tuple[QFont, QFontMetrics]] = {}
_WIDTHS: dict[tuple[str, bool, bool, str], int] = {}  # (font key, bold, small, text) -> width
_MAX_WIDTHS = 20_000


def _fonts(base: QFont, key: str, bold: bool, small: bool) -> tuple[QFont, QFontMetrics]:
    """A card's font for a line (bold, small) and its metrics, made once for all cards of one
    font (`key`, the base font's): a map of 480 cards made 16 a card each time it was
    measured and painted."""
    if (key, bold, small) not in _FONTS:
        font = QFont(base)
        if small:
            font.setPointSizeF(font.pointSizeF() * 0.85)
        font.setBold(bold)
        _FONTS[key, bold, small] = (font, QFontMetrics(font))
    return _FONTS[key, bold, small]


def card_width(font: QFont, slot: Slot) -> int:
    """The width a slot's card asks for in `font` (the map's, which its cards inherit): as
    wide as its longest line, the model's mostly. The map sizes its cards' grid with this
    before any card is built; each line's width is measured once for all cards (a map of one
    model's disks repeats its model, size and port texts hundreds of times)."""
    key = font.key()

    def advance(text: str, bold: bool, small: bool) -> int:
        width = _WIDTHS.get((key, bold, small, text))
        if width is None:
            if len(_WIDTHS) >= _MAX_WIDTHS:  # texts of many maps read in a long session
                _WIDTHS.clear()
            metrics = _fonts(font, key, bold, small)[1]
            width = _WIDTHS[key, bold, small, text] = metrics.horizontalAdvance(text)
        return width

    disk = slot.disk
    if disk is None:
        lines = [advance(slot.note or "empty", False, True)]
    else:  # the name with the size on its right; the model on a line of its own
        name = advance(disk.name, True, False)
        lines = [name + NAME_GAP + advance(size_text(slot), False, False)]
        lines.append(advance(model_text(slot), False, True))
    text = max(advance(slot.title, False, True), *lines)
    return max(TILE_SIZE.width(), TEXT_LEFT + text + TEXT_RIGHT + 1)


def size_text(slot: Slot) -> str:
    disk = slot.disk
    size = human_size(disk.size_bytes) if disk is not None else ""
    return size.replace("size unknown", "size ?")


def model_text(slot: Slot) -> str:
    return (slot.disk.model if slot.disk is not None else None) or "model unknown"


class SlotTile(QWidget):
    """One port or bay. Painted by hand: 48 of these must draw in a few milliseconds."""

    clicked = Signal(object)  # Slot

    def __init__(self, controller: Controller, slot: Slot, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.slot = slot
        self.selected = False
        self.matches = True
        self.planned = False
        self.health: HealthVerdict | None = None  # the disk's SMART verdict, once read
        self._hint: QSize | None = None
        self._font_key: str | None = None  # its font's, until a font or style change
        self._laid: tuple[tuple[int, str | None, str | None], list[_Line]] | None = None
        self.setFixedHeight(TILE_SIZE.height())
        self.setMinimumWidth(TILE_MIN_WIDTH)  # elided below its text's width
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._describe()

    def set_health(self, health: HealthVerdict | None) -> None:
        """The disk's verdict: its badge, tooltip and accessible name follow."""
        if health != self.health:
            self.health = health
            self._describe()
            self.update()

    @property
    def badge(self) -> str | None:
        """The badge's word as drawn (FAILING, WARN), None when the disk shows none."""
        shown = health_badge(self.health) if self.slot.disk is not None else None
        return shown[0] if shown else None

    def _describe(self) -> None:
        disk, slot = self.slot.disk, self.slot
        health = f", health {self.badge.lower()}" if self.badge else ""
        self.setAccessibleName(
            f"{slot.title}: {disk.name} {human_size(disk.size_bytes)} {disk.state.value}{health}"
            if disk
            else f"{slot.title}: {slot.note or 'empty'}"
        )
        self.setToolTip(self._tooltip())

    def _tooltip(self) -> str:
        disk, slot = self.slot.disk, self.slot
        # the port in brackets only when a label or bay names the slot otherwise
        where = slot.title if slot.title == slot.port else f"{slot.title} ({slot.port})"
        if disk is None:
            return f"{where}: {slot.note or 'empty'}"
        lines = [
            f"{disk.name} in {where}",
            f"{disk.model or 'model unknown'}, {human_size(disk.size_bytes)}",
            f"serial {disk.serial or 'unknown'}",
        ]
        lines += list(disk.system_reasons)
        if self.health is not None and self.badge:
            lines += [f"health {self.health.level}:", *(f"  {r}" for r in self.health.reasons)]
        return "\n".join(lines)

    def sizeHint(self) -> QSize:
        """As wide as its longest line, the model's mostly: elided only when out of room.
        Measured once (layouts ask often), again after a change of font or style."""
        if self._hint is None:
            self._hint = QSize(card_width(self.font(), self.slot), TILE_SIZE.height())
        return self._hint

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in _REMEASURE:
            self._hint, self._font_key = None, None
        super().changeEvent(event)

    def _lines(self) -> list[_Line]:
        """Its lines as painted, each elided to its room: laid out once for a width, badge
        and font (a map repaints its cards as it scrolls and as the pointer moves)."""
        self._fonts(False, False)  # its font's key known from here on
        key = (self.width(), self.badge, self._font_key)
        if self._laid is None or self._laid[0] != key:
            lines = self._disk_lines() if self.slot.disk is not None else self._empty_lines()
            self._laid = (key, lines)
        return self._laid[1]

    def _empty_lines(self) -> list[_Line]:
        """An empty port's: its title, and what is (not) there."""
        width = self.width() - 14
        note = self.slot.note
        return [
            self._line(QRect(10, 6, width, 16), self.slot.title, False, True),
            self._line(QRect(10, 26, width, 34), note or "empty", False, bool(note), dim=True),
        ]

    def _line(
        self,
        rect: QRect,
        text: str,
        bold: bool,
        small: bool,
        right: bool = False,
        dim: bool = False,
    ) -> _Line:
        metrics = self._font(bold=bold, small=small)
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, rect.width())
        return (rect, shown, bold, small, right, dim)

    def _disk_lines(self) -> list[_Line]:
        """A disk's lines: its port, its size on the right of its name, and its model on a
        line of its own."""
        disk = self.slot.disk
        if disk is None:
            return []
        width = self.width() - TEXT_LEFT - TEXT_RIGHT
        lines: list[_Line] = []

        def line(rect: QRect, text: str, bold: bool, small: bool, right: bool = False) -> int:
            lines.append(self._line(rect, text, bold, small, right))
            return self._font(bold=bold, small=small).horizontalAdvance(lines[-1][1])

        badge = self._badge_width()
        line(
            QRect(TEXT_LEFT, 4, width - (badge + 4 if badge else 0), 15),
            self.slot.title,
            False,
            True,
        )
        size = line(QRect(TEXT_LEFT, 19, width, 18), size_text(self.slot), False, False, True)
        line(QRect(TEXT_LEFT, 19, max(0, width - size - NAME_GAP), 18), disk.name, True, False)
        line(QRect(TEXT_LEFT, 40, width, 18), model_text(self.slot), False, True)
        return lines

    def _badge_width(self) -> int:
        word = self.badge
        if word is None:
            return 0
        return self._badge_font_metrics().horizontalAdvance(word) + 2 * BADGE_PAD

    def _badge_font(self) -> QFont:
        font = QFont(self._text_font(bold=True, small=True))  # a copy: that one is shared
        font.setPointSizeF(font.pointSizeF() * 0.9)
        return font

    def _badge_font_metrics(self) -> QFontMetrics:
        return QFontMetrics(self._badge_font())

    def _paint_badge(self, painter: QPainter) -> None:
        shown = health_badge(self.health) if self.slot.disk is not None else None
        if shown is None:
            return
        word, colour = shown
        width = self._badge_width()
        rect = QRectF(self.width() - TEXT_RIGHT - width, 4, width, BADGE_HEIGHT)
        draw_badge(painter, rect, word, colour, self._badge_font())

    def shown_texts(self) -> list[str]:
        """A disk's lines as the tile draws them: elided ("HITAC…") when out of room."""
        return [text for _rect, text, *_style in self._lines()] if self.slot.disk else []

    def _font(self, *, bold: bool, small: bool) -> QFontMetrics:
        return self._fonts(bold, small)[1]

    def _text_font(self, *, bold: bool = False, small: bool = False) -> QFont:
        return self._fonts(bold, small)[0]

    def _fonts(self, bold: bool, small: bool) -> tuple[QFont, QFontMetrics]:
        if self._font_key is None:
            self._font_key = self.font().key()
        found = _FONTS.get((self._font_key, bold, small))
        return found if found is not None else _fonts(self.font(), self._font_key, bold, small)

    @property
    def state_key(self) -> str | None:
        if self.slot.disk is None:
            return None
        return PLANNED if self.planned else self.slot.disk.state.value

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if not self.matches:
            painter.setOpacity(0.28)
        palette = self.palette()
        box = QRectF(self.rect()).adjusted(1.5, 1.5, -1.5, -1.5)
        disk = self.slot.disk
        border = palette.color(QPalette.ColorRole.Mid)
        if disk is None:
            dashes = palette.color(QPalette.ColorRole.PlaceholderText)
            painter.setPen(QPen(dashes, 1.2, Qt.PenStyle.DashLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(box, 6, 6)
        else:
            painter.setPen(QPen(border, 1))
            painter.setBrush(palette.color(QPalette.ColorRole.Base))
            painter.drawRoundedRect(box, 6, 6)
            colour = STATE_COLORS.get(self.state_key or "", QColor("gray"))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawRoundedRect(QRectF(box.x(), box.y(), 7, box.height()), 3, 3)
        for rect, text, bold, small, right, dim in self._lines():
            painter.setFont(self._text_font(bold=bold, small=small))
            dimmed = dim or small
            painter.setPen(palette.color(_DIM if dimmed else QPalette.ColorRole.Text))
            align = Qt.AlignmentFlag.AlignRight if right else Qt.AlignmentFlag.AlignLeft
            painter.drawText(rect, int(align | Qt.AlignmentFlag.AlignVCenter), text)
        if disk is not None:
            self._paint_badge(painter)
        if self.selected or self.hasFocus():
            pen = QPen(palette.color(QPalette.ColorRole.Highlight), 2.5 if self.selected else 1.5)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(box.adjusted(0.5, 0.5, -0.5, -0.5), 6, 6)
        painter.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.setFocus(Qt.FocusReason.MouseFocusReason)
            self.clicked.emit(self.slot)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.clicked.emit(self.slot)
        else:
            super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        self.update()
        super().focusInEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        self.update()
        super().focusOutEvent(event)
